package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/store/wal/waltest"
)

// A failed log write or fsync fails its batch with an *UnavailableError:
// readers never see the batch, the store reports itself unhealthy and
// refuses writes, then resumes by itself once the disk works again; a
// reopen replays exactly the acknowledged writes, whether the store
// recovered before it closed or not.
func TestLogFaultRefusesThenRecovers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		inject  func(fs *waltest.FaultFS, err error)
		err     error
		noSpace bool
	}{
		{"write", (*waltest.FaultFS).FailWrites, waltest.ErrNoSpace, true},
		{"fsync", (*waltest.FaultFS).FailSyncs, syscall.EIO, false},
	} {
		for _, recoverFirst := range []bool{true, false} {
			name := tc.name
			if !recoverFirst {
				name += "/closed-while-failing"
			}
			t.Run(name, func(t *testing.T) {
				m := storetest.PersonModel()
				dir := t.TempDir()
				fs := waltest.New()
				s, err := store.Open(store.Options{Dir: dir, WALFS: fs, LogRetry: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.Register(ctx, m); err != nil {
					t.Fatal(err)
				}
				kept, err := s.Create(ctx, m, teamPerson("kept", "x"))
				if err != nil {
					t.Fatal(err)
				}

				tc.inject(fs, tc.err)
				_, err = s.Create(ctx, m, teamPerson("lost", "x"))
				var ue *store.UnavailableError
				if !errors.As(err, &ue) || !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, tc.err) || ue.NoSpace != tc.noSpace || ue.RetryAfterSeconds() != 1 {
					t.Fatalf("create with a failing %s = %v, want an *UnavailableError of %v (noSpace %v)", tc.name, err, tc.err, tc.noSpace)
				}
				if _, err := s.Get(ctx, m, "lost"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Get(lost) = %v, want not found", err)
				}
				if res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); err != nil || names(res) != "kept" {
					t.Errorf("list = %s, %v; want kept", names(res), err)
				}
				if s.Health() == nil {
					t.Error("Health() = nil while the log fails")
				}
				// Writes are refused while the disk fails, without trying it.
				u := decode(t, kept)
				u.Spec.Age = storetest.Int64(1)
				if _, err := s.Update(ctx, m, u); !errors.Is(err, store.ErrUnavailable) {
					t.Fatalf("update while failing = %v, want unavailable", err)
				}
				if !recoverFirst {
					s.Close()
					checkReopen(t, dir, "kept", 0)
					return
				}

				tc.inject(fs, nil)
				deadline := time.Now().Add(10 * time.Second)
				for s.Health() != nil {
					if time.Now().After(deadline) {
						t.Fatalf("still unhealthy 10 s after the fault cleared: %v", s.Health())
					}
					time.Sleep(5 * time.Millisecond)
				}
				u = decode(t, kept) // the refused update set its version
				u.Spec.Age = storetest.Int64(1)
				if _, err := s.Update(ctx, m, u); err != nil {
					t.Fatalf("update after recovery: %v", err)
				}
				if _, err := s.Create(ctx, m, teamPerson("later", "x")); err != nil {
					t.Fatalf("create after recovery: %v", err)
				}
				if res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); err != nil || names(res) != "later,kept" {
					t.Errorf("list after recovery = %s, %v; want later,kept", names(res), err)
				}
				s.Close()
				checkReopen(t, dir, "later,kept", 1)
			})
		}
	}
}

// checkReopen opens dir afresh and checks it holds the objects want (in
// list order) and kept's version.
func checkReopen(t *testing.T, dir string, want string, keptVersion int64) {
	t.Helper()
	pm := storetest.PersonModel()
	s := storetest.Open(t, store.Options{Dir: dir}, pm)
	res, err := s.List(ctx, pm, mustQuery(t, ""))
	if err != nil || names(res) != want {
		t.Fatalf("after reopen: %s, %v; want %s", names(res), err, want)
	}
	if r, err := s.Get(ctx, pm, "kept"); err != nil || r.Version != keptVersion {
		t.Fatalf("kept after reopen: %v, %v; want version %d", r, err, keptVersion)
	}
}

// A snapshot that cannot be written (here: its directory is a file) is
// logged and leaves the store taking writes.
func TestFailedSnapshotKeepsServing(t *testing.T) {
	m := storetest.PersonModel()
	dir := t.TempDir()
	s := storetest.Open(t, store.Options{Dir: dir}, m)
	snaps := filepath.Join(dir, "snapshots")
	if err := os.RemoveAll(snaps); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snaps, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, teamPerson("a", "x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, teamPerson("b", "x")); err != nil {
		t.Fatalf("create after a failed snapshot: %v", err)
	}
	if err := s.Health(); err != nil {
		t.Fatalf("Health after a failed snapshot = %v", err)
	}
}
