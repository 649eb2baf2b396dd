// Package waltest provides a wal.FS that fails on demand, for tests of
// what the log and the store do when the disk fills up or an fsync fails.
package waltest

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/svcrun/svc/runtime/store/wal"
)

// ErrNoSpace is the error injected writes fail with: ENOSPC, as a full
// disk reports it.
var ErrNoSpace error = syscall.ENOSPC

// FaultFS is the operating system's file system with failures injected:
// while FailWrites is set, every write to a file writes half its bytes
// and fails (a full disk's short write); while FailSyncs is set, every
// fsync or fdatasync fails after the data reached the page cache.
type FaultFS struct {
	wal.OSFS
	mu           sync.Mutex
	write, fsync error
	writes       int // failed writes so far
	syncs        int // failed syncs so far
}

// New returns a FaultFS that fails nothing yet.
func New() *FaultFS { return &FaultFS{} }

// FailWrites makes every later write fail with err (nil: succeed again).
func (fs *FaultFS) FailWrites(err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.write = err
}

// FailSyncs makes every later fsync fail with err (nil: succeed again).
func (fs *FaultFS) FailSyncs(err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.fsync = err
}

// Failures returns how many writes and syncs failed so far.
func (fs *FaultFS) Failures() (writes, syncs int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.writes, fs.syncs
}

func (fs *FaultFS) writeErr(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.write == nil {
		return nil
	}
	fs.writes++
	return &os.PathError{Op: "write", Path: name, Err: fs.write}
}

func (fs *FaultFS) syncErr(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.fsync == nil {
		return nil
	}
	fs.syncs++
	return &os.PathError{Op: "fsync", Path: name, Err: fs.fsync}
}

// OpenFile implements wal.FS.
func (fs *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (wal.File, error) {
	f, err := fs.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, name: name}, nil
}

// SyncDir implements wal.FS.
func (fs *FaultFS) SyncDir(dir string) error {
	if err := fs.syncErr(dir); err != nil {
		return err
	}
	return fs.OSFS.SyncDir(dir)
}

type file struct {
	wal.File
	fs   *FaultFS
	name string
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.fs.writeErr(f.name); err != nil {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, err
	}
	return f.File.Write(p)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.writeErr(f.name); err != nil {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, err
	}
	return f.File.WriteAt(p, off)
}

func (f *file) Sync() error {
	if err := f.fs.syncErr(f.name); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *file) Datasync() error {
	if err := f.fs.syncErr(f.name); err != nil {
		return err
	}
	return f.File.Datasync()
}

// String names the faults in force, for test messages.
func (fs *FaultFS) String() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fmt.Sprintf("faultfs(write: %v, sync: %v)", fs.write, fs.fsync)
}
