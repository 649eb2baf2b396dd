package wal

import (
	"fmt"
	"os"
	"path/filepath"
)

// FS is the file system the log writes through: every write, fsync,
// truncation, rename and removal goes through it, so that tests can make
// them fail as a full or failing disk does. Open and Replay read with the
// os package directly. Options.FS nil means the operating system's.
type FS interface {
	// OpenFile opens a file for writing, as os.OpenFile.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	// SyncDir makes dir's entries (created, renamed, removed files)
	// durable.
	SyncDir(dir string) error
}

// File is the part of *os.File the log writes through.
type File interface {
	Write(p []byte) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Truncate(size int64) error
	// Sync flushes the file's data and metadata (fsync).
	Sync() error
	// Datasync flushes its data and the metadata needed to read it back
	// (fdatasync where there is one).
	Datasync() error
	Close() error
}

// OSFS is the operating system's file system.
type OSFS struct{}

// OpenFile implements FS.
func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// SyncDir implements FS.
func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return d.Close()
}

type osFile struct{ *os.File }

func (f osFile) Datasync() error { return datasync(f.File) }

// probeName is the scratch file Probe writes. It does not end in .wal, so
// a crash leaves it ignored (and Open removes it).
const probeName = "probe.tmp"

// failed records err, the failure of an append, as the log's and repairs
// at once: the batch's bytes (a short write, or a whole one whose fsync
// failed) must not outlive the error its writers get, or a restart would
// replay a batch they were told failed. A repair that fails now is
// retried by the next Append or Probe.
func (l *Log) failed(err error) error {
	l.err = err
	if rerr := l.repairLocked(); rerr != nil {
		l.logger.Error("wal: repair after a failed append", "err", rerr)
	}
	return err
}

// repairLocked truncates the active segment back to its last good
// record, makes that durable, and moves appends to a new file: a new
// segment, or the same name opened afresh if the segment holds no
// record. Every record before the truncation point was fsynced when it
// was appended, so the log holds exactly what Append acknowledged. It
// clears l.err on success. Called with l.mu held.
func (l *Log) repairLocked() error {
	act := &l.segs[len(l.segs)-1]
	if l.f != nil {
		if err := l.f.Truncate(act.size); err != nil {
			return fmt.Errorf("wal: repair %s (after %v): truncate to %d: %w", act.path, l.err, act.size, err)
		}
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("wal: repair %s (after %v): sync: %w", act.path, l.err, err)
		}
		act.alloc = 0
	}
	cause := l.err
	old := l.f
	if act.size > 0 {
		if err := l.createSegment(l.last + 1); err != nil {
			l.err = cause // createSegment may have replaced it
			return fmt.Errorf("wal: repair (after %v): %w", cause, err)
		}
	} else {
		f, err := l.fs.OpenFile(act.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			if err = f.Sync(); err == nil {
				err = l.fs.SyncDir(l.dir)
			}
			if err != nil {
				f.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("wal: repair %s (after %v): reopen: %w", act.path, cause, err)
		}
		l.f = f
	}
	if old != nil {
		if err := old.Close(); err != nil {
			l.logger.Warn("wal: closing a failed segment", "err", err)
		}
	}
	l.err = nil
	l.logger.Info("wal: repaired after a failed append", "cause", cause, "segment", l.segs[len(l.segs)-1].path)
	return nil
}

// Probe reports whether the log can write again after a failed append:
// it repairs the log if needed, then writes n zero bytes to a scratch
// file, syncs and removes it. A full disk fails it until space returns.
func (l *Log) Probe(n int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.err != nil {
		if err := l.repairLocked(); err != nil {
			return err
		}
	}
	path := filepath.Join(l.dir, probeName)
	f, err := zeroFile(l.fs, path, n)
	if err != nil {
		l.fs.Remove(path)
		return fmt.Errorf("wal: probe: %w", err)
	}
	f.Close()
	if err := l.fs.Remove(path); err != nil {
		return fmt.Errorf("wal: probe: %w", err)
	}
	return nil
}
