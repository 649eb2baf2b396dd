// Package disk is the store's first durability backend: a write-ahead log
// (runtime/store/wal) and snapshots (runtime/store/snapshot) in a local
// data directory, guarded by a LOCK file (runtime/store/dirlock).
//
// Commit appends a batch with one write and one fsync. When the log grows
// past Options.SnapshotBytes, and past the newest snapshot's size (so a
// large store does not rewrite every object each time a small log fills:
// the same rule as Redis's AOF rewrite at 100% growth), SnapshotDue says
// so; Snapshot notes the last log record, cuts the log, and writes the
// state to a snapshot in the background; once it is durable the covered
// log segments are deleted. Load reads the newest valid snapshot and
// replays the log after it.
//
// The store (runtime/store) is its only user, through durable.Backend.
package disk

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcrun/svc/runtime/store/dirlock"
	"github.com/svcrun/svc/runtime/store/internal/durable"
	"github.com/svcrun/svc/runtime/store/snapshot"
	"github.com/svcrun/svc/runtime/store/wal"
)

const (
	snapshotDir   = "snapshots"
	walDir        = "wal"
	keepSnapshots = 2
	// snapshotRecord tags every snapshot record (a framed store record).
	// It is on disk: never renumber it.
	snapshotRecord byte = 1
)

// Options configure a Backend.
type Options struct {
	Dir string
	// SnapshotBytes: see runtime/store's Options.SnapshotBytes.
	SnapshotBytes int64
	SegmentBytes  int64
	FS            wal.FS       // nil: the operating system's
	Logger        *slog.Logger // nil: discard
	// Snapshotted, if set, is told how long each snapshot took to write.
	Snapshotted func(took time.Duration)
	// Key, if set, returns the key a record writes (the store's table and
	// object name); Load then delivers only each key's last record. The
	// key may alias payload.
	Key func(payload []byte) ([]byte, error)
}

// Backend is a write-ahead log plus snapshots in one directory.
type Backend struct {
	opts Options
	log  *slog.Logger
	lock *dirlock.Lock
	wal  *wal.Log // nil until Load opens it

	snapWG   sync.WaitGroup
	snapping atomic.Bool
	// logged is the record bytes handed to Commit since the last cut; only
	// the committer (SnapshotDue, Snapshot) touches it. A snapshot is due
	// when it passes SnapshotBytes and snapBytes, the newest snapshot's
	// record bytes: so snapshots cost at most one record written per record
	// logged, however large the store.
	logged    int64
	snapBytes atomic.Int64
}

// Open takes the directory lock; Load reads what the directory holds.
func Open(opts Options) (*Backend, error) {
	lock, err := dirlock.Acquire(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", opts.Dir, err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Backend{opts: opts, log: opts.Logger, lock: lock}, nil
}

// Load loads the newest snapshot and replays the log after it.
//
// With Options.Key set, it first reads the log once to find each key's
// last record, then delivers only that one: a snapshot record or log
// record that a later log record supersedes is never handed to apply.
// Otherwise every version an object went through since the snapshot
// was decoded and kept until the next replaced it, and the survivors
// ended up scattered among the dead ones: after a restart from a long
// log, the heap's spans held 1.9 times the live heap (docs/performance.md,
// Memory). The extra read costs a pass over the log's bytes, and saves
// decoding the superseded records.
func (d *Backend) Load(apply func(payload []byte) error) error {
	dir := d.opts.Dir
	start := time.Now()
	w, err := wal.Open(filepath.Join(dir, walDir), wal.Options{SegmentSize: d.opts.SegmentBytes, Logger: d.log, Preallocate: true, FS: d.opts.FS})
	if err != nil {
		return fmt.Errorf("store: open log: %w", err)
	}
	d.wal = w
	var last map[string]uint64 // key -> seq of its last record after the snapshot
	scan := func(after uint64) error {
		if d.opts.Key == nil {
			return nil
		}
		last = make(map[string]uint64)
		err := w.Replay(after, func(seq uint64, payload []byte) error {
			k, err := d.opts.Key(payload)
			if err != nil {
				return fmt.Errorf("record %d: %w", seq, err)
			}
			last[string(k)] = seq
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: read log: %w", err)
		}
		return nil
	}
	// superseded reports whether a later log record than seq (0: a
	// snapshot's record) writes payload's key. With nothing logged since
	// the snapshot (a clean stop), nothing is: no key is decoded.
	superseded := func(seq uint64, payload []byte) (bool, error) {
		if len(last) == 0 {
			return false, nil
		}
		k, err := d.opts.Key(payload)
		if err != nil {
			return false, err
		}
		s, ok := last[string(k)]
		return ok && s != seq, nil
	}
	var size, fromSnapshot, fromLog, skipped int64
	seq, found, err := snapshot.Load(filepath.Join(dir, snapshotDir), scan, func(_ byte, payload []byte) error {
		size += int64(len(payload))
		fromSnapshot++
		if skip, err := superseded(0, payload); err != nil {
			return err
		} else if skip {
			skipped++
			return nil
		}
		return apply(payload)
	})
	if err != nil {
		return fmt.Errorf("store: load snapshot: %w", err)
	}
	d.snapBytes.Store(size)
	if w.LastSeq() < seq {
		return fmt.Errorf("store: the log ends at record %d but the snapshot covers up to %d: log files are missing from %s", w.LastSeq(), seq, filepath.Join(dir, walDir))
	}
	if !found {
		if err := scan(seq); err != nil {
			return err
		}
	}
	err = w.Replay(seq, func(s uint64, payload []byte) error {
		fromLog++
		if skip, err := superseded(s, payload); err != nil {
			return err
		} else if skip {
			skipped++
			return nil
		}
		return apply(payload)
	})
	if err != nil {
		return fmt.Errorf("store: replay log: %w", err)
	}
	d.logged = w.Size()
	d.log.Info("store recovered", "dir", dir, "snapshot", found, "snapshotSeq", seq,
		"fromSnapshot", fromSnapshot, "fromLog", fromLog, "superseded", skipped, "lastSeq", w.LastSeq(), "took", time.Since(start))
	return nil
}

// Commit appends payloads with one write and one fsync; the revision is
// the log sequence number of the last. A failed append leaves nothing of
// the batch in the log (wal.Log.Append).
func (d *Backend) Commit(payloads [][]byte) (uint64, error) {
	_, last, err := d.wal.Append(payloads)
	return last, err
}

// probeBytes is how much a probe of a failed log writes (and removes): a
// disk with less room than this is still full for a batch of writes.
const probeBytes = 1 << 20

// Probe repairs the log and checks it can write probeBytes.
func (d *Backend) Probe() error { return d.wal.Probe(probeBytes) }

// SnapshotDue counts bytes handed to Commit; a snapshot is due once the
// log passed Options.SnapshotBytes and the newest snapshot's size, and
// none is being written.
func (d *Backend) SnapshotDue(bytes int64) bool {
	d.logged += bytes
	return !d.snapping.Load() && d.logged >= max(d.opts.SnapshotBytes, d.snapBytes.Load())
}

// Snapshot notes the last logged record, cuts the log so later records go
// to a new segment, and writes state in the background. Writers go on
// meanwhile; the covered segments are deleted once the snapshot is
// durable. It does nothing while a snapshot is being written.
func (d *Backend) Snapshot(state durable.State) {
	if !d.snapping.CompareAndSwap(false, true) {
		return
	}
	seq := d.wal.LastSeq()
	if err := d.wal.Cut(); err != nil {
		d.log.Error("snapshot: cut log", "err", err)
		d.snapping.Store(false)
		return
	}
	d.logged = 0
	d.snapWG.Add(1)
	go func() {
		defer d.snapWG.Done()
		defer d.snapping.Store(false)
		start := time.Now()
		dir := filepath.Join(d.opts.Dir, snapshotDir)
		n, size := 0, int64(0)
		err := snapshot.Write(dir, seq, func(w *snapshot.Writer) error {
			return state(func(payload []byte) error {
				n++
				size += int64(len(payload))
				return w.Add(snapshotRecord, payload)
			})
		})
		if err != nil {
			d.log.Error("snapshot failed; the log keeps every record", "err", err)
			return
		}
		d.snapBytes.Store(size)
		if err := d.wal.TruncateBefore(seq); err != nil {
			d.log.Error("snapshot: truncate log", "err", err)
		}
		if err := snapshot.Prune(dir, keepSnapshots); err != nil {
			d.log.Error("snapshot: prune", "err", err)
		}
		took := time.Since(start)
		if d.opts.Snapshotted != nil {
			d.opts.Snapshotted(took)
		}
		d.log.Info("snapshot written", "seq", seq, "objects", n, "took", took)
	}()
}

// Sizes returns the bytes in the log's live segments (0 before Load) and
// the newest snapshot's record bytes.
func (d *Backend) Sizes() (walBytes, snapshotBytes int64) {
	if d.wal != nil {
		walBytes = d.wal.Size()
	}
	return walBytes, d.snapBytes.Load()
}

// Wait waits for a snapshot being written.
func (d *Backend) Wait() { d.snapWG.Wait() }

// Close waits for a snapshot being written, closes the log and releases
// the directory lock.
func (d *Backend) Close() error {
	d.snapWG.Wait()
	var errs []error
	if d.wal != nil {
		errs = append(errs, d.wal.Close())
	}
	return errors.Join(append(errs, d.lock.Release())...)
}

// Log returns the write-ahead log (nil before Load), for tests that break it.
func (d *Backend) Log() *wal.Log { return d.wal }

var _ durable.Backend = (*Backend)(nil)
