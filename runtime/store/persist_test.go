package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/dirlock"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/store/wal"
)

// dump lists every object as name@version:data, in name order.
func dump(t *testing.T, s *store.Store, m *model.Model) []string {
	t.Helper()
	res, err := s.List(ctx, m, mustQuery(t, "sort=name,asc"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Items {
		out = append(out, fmt.Sprintf("%s@%d:%s", r.Name, r.Version, r.Data))
	}
	return out
}

func TestReopenRestoresEveryWrite(t *testing.T) {
	for _, snapshotBytes := range []int64{64 << 20, 2 << 10} { // never vs often
		t.Run(fmt.Sprint("snapshot-every-", snapshotBytes), func(t *testing.T) {
			dir := t.TempDir()
			opts := store.Options{Dir: dir, SnapshotBytes: snapshotBytes, SegmentBytes: 4 << 10}
			m := storetest.PersonModel()
			s, err := store.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Register(ctx, m); err != nil {
				t.Fatal(err)
			}
			for i := range 60 {
				p := storetest.NewPerson(fmt.Sprintf("p%02d", i), Spec{Name: "x", Email: fmt.Sprintf("p%d@example.com", i)})
				if i%3 == 0 {
					p.Metadata.Finalizers = []string{"example.com/keep"}
				}
				if _, err := s.Create(ctx, m, p); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 60; i += 2 {
				if _, err := s.Delete(ctx, m, fmt.Sprintf("p%02d", i)); err != nil {
					t.Fatal(err)
				}
			}
			rec, _ := s.Get(ctx, m, "p01")
			p := decode(t, rec)
			p.Spec.Age = storetest.Int64(5)
			if _, err := s.Update(ctx, m, p); err != nil {
				t.Fatal(err)
			}
			before := dump(t, s, m)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if snapshotBytes < 1<<20 {
				snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*.snap"))
				if len(snaps) == 0 || len(snaps) > 2 {
					t.Fatalf("snapshots = %v, want one or two (older ones pruned)", snaps)
				}
				// Besides snapshot cuts, the log moves into each prepared
				// (preallocated) file as it becomes ready.
				segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
				if len(segs) > 5 {
					t.Errorf("%d log segments left: the log was not truncated after snapshots", len(segs))
				}
			}
			s2, err := store.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			m2 := storetest.PersonModel()
			if err := s2.Register(ctx, m2); err != nil {
				t.Fatal(err)
			}
			after := dump(t, s2, m2)
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Fatalf("restored state differs:\nbefore %d objects\nafter  %d objects", len(before), len(after))
			}
			if len(after) != 40 {
				t.Fatalf("restored %d objects, want 40 (30 kept + 10 deleting with finalizers)", len(after))
			}
		})
	}
}

// TestReopenRestoresManyBatches: a restore of several loader batches, from
// a snapshot and the log after it, puts and removals interleaved, gives
// back exactly what was acknowledged.
func TestReopenRestoresManyBatches(t *testing.T) {
	dir := t.TempDir()
	opts := store.Options{Dir: dir, SnapshotBytes: 512 << 10}
	m := storetest.PersonModel()
	s := storetest.Open(t, opts, m)
	const n = 2500 // 2.5 loader batches
	for i := range n {
		if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("p%04d", i), Spec{Name: "x"})); err != nil {
			t.Fatal(err)
		}
		if i%3 == 2 { // removed for good: no finalizers
			if _, err := s.Delete(ctx, m, fmt.Sprintf("p%04d", i-1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := dump(t, s, m)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*.snap")); len(snaps) == 0 {
		t.Fatal("no snapshot was written: the restore would not read one")
	}
	m2 := storetest.PersonModel()
	s2 := storetest.Open(t, opts, m2)
	after := dump(t, s2, m2)
	if len(after) != n-n/3 || fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("restored %d objects, want the %d acknowledged, identical", len(after), len(before))
	}
}

func TestSecondProcessCannotOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := store.Open(store.Options{Dir: dir}); !errors.Is(err, dirlock.ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
}

func TestDamagedLogIsAStartupError(t *testing.T) {
	dir := t.TempDir()
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{Dir: dir}, m)
	for i := range 5 {
		if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("p%d", i), Spec{Name: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// The log may have moved to a preallocated segment after any record:
	// damage the first, which holds record 1 and is followed by others.
	segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if len(segs) == 0 {
		t.Fatalf("no segments in %s", dir)
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[40] ^= 0xff // inside the first record, with valid records after it
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(store.Options{Dir: dir})
	var ce *wal.CorruptError
	if !errors.As(err, &ce) || ce.File != segs[0] {
		t.Fatalf("Open = %v, want a *wal.CorruptError naming %s", err, segs[0])
	}
}

// TestFailedLogAppendLeavesNothingBehind: when the log cannot take a batch,
// its writes fail, readers never see them (memdb and the index trees are
// rolled back), and the store refuses later writes.
func TestFailedLogAppendLeavesNothingBehind(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	if _, err := s.Create(ctx, m, teamPerson("kept", "x")); err != nil {
		t.Fatal(err)
	}
	if err := s.BreakLogForTest(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, teamPerson("lost", "x")); err == nil {
		t.Fatal("create succeeded with a closed log")
	}
	if _, err := s.Get(ctx, m, "lost"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(lost) = %v, want not found", err)
	}
	res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx&fieldSelector=spec.email%3Dlost@example.com"))
	if err != nil || res.Total != 0 {
		t.Errorf("list after the failed batch = %d, %v; want nothing of it", res.Total, err)
	}
	if res, _ := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); names(res) != "kept" {
		t.Errorf("list = %s, want kept", names(res))
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson("later", Spec{Name: "x"})); err == nil {
		t.Error("a later write succeeded after the log failed")
	}
}

// TestFailedApplyRefusesWritesUntilRestart: when applying a batch fails
// after the batch went to the log (a bug: memdb refusing a write the batch
// decided), its writer gets the error, readers never see the batch, and
// the store refuses every later write. A restart recovers from the log,
// which holds the batch: like any write answered with an error, its
// outcome is unknown until then.
func TestFailedApplyRefusesWritesUntilRestart(t *testing.T) {
	m := storetest.PersonModel()
	opts := store.Options{Dir: t.TempDir()}
	s := storetest.Open(t, opts, m)
	if _, err := s.Create(ctx, m, teamPerson("kept", "x")); err != nil {
		t.Fatal(err)
	}
	bug := errors.New("memdb refused the write")
	s.FailNextApplyForTest(bug)
	if _, err := s.Create(ctx, m, teamPerson("lost", "x")); !errors.Is(err, bug) {
		t.Fatalf("create with a failing apply = %v, want %v", err, bug)
	}
	if _, err := s.Get(ctx, m, "lost"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(lost) = %v, want not found", err)
	}
	if res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); err != nil || names(res) != "kept" {
		t.Errorf("list = %s, %v; want kept", names(res), err)
	}
	if _, err := s.Create(ctx, m, teamPerson("later", "x")); !errors.Is(err, bug) {
		t.Errorf("a later write = %v, want it refused with %v", err, bug)
	}
	if err := s.Close(); err != nil {
		t.Logf("close after the failure: %v", err)
	}

	s2 := storetest.Open(t, opts, m)
	res, err := s2.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx"))
	if err != nil || names(res) != "kept,lost" && names(res) != "lost,kept" {
		t.Errorf("after restart, list = %s, %v; want kept and the logged lost", names(res), err)
	}
	if _, err := s2.Create(ctx, m, teamPerson("later", "x")); err != nil {
		t.Errorf("after restart, create = %v", err)
	}
}

// TestSnapshotsWaitForTheLogToMatchThem: after a snapshot the log must grow
// to that snapshot's size before the next, so a large store is not
// rewritten whole each time SnapshotBytes of log fill up.
func TestSnapshotsWaitForTheLogToMatchThem(t *testing.T) {
	// slog serialises the store goroutines' writes; the buffer is read
	// only after Close, which waits for them.
	var logs bytes.Buffer
	opts := store.Options{
		Dir:           t.TempDir(),
		SnapshotBytes: 4 << 10,
		Logger:        slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	s, err := store.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	m := storetest.PersonModel()
	if err := s.Register(ctx, m); err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		p := storetest.NewPerson(fmt.Sprintf("p%03d", i), Spec{Name: strings.Repeat("x", 90), Tags: []string{strings.Repeat("t", 60), strings.Repeat("u", 60), strings.Repeat("v", 60)}, Email: fmt.Sprintf("p%d@example.com", i)})
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	type written struct {
		Msg     string
		Seq     uint64
		Objects uint64
	}
	var snaps []written
	for line := range strings.Lines(logs.String()) {
		var w written
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			t.Fatal(err)
		}
		if w.Msg == "snapshot written" {
			snaps = append(snaps, w)
		}
	}
	// 400 records of ~0.5 KB pass 4 KiB many times over; sizes double
	// from one snapshot to the next, so only a handful are written.
	if len(snaps) < 3 || len(snaps) > 9 {
		t.Fatalf("%d snapshots written, want 3 to 9: %+v", len(snaps), snaps)
	}
	for i := 1; i < len(snaps); i++ {
		// Every object is one log record of a snapshot record's size.
		if logged := snaps[i].Seq - snaps[i-1].Seq; logged < snaps[i-1].Objects*9/10 {
			t.Errorf("snapshot %d came %d records after one of %d objects", i, logged, snaps[i-1].Objects)
		}
	}

	// A restart remembers the newest snapshot's size and the log's.
	var again bytes.Buffer
	opts.Logger = slog.New(slog.NewJSONHandler(&again, nil))
	s, err = store.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register(ctx, m); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		p := storetest.NewPerson(fmt.Sprintf("q%03d", i), Spec{Name: "again"})
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Snapshot(); err != nil { // waits for any snapshot running
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(again.String(), `"msg":"snapshot written"`); n != 1 {
		t.Errorf("after a restart and 20 small writes, %d snapshots were written, want only the one asked for", n)
	}
}

// Load starts nothing: writes wait for Start and fail loudly before it,
// and a store closed without starting releases its directory.
func TestLoadThenStart(t *testing.T) {
	dir := t.TempDir()
	m := storetest.PersonModel()
	s, err := store.Load(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register(ctx, m); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("Register before Start = %v, want a not-started error", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close without Start = %v", err)
	}
	s, err = store.Load(store.Options{Dir: dir})
	if err != nil {
		t.Fatalf("Load after a Close without Start = %v", err)
	}
	defer s.Close()
	s.Start()
	s.Start() // a second call does nothing
	if err := s.Register(ctx, m); err != nil {
		t.Fatalf("Register after Start = %v", err)
	}
}
