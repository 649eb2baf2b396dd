package store

import (
	"fmt"
	"maps"
	"slices"

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

// batch is one group commit: one memdb write transaction per touched
// table, the WAL payloads and the changes to publish once the payloads
// are durable. The committer applies it; the syncer logs it, publishes it
// and answers its ops.
type batch struct {
	seq      uint64
	txns     map[*table]*memdb.Txn
	states   map[*table]*tableState
	order    []*table
	payloads [][]byte
	changes  []tableChange
	err      error // an internal failure that poisons the whole batch
	store    *Store

	ops  []*op
	errs []error // each op's outcome, once applied
	// Per table of order, once committed: a view of what was applied, if a
	// reader asked for one.
	views []*view
}

type tableChange struct {
	t *table
	c watch.Change[*Record]
}

// run is the committer: the only goroutine that writes to memdb and the
// index trees. It drains whatever writes are queued (up to maxBatch),
// applies them together and hands the batch to the syncer, then goes on
// with the next batch while the syncer makes this one durable: writes
// queued during an fsync share the next one (group commit), and applying
// them overlaps the fsync (a pipeline).
func (s *Store) run(syncDone <-chan struct{}) {
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
				close(s.synced)
				<-syncDone
				return
			}
		}
		ops := s.gather(first)
		if first.control {
			// A control op swaps table states or reads every table whole:
			// it runs alone, on durable, published state.
			s.inflight.Wait()
			s.runControl(first)
			continue
		}
		s.commit(ops)
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

// runControl runs a control op between batches, with nothing in flight.
func (s *Store) runControl(o *op) {
	o.done <- o.apply(&batch{store: s, txns: map[*table]*memdb.Txn{}, states: map[*table]*tableState{}})
}

// commit applies ops as one batch and hands it to the syncer. It holds
// each touched table's lock only while applying, so readers are not kept
// out for the fsync.
func (s *Store) commit(ops []*op) {
	if err := s.failure(); err != nil {
		for _, o := range ops {
			o.done <- err
		}
		return
	}
	s.seq++
	b := &batch{store: s, seq: s.seq, txns: map[*table]*memdb.Txn{}, states: map[*table]*tableState{}, ops: ops}
	b.errs = make([]error, len(ops))
	for i, o := range ops {
		b.errs[i] = o.apply(b)
		if b.err != nil {
			break
		}
	}
	if b.err != nil {
		for _, t := range b.order {
			b.txns[t].Abort()
			// Undo the batch's index writes: index the applied records
			// afresh (rare: memdb refused a write, or the log failed).
			st := b.states[t]
			if trees, err := rebuildTrees(st.model, st.db); err == nil {
				st.setWork(trees)
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
	b.views = make([]*view, len(b.order))
	for i, t := range b.order {
		b.txns[t].Commit()
		st := b.states[t]
		st.applied = b.seq
		if st.wantView.Swap(false) {
			b.views[i] = st.copyView(b.seq)
		}
		st.mu.Unlock()
	}
	s.inflight.Add(1)
	s.synced <- b
	if s.snapDue.Load() && !s.snapping.Load() {
		s.inflight.Wait() // a snapshot covers exactly what the log holds
		s.snapDue.Store(false)
		s.startSnapshot()
	}
}

// syncer makes applied batches durable, in order: whatever batches are
// waiting go to the log in one write and one fsync. Only then does it
// publish them (names, views, watch events) and answer their ops, so no
// reader or watcher ever sees a write that is not durable.
func (s *Store) syncer(done chan<- struct{}) {
	defer close(done)
	var bs []*batch
	var payloads [][]byte
	for b := range s.synced {
		bs = append(bs[:0], b)
	more:
		for len(bs) < maxPipeline {
			select {
			case b, ok := <-s.synced:
				if !ok {
					break more
				}
				bs = append(bs, b)
			default:
				break more
			}
		}
		if hook := s.beforeLog.Load(); hook != nil {
			(*hook)()
		}
		err := s.failure()
		if err == nil && s.wal != nil {
			payloads = payloads[:0]
			for _, b := range bs {
				payloads = append(payloads, b.payloads...)
			}
			if _, _, werr := s.wal.Append(payloads); werr != nil {
				// After a failed write or fsync the page cache cannot be
				// trusted: refuse every later write; a restart recovers.
				err = fmt.Errorf("store: write-ahead log failed, refusing writes until restart: %w", werr)
				s.failed.CompareAndSwap(nil, &err)
				s.log.Error("write-ahead log failed", "err", werr)
			}
			if s.wal.Size() >= s.opts.SnapshotBytes {
				s.snapDue.Store(true) // the committer starts it between batches
			}
		}
		clear(payloads)
		for _, b := range bs {
			if err != nil {
				s.rollBack(b)
				for _, o := range b.ops {
					o.done <- err
				}
			} else {
				s.publish(b)
			}
			s.inflight.Done()
		}
		clear(bs)
	}
}

// publish makes a durable batch visible: names first, then index views,
// then watch events, then the answers.
func (s *Store) publish(b *batch) {
	for _, c := range b.changes {
		st := b.states[c.t]
		if c.c.HasNew {
			st.byName.set(c.c.New)
		} else {
			st.byName.delete(c.c.Old.Name)
		}
	}
	for i, t := range b.order {
		st := b.states[t]
		if b.views[i] != nil {
			st.offerView(b.views[i])
		}
		st.durable.Store(b.seq)
		st.published.broadcast()
	}
	for _, c := range b.changes {
		b.states[c.t].hub.Publish(c.c)
	}
	for i, o := range b.ops {
		o.done <- b.errs[i]
	}
}

// rollBack undoes a batch that never became durable, with every batch
// applied after it: each table it touched is rebuilt from its published
// names, which hold exactly what is durable (rare, so a full rebuild). The
// store refuses writes from now on (failure is set), and the committer
// checks that under the table's lock, so nothing is applied after this.
func (s *Store) rollBack(b *batch) {
	for _, t := range b.order {
		st := b.states[t]
		st.mu.Lock()
		if st.applied != st.durable.Load() {
			if err := st.rebuildFromNames(); err != nil {
				s.log.Error("rebuilding a table after a failed log write", "table", t.key, "err", err)
			}
			st.applied = st.durable.Load()
		}
		st.mu.Unlock()
		st.published.broadcast()
	}
}

// rebuildFromNames replaces db and work with a fresh table of the records
// in byName. Called with mu held.
func (st *tableState) rebuildFromNames() error {
	st.byName.mu.RLock()
	recs := slices.Collect(maps.Values(st.byName.m))
	st.byName.mu.RUnlock()
	db := newDB()
	if err := loadObjects(db, recs); err != nil {
		return err
	}
	trees, err := rebuildTrees(st.model, db)
	if err != nil {
		return err
	}
	st.db = db
	st.setWork(trees)
	return nil
}

// failure returns the sticky log failure, or nil.
func (s *Store) failure() error {
	if p := s.failed.Load(); p != nil {
		return *p
	}
	return nil
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
	st.mu.Lock() // released when the batch is applied or aborted
	if err := b.store.failure(); err != nil && b.err == nil {
		b.err = err // the log failed while this batch was gathered
	}
	txn := st.db.Txn(true)
	b.txns[t] = txn
	b.states[t] = st
	b.order = append(b.order, t)
	return txn
}

// put stores rec, replacing old (nil for a create); payload is rec framed
// for the log (see frame).
func (b *batch) put(t *table, old, rec *Record, payload []byte) {
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
	postRecord(b.states[t].posts, old, rec)
	b.payloads = append(b.payloads, payload)
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
	postRecord(b.states[t].posts, old, nil)
	b.payloads = append(b.payloads, encodeRemove(t.key, old.Name))
	b.changes = append(b.changes, tableChange{t, watch.Change[*Record]{Old: final, HasOld: true}})
}
