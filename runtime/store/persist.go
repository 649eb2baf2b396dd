package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/store/dirlock"
	"github.com/svcrun/svc/runtime/store/snapshot"
	"github.com/svcrun/svc/runtime/store/wal"
)

const (
	snapshotDir   = "snapshots"
	walDir        = "wal"
	keepSnapshots = 2
	loadBatch     = 1000 // objects per memdb transaction while loading
)

// recover takes the directory lock, loads the newest snapshot and replays
// the log after it into raw tables.
func (s *Store) recover() error {
	dir := s.opts.Dir
	lock, err := dirlock.Acquire(dir)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", dir, err)
	}
	s.lock = lock
	start := time.Now()
	l := newLoader(s)
	defer l.stop() // on an early return; a no-op after finish
	var size int64
	seq, found, err := snapshot.Load(filepath.Join(dir, snapshotDir), func(kind byte, payload []byte) error {
		size += int64(len(payload))
		return l.apply(payload)
	})
	if err != nil {
		if lerr := l.finish(); lerr != nil {
			err = lerr // the insert that failed, not the load it stopped
		}
		return fmt.Errorf("store: load snapshot: %w", err)
	}
	s.snapBytes.Store(size)
	fromSnapshot := l.n
	w, err := wal.Open(filepath.Join(dir, walDir), wal.Options{SegmentSize: s.opts.SegmentBytes, Logger: s.log, Preallocate: true, FS: s.opts.WALFS})
	if err != nil {
		return fmt.Errorf("store: open log: %w", err)
	}
	s.wal = w
	if w.LastSeq() < seq {
		return fmt.Errorf("store: the log ends at record %d but the snapshot covers up to %d: log files are missing from %s", w.LastSeq(), seq, filepath.Join(dir, walDir))
	}
	err = w.Replay(seq, func(_ uint64, payload []byte) error { return l.apply(payload) })
	if lerr := l.finish(); lerr != nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("store: replay log: %w", err)
	}
	s.logged = w.Size()
	s.log.Info("store recovered", "dir", dir, "snapshot", found, "snapshotSeq", seq,
		"fromSnapshot", fromSnapshot, "fromLog", l.n-fromSnapshot, "lastSeq", w.LastSeq(), "took", time.Since(start))
	return nil
}

// loader restores records into raw tables, without change tracking or
// events: a restore is not a change anyone watches. Decoding and copying
// records (apply, on the reading goroutine) and inserting them into memdb
// (insert, on the loader's own) overlap on two cores; in sequence they
// took a 1M-object Open 3.7 s.
type loader struct {
	s      *Store
	batch  []restored
	ch     chan []restored
	done   chan struct{}
	failed atomic.Bool
	err    error // insert's first error; read after done
	n      int
	closed bool
}

// restored is one record to put, or, with rec nil, a name to remove.
type restored struct {
	t    *table
	rec  *Record
	name string
}

var errLoadStopped = errors.New("store: restore stopped by an earlier error")

func newLoader(s *Store) *loader {
	l := &loader{s: s, ch: make(chan []restored, 4), done: make(chan struct{})}
	go l.insert()
	return l
}

func (l *loader) apply(payload []byte) error {
	if l.failed.Load() {
		return errLoadStopped // finish returns the cause
	}
	e, err := decodeEntry(payload)
	if err != nil {
		return fmt.Errorf("decode record: %w", err)
	}
	r := restored{t: l.s.tableFor(e.table), name: e.name}
	if e.kind == kindPut {
		// payload is only valid during the call: copy what the record keeps.
		r.rec = &Record{Name: e.name, Version: e.version, Data: append([]byte(nil), e.data...)}
		if len(e.keys) >= 8 {
			r.rec.blob = append([]byte(nil), e.keys...)
			r.rec.fp = binary.LittleEndian.Uint64(e.keys)
		}
	} else if e.kind != kindRemove {
		return nil
	}
	if l.batch == nil {
		l.batch = make([]restored, 0, loadBatch)
	}
	l.batch = append(l.batch, r)
	l.n++
	if len(l.batch) == loadBatch {
		l.ch <- l.batch
		l.batch = nil
	}
	return nil
}

// insert applies each batch in one memdb transaction per table, until the
// channel closes; after a failure it drains the rest.
func (l *loader) insert() {
	defer close(l.done)
	txns := map[*table]*memdb.Txn{}
	for b := range l.ch {
		if l.err != nil {
			continue
		}
		for _, r := range b {
			txn, ok := txns[r.t]
			if !ok {
				txn = r.t.state.Load().db.Txn(true)
				txns[r.t] = txn
			}
			var err error
			if r.rec != nil {
				if err = txn.Insert(tableObjects, r.rec); err != nil {
					err = fmt.Errorf("restore %s/%s: %w", r.t.key, r.name, err)
				}
			} else if _, err = txn.DeleteAll(tableObjects, indexID, r.name); err != nil {
				err = fmt.Errorf("restore removal %s/%s: %w", r.t.key, r.name, err)
			}
			if err != nil {
				l.err = err
				l.failed.Store(true)
				break
			}
		}
		for t, txn := range txns {
			if l.err != nil {
				txn.Abort()
			} else {
				txn.Commit()
			}
			delete(txns, t)
		}
	}
}

// finish hands over the last batch, waits for every insert and returns
// the first insert error.
func (l *loader) finish() error {
	if !l.closed && len(l.batch) > 0 && !l.failed.Load() {
		l.ch <- l.batch
	}
	l.batch = nil
	l.stop()
	return l.err
}

// stop ends the inserting goroutine and waits for it.
func (l *loader) stop() {
	if !l.closed {
		l.closed = true
		close(l.ch)
	}
	<-l.done
}

// startSnapshot runs on the committer after a batch: it notes the last
// logged record, cuts the log so later records go to a new segment, and
// writes memdb's point-in-time views in the background. Writers go on
// meanwhile; the covered segments are deleted once the snapshot is durable.
func (s *Store) startSnapshot() {
	if s.failure() != nil || !s.snapping.CompareAndSwap(false, true) {
		return
	}
	seq := s.wal.LastSeq()
	if err := s.wal.Cut(); err != nil {
		s.log.Error("snapshot: cut log", "err", err)
		s.snapping.Store(false)
		return
	}
	s.logged = 0
	type view struct {
		key string
		db  *memdb.MemDB
	}
	var views []view
	for key, t := range *s.tables.Load() {
		views = append(views, view{key, t.state.Load().db.Snapshot()})
	}
	s.snapWG.Add(1)
	go func() {
		defer s.snapWG.Done()
		defer s.snapping.Store(false)
		start := time.Now()
		dir := filepath.Join(s.opts.Dir, snapshotDir)
		n, size := 0, int64(0)
		err := snapshot.Write(dir, seq, func(w *snapshot.Writer) error {
			var buf []byte // Add copies, so one buffer serves every record
			for _, v := range views {
				it, err := v.db.Txn(false).Get(tableObjects, indexID+"_prefix", []byte(nil))
				if err != nil {
					return err
				}
				for raw := it.Next(); raw != nil; raw = it.Next() {
					buf = appendPut(buf[:0], v.key, raw.(*Record))
					if err := w.Add(kindPut, buf); err != nil {
						return err
					}
					n++
					size += int64(len(buf))
				}
			}
			return nil
		})
		if err != nil {
			s.log.Error("snapshot failed; the log keeps every record", "err", err)
			return
		}
		s.snapBytes.Store(size)
		if err := s.wal.TruncateBefore(seq); err != nil {
			s.log.Error("snapshot: truncate log", "err", err)
		}
		if err := snapshot.Prune(dir, keepSnapshots); err != nil {
			s.log.Error("snapshot: prune", "err", err)
		}
		s.log.Info("snapshot written", "seq", seq, "objects", n, "took", time.Since(start))
	}()
}

// Snapshot writes a snapshot now and waits for it (used at clean shutdown
// to make the next start fast, and by tests).
func (s *Store) Snapshot() error {
	if s.wal == nil {
		return nil
	}
	err := s.submit(context.Background(), &op{control: true, apply: func(*batch) error {
		s.startSnapshot()
		return nil
	}})
	s.snapWG.Wait()
	return err
}
