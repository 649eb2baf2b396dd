//go:build unix && !aix && !solaris

package etcdtest

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path, waiting for it, and returns
// its release. Test binaries of several packages (go test ./...) build
// etcd once under it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing releases the lock
}
