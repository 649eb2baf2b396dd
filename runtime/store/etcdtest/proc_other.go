//go:build !linux

package etcdtest

import "syscall"

// sysProcAttr: members outlive a test binary that dies without its
// cleanups on this platform (no parent-death signal).
func sysProcAttr() *syscall.SysProcAttr { return nil }
