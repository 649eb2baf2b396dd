package disk

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/svcrun/svc/runtime/store/dirlock"
)

// load opens dir and returns every record Load replays.
func load(t *testing.T, dir string) (*Backend, []string) {
	t.Helper()
	d, err := Open(Options{Dir: dir, SnapshotBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := d.Load(func(p []byte) error { got = append(got, string(p)); return nil }); err != nil {
		t.Fatal(err)
	}
	return d, got
}

// TestCommitSnapshotLoad: revisions grow with the records committed; a
// snapshot plus the log after it give back exactly what was committed.
func TestCommitSnapshotLoad(t *testing.T) {
	dir := t.TempDir()
	d, got := load(t, dir)
	if len(got) != 0 {
		t.Fatalf("a new directory replays %q", got)
	}
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, dirlock.ErrLocked) {
		t.Fatalf("second Open = %v, want dirlock.ErrLocked", err)
	}
	var want []string
	commit := func(n int) {
		var batch [][]byte
		for range n {
			p := fmt.Sprintf("record %d", len(want))
			want = append(want, p)
			batch = append(batch, []byte(p))
		}
		rev, err := d.Commit(batch)
		if err != nil || rev != uint64(len(want)) {
			t.Fatalf("Commit = %d, %v; want revision %d", rev, err, len(want))
		}
	}
	commit(3)
	if !d.SnapshotDue(64) {
		t.Fatal("SnapshotDue(64) = false with SnapshotBytes 64")
	}
	snap := slices.Clone(want)
	d.Snapshot(func(add func([]byte) error) error {
		for _, p := range snap {
			if err := add([]byte(p)); err != nil {
				return err
			}
		}
		return nil
	})
	commit(2) // after the cut: in the log only
	d.Wait()
	if d.SnapshotDue(0) {
		t.Error("a snapshot is due right after one")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, got = load(t, dir)
	defer d.Close()
	if !slices.Equal(got, want) {
		t.Fatalf("Load after a snapshot = %q, want %q", got, want)
	}
}
