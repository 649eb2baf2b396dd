//go:build unix && !aix && !solaris

package dirlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAcquire(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "data") // created by Acquire
	first, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, lockName))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("LOCK holds %q (%v), want our pid", b, err)
	}

	// A second open file description conflicts even within one process.
	second, err := Acquire(dir)
	if !errors.Is(err, ErrLocked) || second != nil {
		t.Fatalf("second Acquire = %v, %v; want ErrLocked", second, err)
	}
	if !strings.Contains(err.Error(), "in use by another process") || !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q should say the data directory %s is in use by another process", err, dir)
	}

	if err := first.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	third, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	if err := third.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestAcquireIndependentDirs(t *testing.T) {
	a, err := Acquire(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := Acquire(t.TempDir())
	if err != nil {
		t.Fatalf("lock on another dir: %v", err)
	}
	b.Release()
}
