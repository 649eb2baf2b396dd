package etcdtest

import "syscall"

// sysProcAttr has the kernel kill a member if the test binary dies without
// its cleanups (a panic, go test's -timeout), so no etcd outlives its
// test holding ports. The signal comes when the thread that started the
// member exits; Go's runtime ends threads only for goroutines that exit
// locked to theirs (runtime.LockOSThread), which tests using this package
// should not do.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
