package disk

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// TestLoadDeliversEachKeysLastRecord: with Options.Key, Load hands apply
// only the last record of each key, whether the snapshot or the log holds
// it, and still every record without it.
func TestLoadDeliversEachKeysLastRecord(t *testing.T) {
	key := func(p []byte) ([]byte, error) {
		k, _, ok := bytes.Cut(p, []byte("="))
		if !ok {
			return nil, fmt.Errorf("no key in %q", p)
		}
		return k, nil
	}
	loadKeyed := func(t *testing.T, dir string) []string {
		t.Helper()
		d, err := Open(Options{Dir: dir, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var got []string
		if err := d.Load(func(p []byte) error { got = append(got, string(p)); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	commit := func(t *testing.T, d *Backend, ps ...string) {
		t.Helper()
		var batch [][]byte
		for _, p := range ps {
			batch = append(batch, []byte(p))
		}
		if _, err := d.Commit(batch); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("snapshot and log", func(t *testing.T) {
		dir := t.TempDir()
		d, _ := load(t, dir)
		commit(t, d, "a=1", "b=1", "c=1")
		d.Snapshot(func(add func([]byte) error) error {
			for _, p := range []string{"a=1", "b=1", "c=1"} {
				if err := add([]byte(p)); err != nil {
					return err
				}
			}
			return nil
		})
		commit(t, d, "a=2", "a=3")
		commit(t, d, "d=1", "c=removed")
		d.Wait()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		want := []string{"b=1", "a=3", "d=1", "c=removed"}
		if got := loadKeyed(t, dir); !slices.Equal(got, want) {
			t.Errorf("Load with Key = %q, want %q", got, want)
		}
		d, all := load(t, dir)
		d.Close()
		if want := []string{"a=1", "b=1", "c=1", "a=2", "a=3", "d=1", "c=removed"}; !slices.Equal(all, want) {
			t.Errorf("Load without Key = %q, want %q", all, want)
		}
	})
	t.Run("log only", func(t *testing.T) {
		dir := t.TempDir()
		d, _ := load(t, dir)
		commit(t, d, "a=1", "b=1", "a=2")
		commit(t, d, "b=2", "a=3", "e=1")
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := loadKeyed(t, dir), []string{"b=2", "a=3", "e=1"}; !slices.Equal(got, want) {
			t.Errorf("Load with Key = %q, want %q", got, want)
		}
	})
	t.Run("a key error stops the load", func(t *testing.T) {
		dir := t.TempDir()
		d, _ := load(t, dir)
		commit(t, d, "a=1", "garbage")
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		d, err := Open(Options{Dir: dir, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		err = d.Load(func([]byte) error { return nil })
		if err == nil || !strings.Contains(err.Error(), `no key in "garbage"`) {
			t.Fatalf("Load = %v, want the key error", err)
		}
	})
}
