// Package dirlock keeps a second process from opening a data directory that
// one process already uses: two stores appending to the same write-ahead log
// would corrupt it.
//
// The lock is an exclusive flock(2) on <dir>/LOCK. The kernel releases it when
// the holding process exits, however it exits, so a crash never leaves a stale
// lock behind; the LOCK file itself stays and is never deleted (deleting it
// would let two processes lock two different files of the same name). The
// holder's PID is written into the file, for error messages only.
//
// The store in runtime/store takes the lock before opening the WAL and the
// snapshots and releases it after closing them. The package holds no data and
// knows nothing of the directory's contents. It works on Linux, the BSDs and
// macOS; elsewhere Acquire returns an error.
package dirlock

import "errors"

// ErrLocked is wrapped by the error Acquire returns when another process (or
// another Acquire in this process) holds the lock.
var ErrLocked = errors.New("dirlock: data directory is locked")
