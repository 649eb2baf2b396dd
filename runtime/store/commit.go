package store

import (
	"fmt"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/watch"
)

// op is one unit of work for the committer. apply runs on the committer
// goroutine inside the batch's transactions; it must check everything
// before it writes, so an error leaves nothing behind. A control op (one
// that swaps a table's state) runs alone, between batches.
type op struct {
	apply   func(b *batch) error
	control bool
	done    chan error
}

// batch is the committer's view of one group commit: one memdb write
// transaction per touched table, the WAL payloads and the changes to
// publish once the payloads are durable.
type batch struct {
	txns     map[*table]*memdb.Txn
	order    []*table
	payloads [][]byte
	changes  []tableChange
	err      error // an internal failure that poisons the whole batch
}

type tableChange struct {
	t *table
	c watch.Change[*Record]
}

// run is the committer: the only goroutine that writes to memdb and to the
// log. It drains whatever writes are queued (up to maxBatch) and commits
// them together, so concurrent writers share one transaction and one fsync.
func (s *Store) run() {
	defer close(s.stopped)
	for {
		var first *op
		if s.held != nil {
			first, s.held = s.held, nil
		} else {
			select {
			case first = <-s.ops:
			case <-s.stop:
				s.drain()
				return
			}
		}
		ops := []*op{first}
		for !first.control && len(ops) < maxBatch {
			select {
			case o := <-s.ops:
				if o.control {
					s.held = o
					goto commit
				}
				ops = append(ops, o)
			default:
				goto commit
			}
		}
	commit:
		s.commit(ops)
	}
}

// drain answers every queued op after Close.
func (s *Store) drain() {
	if s.held != nil {
		s.held.done <- ErrClosed
	}
	for {
		select {
		case o := <-s.ops:
			o.done <- ErrClosed
		default:
			return
		}
	}
}

func (s *Store) commit(ops []*op) {
	if s.failed != nil {
		for _, o := range ops {
			o.done <- s.failed
		}
		return
	}
	b := &batch{txns: map[*table]*memdb.Txn{}}
	errs := make([]error, len(ops))
	for i, o := range ops {
		errs[i] = o.apply(b)
		if b.err != nil {
			break
		}
	}
	if b.err == nil && len(b.payloads) > 0 && s.wal != nil {
		if _, _, err := s.wal.Append(b.payloads); err != nil {
			// After a failed write or fsync the page cache cannot be
			// trusted: refuse every later write; a restart recovers.
			s.failed = fmt.Errorf("store: write-ahead log failed, refusing writes until restart: %w", err)
			b.err = s.failed
			s.log.Error("write-ahead log failed", "err", err)
		}
	}
	if b.err != nil {
		for _, t := range b.order {
			b.txns[t].Abort()
		}
		for _, o := range ops {
			o.done <- b.err
		}
		return
	}
	for _, t := range b.order {
		b.txns[t].Commit()
	}
	for _, c := range b.changes {
		st := c.t.state.Load()
		if c.c.HasNew {
			st.byName.Store(c.c.New.Name, c.c.New)
		} else {
			st.byName.Delete(c.c.Old.Name)
		}
	}
	for _, c := range b.changes {
		c.t.state.Load().hub.Publish(c.c)
	}
	for i, o := range ops {
		o.done <- errs[i]
	}
	if s.wal != nil && s.wal.Size() >= s.opts.SnapshotBytes {
		s.startSnapshot()
	}
}

// txn returns the batch's write transaction on t's current db.
func (b *batch) txn(t *table) *memdb.Txn {
	if txn, ok := b.txns[t]; ok {
		return txn
	}
	txn := t.state.Load().db.Txn(true)
	b.txns[t] = txn
	b.order = append(b.order, t)
	return txn
}

// put stores rec, replacing old (nil for a create).
func (b *batch) put(t *table, old, rec *Record) {
	txn := b.txn(t)
	if err := txn.Insert(tableObjects, rec); err != nil {
		b.err = fmt.Errorf("store: insert %s/%s: %w", t.key, rec.Name, err)
		return
	}
	if err := countChange(txn, old, rec); err != nil {
		b.err = err
		return
	}
	b.payloads = append(b.payloads, encodePut(t.key, rec))
	b.changes = append(b.changes, tableChange{t, watch.Change[*Record]{Old: old, New: rec, HasOld: old != nil, HasNew: true}})
}

// remove deletes old for good. final is the object as last shown to
// clients (with its deletionTimestamp), which watchers receive.
func (b *batch) remove(t *table, old, final *Record) {
	txn := b.txn(t)
	if err := txn.Delete(tableObjects, old); err != nil {
		b.err = fmt.Errorf("store: delete %s/%s: %w", t.key, old.Name, err)
		return
	}
	if err := countChange(txn, old, nil); err != nil {
		b.err = err
		return
	}
	b.payloads = append(b.payloads, encodeRemove(t.key, old.Name))
	b.changes = append(b.changes, tableChange{t, watch.Change[*Record]{Old: final, HasOld: true}})
}

// countChange keeps the counts table in step with the objects table: one
// row per label pair, one per label key and one for all objects, so a list
// with a single label term knows its total without visiting the matches.
func countChange(txn *memdb.Txn, old, rec *Record) error {
	delta := func(key string, d int64) error {
		raw, err := txn.First(tableCounts, indexID, key)
		if err != nil {
			return fmt.Errorf("store: read counter: %w", err)
		}
		var n int64
		if raw != nil {
			n = raw.(*counter).N
		}
		n += d
		if n == 0 {
			if raw != nil {
				return txn.Delete(tableCounts, raw)
			}
			return nil
		}
		return txn.Insert(tableCounts, &counter{Key: key, N: n})
	}
	if old == nil || rec == nil {
		d := int64(1)
		if rec == nil {
			d, rec = -1, old
		}
		if err := delta(allCounter, d); err != nil {
			return err
		}
		for i := 0; i < len(rec.labels); i += 2 {
			if err := delta(labelCounter(rec.labels[i], rec.labels[i+1]), d); err != nil {
				return err
			}
			if err := delta(keyCounter(rec.labels[i]), d); err != nil {
				return err
			}
		}
		return nil
	}
	for i := 0; i < len(old.labels); i += 2 {
		k, v := old.labels[i], old.labels[i+1]
		if nv, ok := rec.Get(k); ok && nv == v {
			continue
		} else if !ok {
			if err := delta(keyCounter(k), -1); err != nil {
				return err
			}
		}
		if err := delta(labelCounter(k, v), -1); err != nil {
			return err
		}
	}
	for i := 0; i < len(rec.labels); i += 2 {
		k, v := rec.labels[i], rec.labels[i+1]
		ov, ok := old.Get(k)
		if ok && ov == v {
			continue
		}
		if !ok {
			if err := delta(keyCounter(k), 1); err != nil {
				return err
			}
		}
		if err := delta(labelCounter(k, v), 1); err != nil {
			return err
		}
	}
	return nil
}

func labelCounter(k, v string) string { return "l" + k + "\x00" + v }
func keyCounter(k string) string      { return "k" + k }

// allCounter counts every object of the table.
const allCounter = "#"
