//go:build unix && !aix && !solaris

package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

const lockName = "LOCK"

// Lock is a held directory lock.
type Lock struct {
	mu sync.Mutex
	f  *os.File // nil once released
}

// Acquire creates dir if needed and takes an exclusive, non-blocking lock on
// dir/LOCK. If another holder has it, the error wraps [ErrLocked].
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("dirlock: %w", err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("dirlock: %w", err)
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := ""
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid := strings.TrimSpace(string(b)); pid != "" {
					holder = " (pid " + pid + ")"
				}
			}
			return nil, fmt.Errorf("dirlock: data directory %s is in use by another process%s: %w", dir, holder, ErrLocked)
		}
		return nil, fmt.Errorf("dirlock: lock %s: %w", path, err)
	}
	// Best effort: the PID only makes the error above more helpful.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release drops the lock. Releasing twice is a no-op.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Closing the only descriptor of the open file description releases
	// the flock; unlocking first makes that explicit.
	uerr := flock(f, syscall.LOCK_UN)
	cerr := f.Close()
	if err := errors.Join(uerr, cerr); err != nil {
		return fmt.Errorf("dirlock: release: %w", err)
	}
	return nil
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if ferr != nil {
		return os.NewSyscallError("flock", ferr)
	}
	return nil
}
