package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
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
	l := &loader{s: s, txns: map[*table]*memdb.Txn{}}
	var size int64
	seq, found, err := snapshot.Load(filepath.Join(dir, snapshotDir), func(kind byte, payload []byte) error {
		size += int64(len(payload))
		return l.apply(payload)
	})
	if err != nil {
		return fmt.Errorf("store: load snapshot: %w", err)
	}
	l.flush()
	s.snapBytes.Store(size)
	fromSnapshot := l.n
	w, err := wal.Open(filepath.Join(dir, walDir), wal.Options{SegmentSize: s.opts.SegmentBytes, Logger: s.log, Preallocate: true})
	if err != nil {
		return fmt.Errorf("store: open log: %w", err)
	}
	s.wal = w
	if w.LastSeq() < seq {
		return fmt.Errorf("store: the log ends at record %d but the snapshot covers up to %d: log files are missing from %s", w.LastSeq(), seq, filepath.Join(dir, walDir))
	}
	if err := w.Replay(seq, func(_ uint64, payload []byte) error { return l.apply(payload) }); err != nil {
		return fmt.Errorf("store: replay log: %w", err)
	}
	l.flush()
	s.logged = w.Size()
	s.log.Info("store recovered", "dir", dir, "snapshot", found, "snapshotSeq", seq,
		"fromSnapshot", fromSnapshot, "fromLog", l.n-fromSnapshot, "lastSeq", w.LastSeq(), "took", time.Since(start))
	return nil
}

// loader batches restored records into memdb transactions without change
// tracking or events: a restore is not a change anyone watches.
type loader struct {
	s       *Store
	txns    map[*table]*memdb.Txn
	pending int
	n       int
}

func (l *loader) apply(payload []byte) error {
	e, err := decodeEntry(payload)
	if err != nil {
		return fmt.Errorf("decode record: %w", err)
	}
	t := l.s.tableFor(e.table)
	txn, ok := l.txns[t]
	if !ok {
		txn = t.state.Load().db.Txn(true)
		l.txns[t] = txn
	}
	switch e.kind {
	case kindPut:
		rec := &Record{Name: e.name, Version: e.version, Data: append([]byte(nil), e.data...)}
		if len(e.keys) >= 8 {
			rec.blob = append([]byte(nil), e.keys...)
			rec.fp = binary.LittleEndian.Uint64(e.keys)
		}
		if err := txn.Insert(tableObjects, rec); err != nil {
			return fmt.Errorf("restore %s/%s: %w", e.table, e.name, err)
		}
	case kindRemove:
		if _, err := txn.DeleteAll(tableObjects, indexID, e.name); err != nil {
			return fmt.Errorf("restore removal %s/%s: %w", e.table, e.name, err)
		}
	}
	l.n++
	if l.pending++; l.pending >= loadBatch {
		l.flush()
	}
	return nil
}

func (l *loader) flush() {
	for t, txn := range l.txns {
		txn.Commit()
		delete(l.txns, t)
	}
	l.pending = 0
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
