package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/store/internal/durable/disk"
	"github.com/svcrun/svc/runtime/store/internal/index"
)

const (
	loadBatch = 1000 // objects per memdb transaction while loading
)

// recover opens the data directory's backend and restores everything it
// committed into raw tables.
func (s *Store) recover() error {
	d, err := disk.Open(disk.Options{Dir: s.opts.Dir, SnapshotBytes: s.opts.SnapshotBytes,
		SegmentBytes: s.opts.SegmentBytes, FS: s.opts.WALFS, Logger: s.log, Snapshotted: s.metrics.snapshotted,
		Key: entryKey})
	if err != nil {
		return err
	}
	s.backend = d
	l := newLoader(s)
	defer l.stop() // on an early return; a no-op after finish
	err = d.Load(l.apply)
	if err == nil && d.Log() != nil {
		s.rev.Store(int64(d.Log().LastSeq()))
	}
	if lerr := l.finish(); lerr != nil {
		// the insert that failed, not the load it stopped
		return fmt.Errorf("store: restore: %w", lerr)
	}
	return err
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

func (l *loader) apply(payload []byte) error { return l.applyRev(payload, 0) }

// applyRev restores a record written at revision rev (0 on disk).
func (l *loader) applyRev(payload []byte, rev int64) error {
	if l.failed.Load() {
		return errLoadStopped // finish returns the cause
	}
	e, err := decodeEntry(payload)
	if err != nil {
		return fmt.Errorf("decode record: %w", err)
	}
	r := restored{t: l.s.tableFor(e.table), name: e.name}
	if e.kind == kindPut {
		// payload is only valid during the call: rawRecord copies.
		r.rec = rawRecord(e, rev)
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

// insert puts each batch into memdb as it arrives, one transaction per
// table, as far as the records extend their table in name order (a
// snapshot's do); the others wait, and go in at the end in name order
// (settle).
func (l *loader) insert() {
	defer close(l.done)
	last := map[*table]string{}      // the greatest name put so far
	later := map[*table][]restored{} // records that wait for the end
	txns := map[*table]*memdb.Txn{}
	for b := range l.ch {
		if l.err != nil {
			continue
		}
		for _, r := range b {
			// Every record that waits has a name up to last's when it
			// came, so a name beyond last has no record anywhere yet.
			if n, ok := last[r.t]; ok && r.name <= n {
				later[r.t] = append(later[r.t], r)
				continue
			}
			if r.rec == nil {
				continue // the removal of what was never restored
			}
			txn, ok := txns[r.t]
			if !ok {
				txn = r.t.state.Load().db.Txn(true)
				txns[r.t] = txn
			}
			if err := txn.Insert(index.Objects, r.rec); err != nil {
				l.fail(fmt.Errorf("restore %s/%s: %w", r.t.key, r.name, err))
				break
			}
			last[r.t] = r.name
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
	if l.err != nil {
		return
	}
	for t, rs := range later {
		if err := settle(t, rs); err != nil {
			l.fail(err)
			return
		}
	}
}

func (l *loader) fail(err error) {
	l.err = err
	l.failed.Store(true)
}

// settle applies rs, records that came out of name order, in the order
// they were written, to t's memdb, which holds only records written
// before any of them of the same name. It applies them in name order: of
// the records of one name, the last one. A radix tree filled in random
// order copied its upper nodes in every transaction, and left the copies
// scattered among the nodes it kept.
func settle(t *table, rs []restored) error {
	slices.SortStableFunc(rs, func(a, b restored) int { return strings.Compare(a.name, b.name) })
	txn := t.state.Load().db.Txn(true)
	n := 0
	for i, r := range rs {
		if i+1 < len(rs) && rs[i+1].name == r.name {
			continue // written again later
		}
		var err error
		if r.rec != nil {
			err = txn.Insert(index.Objects, r.rec)
		} else {
			_, err = txn.DeleteAll(index.Objects, index.NameID, r.name)
		}
		if err != nil {
			txn.Abort()
			return fmt.Errorf("restore %s/%s: %w", t.key, r.name, err)
		}
		if n++; n%loadBatch == 0 {
			txn.Commit()
			txn = t.state.Load().db.Txn(true)
		}
	}
	txn.Commit()
	return nil
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

// startSnapshot runs on the committer after a batch, with nothing in
// flight: it offers the backend memdb's point-in-time views of every
// table, which the backend may write in the background while writers go
// on (internal/durable/disk).
func (s *Store) startSnapshot() {
	if s.failure() != nil {
		return
	}
	type view struct {
		key string
		db  *memdb.MemDB
	}
	var views []view
	for key, t := range *s.tables.Load() {
		views = append(views, view{key, t.state.Load().db.Snapshot()})
	}
	s.backend.Snapshot(func(add func(payload []byte) error) error {
		var buf []byte // add copies, so one buffer serves every record
		for _, v := range views {
			it, err := v.db.Txn(false).Get(index.Objects, index.NameID+"_prefix", []byte(nil))
			if err != nil {
				return err
			}
			for raw := it.Next(); raw != nil; raw = it.Next() {
				buf = appendPut(buf[:0], v.key, raw.(*Record))
				if err := add(buf); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Snapshot writes a snapshot now and waits for it (tests; the server
// snapshots as its log grows, not at shutdown).
func (s *Store) Snapshot() error {
	if s.backend == nil {
		return nil
	}
	err := s.submit(context.Background(), &op{control: true, apply: func(*batch) error {
		s.startSnapshot()
		return nil
	}})
	s.backend.Wait()
	return err
}
