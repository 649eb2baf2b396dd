//go:build linux

package wal

import (
	"os"
	"syscall"
)

// datasync flushes f's data and the metadata needed to read it back (the
// file size), skipping timestamps: cheaper than fsync for an append.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return os.NewSyscallError("fdatasync", err)
			}
			return nil
		}
	}
}
