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
	states   map[*table]*tableState
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
		s.commit(s.gather(first))
	}
}

// gather returns first and whatever writes are queued behind it, up to
// maxBatch. A control op runs alone: one found in the queue is held for
// the next round.
func (s *Store) gather(first *op) []*op {
	ops := []*op{first}
	for !first.control && len(ops) < maxBatch {
		select {
		case o := <-s.ops:
			if o.control {
				s.held = o
				return ops
			}
			ops = append(ops, o)
		default:
			return ops
		}
	}
	return ops
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
	b := &batch{txns: map[*table]*memdb.Txn{}, states: map[*table]*tableState{}}
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
			// Undo the batch's index writes: index the committed records
			// afresh (rare: the log failed or memdb refused a write).
			st := b.states[t]
			if trees, err := rebuildTrees(st.model, st.db); err == nil {
				st.work = trees
			} else {
				s.log.Error("rebuilding indexes after a failed batch", "table", t.key, "err", err)
			}
			st.mu.Unlock()
		}
		for _, o := range ops {
			o.done <- b.err
		}
		return
	}
	for _, t := range b.order {
		b.txns[t].Commit()
		st := b.states[t]
		st.dirty.Store(true)
		st.mu.Unlock()
	}
	for _, c := range b.changes {
		st := c.t.state.Load()
		if c.c.HasNew {
			st.byName.set(c.c.New)
		} else {
			st.byName.delete(c.c.Old.Name)
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

// state returns the table state the batch writes to; a batch never spans
// a control op, so it is stable for the whole batch.
func (b *batch) state(t *table) *tableState {
	b.txn(t)
	return b.states[t]
}

// txn returns the batch's write transaction on t's current db.
func (b *batch) txn(t *table) *memdb.Txn {
	if txn, ok := b.txns[t]; ok {
		return txn
	}
	st := t.state.Load()
	st.mu.Lock() // released when the batch commits or aborts
	txn := st.db.Txn(true)
	b.txns[t] = txn
	b.states[t] = st
	b.order = append(b.order, t)
	return txn
}

// put stores rec, replacing old (nil for a create).
func (b *batch) put(t *table, old, rec *Record) {
	if old != nil {
		rec.id = old.id
	} else {
		st := b.state(t)
		rec.id = st.nextID
		st.nextID++
	}
	if err := b.txn(t).Insert(tableObjects, rec); err != nil {
		b.err = fmt.Errorf("store: insert %s/%s: %w", t.key, rec.Name, err)
		return
	}
	indexRecord(b.states[t].work, old, rec)
	b.payloads = append(b.payloads, encodePut(t.key, rec))
	b.changes = append(b.changes, tableChange{t, watch.Change[*Record]{Old: old, New: rec, HasOld: old != nil, HasNew: true}})
}

// remove deletes old for good. final is the object as last shown to
// clients (with its deletionTimestamp), which watchers receive.
func (b *batch) remove(t *table, old, final *Record) {
	if err := b.txn(t).Delete(tableObjects, old); err != nil {
		b.err = fmt.Errorf("store: delete %s/%s: %w", t.key, old.Name, err)
		return
	}
	unindexRecord(b.states[t].work, old)
	b.payloads = append(b.payloads, encodeRemove(t.key, old.Name))
	b.changes = append(b.changes, tableChange{t, watch.Change[*Record]{Old: final, HasOld: true}})
}
