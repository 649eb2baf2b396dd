//go:build !unix || aix || solaris

package etcdtest

// lockFile does not lock where package syscall has no flock: concurrent
// builds may both run, and the rename into place keeps the file whole.
func lockFile(path string) (unlock func(), err error) { return func() {}, nil }
