//go:build !unix || aix || solaris

package dirlock

import "errors"

// Lock is a held directory lock.
type Lock struct{}

// Acquire is not supported on this platform (no flock(2) in package syscall).
func Acquire(dir string) (*Lock, error) {
	return nil, errors.New("dirlock: not supported on this platform")
}

// Release does nothing.
func (l *Lock) Release() error { return nil }
