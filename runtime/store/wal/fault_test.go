package wal_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/svcrun/svc/runtime/store/wal"
	"github.com/svcrun/svc/runtime/store/wal/waltest"
)

// A failed write or fsync fails the append and leaves nothing of it: the
// log truncates back to its last good record (at once, or at the next
// Append or Probe if the truncation fails too), moves to a new file, and
// a reopen replays exactly the acknowledged records, numbered without a
// gap.
func TestAppendFailureLeavesNothing(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprint("prealloc=", prealloc), func(t *testing.T) {
			dir := t.TempDir()
			fs := waltest.New()
			l, err := wal.Open(dir, wal.Options{FS: fs, Preallocate: prealloc})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			add := func(p string) error {
				_, _, err := l.Append([][]byte{[]byte(p)})
				if err == nil {
					want = append(want, p)
				}
				return err
			}
			if err := add("a"); err != nil {
				t.Fatal(err)
			}
			fs.FailWrites(waltest.ErrNoSpace)
			if err := add("lost-write"); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append with failing writes = %v, want ENOSPC", err)
			}
			if err := l.Probe(1 << 10); err == nil {
				t.Fatal("Probe succeeded with failing writes")
			}
			fs.FailWrites(nil)
			if err := add("b"); err != nil {
				t.Fatalf("append after the fault cleared: %v", err)
			}
			fs.FailSyncs(syscall.EIO)
			if err := add("lost-sync"); !errors.Is(err, syscall.EIO) {
				t.Fatalf("append with failing fsync = %v, want EIO", err)
			}
			if err := add("lost-sync-2"); !errors.Is(err, syscall.EIO) {
				t.Fatalf("append while the repair fails = %v, want EIO", err)
			}
			fs.FailSyncs(nil)
			if err := l.Probe(1 << 10); err != nil {
				t.Fatalf("Probe after the fault cleared: %v", err)
			}
			if err := add("c"); err != nil {
				t.Fatalf("append after the fault cleared: %v", err)
			}
			if w, s := fs.Failures(); w == 0 || s == 0 {
				t.Fatalf("faults injected: %d writes, %d syncs; want both", w, s)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l, err = wal.Open(dir, wal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var got []string
			next := uint64(1)
			if err := l.Replay(0, func(seq uint64, p []byte) error {
				if seq != next {
					return fmt.Errorf("record %q has seq %d, want %d", p, seq, next)
				}
				next++
				got = append(got, string(p))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("replayed %q, want %q", got, want)
			}
		})
	}
}
