package store

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
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
// are durable. The committer decides its writes as they arrive, hands it
// to the syncer and applies it while the syncer logs it; the syncer then
// publishes it and answers its ops.
type batch struct {
	seq    uint64
	txns   map[*table]*memdb.Txn
	states map[*table]*tableState
	// The batch's own writes by table and name (nil: removed), read before
	// the state the batch started from (reads, one transaction per table):
	// see current.
	written  map[tableName]*Record
	reads    map[*table]*memdb.Txn
	order    []*table
	payloads [][]byte
	bytes    int64 // of payloads
	changes  []tableChange
	err      error // an internal failure that poisons the whole batch
	store    *Store

	// steps are the batch's writes to memdb and the trees other than
	// unique ones, made once the batch is handed off (see finish); ready
	// is closed when they are done.
	steps []step
	ready chan struct{}

	ops  []*op
	errs []error // each op's outcome, once applied
	// Per table of order, once committed: a view of what was applied, if a
	// reader asked for one.
	views []*index.View
}

type tableName struct {
	t    *table
	name string
}

// step replaces old with rec in t (old nil: a create; rec nil: a removal).
type step struct {
	t        *table
	old, rec *Record
}

type tableChange struct {
	t *table
	c watch.Change[*Record]
}

// run is the committer: the only goroutine that writes to memdb and the
// index trees. It decides each write as it arrives to an open batch, and
// hands the batch to the syncer once the syncer is idle (after gather's
// short wait for a small batch's writers), then applies it (finish): the
// writes that arrive during an fsync are decided during it (a pipeline)
// and share the next one (group commit), in one memdb transaction per
// table, however they trickle in.
func (s *Store) run(syncDone <-chan struct{}) {
	defer close(s.stopped)
	var open *batch // applied, not yet handed to the syncer; nil if none
	for {
		ops, idle, failed := s.ops, s.idle, s.health.Load().ch
		if open == nil {
			idle, failed = nil, nil
		} else if len(open.ops) >= maxBatch {
			ops = nil
		}
		o := s.pending // a control op that arrived while a batch gathered
		s.pending = nil
		if o == nil {
			select {
			case o = <-ops: // queued writes join the open batch first
			default:
				select {
				case o = <-ops:
				case <-idle:
					if open = s.gather(open); open != nil {
						s.handOff(open)
					} else {
						s.idle <- struct{}{} // nothing to hand off: the syncer is still idle
					}
					open = nil
					continue
				case <-failed:
					s.abort(open, s.failure())
					open = nil
					continue
				case <-s.stop:
					s.flush(open)
					s.drain()
					close(s.synced)
					<-syncDone
					return
				}
			}
		}
		if o.control {
			// A control op swaps table states or reads every table whole:
			// it runs alone, on durable, published state.
			s.flush(open)
			open = nil
			s.inflight.Wait()
			s.runControl(o)
			continue
		}
		open = s.apply(open, o)
	}
}

// gather holds a small open batch b back from the idle syncer for up to
// Options.gather (gatherDelay), applying the writes that arrive meanwhile,
// until it has as many writes as the last batch (at most gatherTarget).
// The writers the last batch answered are on their way back; handing off
// without them gives them a batch, and an fsync, of their own. Serving
// HTTP creates on two busy cores, this took batches from 4.1 to 6.7
// writes per fsync and the server's CPU per create down by a sixth: the
// system calls, journal work and wake-ups of an fsync cost more CPU than
// the wait costs time. With 16 writers, waiting for up to 16 of them
// rather than 4 took batches from 7.5 to 10.5 writes. A lone writer (a
// last batch of one) never waits.
// It returns the batch to hand off, nil if an internal failure aborted
// it; a control op that arrives meanwhile is left in s.pending, to run
// after the hand-off.
func (s *Store) gather(b *batch) *batch {
	target := min(s.lastBatch, gatherTarget)
	if len(b.ops) < target {
		t := time.NewTimer(s.opts.gather)
	wait:
		for b != nil && len(b.ops) < target {
			select {
			case o := <-s.ops:
				if o.control {
					s.pending = o
					break wait
				}
				b = s.apply(b, o)
			case <-t.C:
				break wait
			}
		}
		t.Stop()
	}
	if b != nil {
		s.lastBatch = len(b.ops)
	}
	return b
}

// drain answers every queued op after Close.
func (s *Store) drain() {
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

// apply applies o to the open batch b, opening one if b is nil, and
// returns the batch still open (nil if an internal failure aborted it).
// Each touched table's lock is held until the batch is handed off.
func (s *Store) apply(b *batch, o *op) *batch {
	if b == nil {
		if err := s.failure(); err != nil && !s.resume() {
			o.done <- err
			return nil
		}
		s.seq++
		b = &batch{store: s, seq: s.seq, txns: map[*table]*memdb.Txn{}, states: map[*table]*tableState{}, ready: make(chan struct{})}
	}
	b.ops = append(b.ops, o)
	b.errs = append(b.errs, o.apply(b))
	s.appliedOps.Add(1)
	if b.err != nil {
		s.abort(b, b.err)
		return nil
	}
	return b
}

// abort undoes an open batch and answers all its ops with err (rare:
// memdb refused a write, or the log failed under it).
func (s *Store) abort(b *batch, err error) {
	for _, t := range b.order {
		b.txns[t].Abort()
		// Undo the batch's index writes: index the applied records afresh.
		st := b.states[t]
		if trees, err := index.Rebuild(st.model, st.db); err == nil {
			st.idx.Replace(trees)
		} else {
			s.log.Error("rebuilding indexes after a failed batch", "table", t.key, "err", err)
		}
		st.mu.Unlock()
	}
	for _, o := range b.ops {
		o.done <- err
	}
}

// flush hands the open batch b (nil: none) to the syncer once it is idle.
func (s *Store) flush(b *batch) {
	if b == nil {
		return
	}
	select {
	case <-s.idle:
		s.handOff(b)
	case <-s.health.Load().ch:
		s.abort(b, s.failure())
	}
}

// handOff gives b to the idle syncer, then applies its steps while the
// syncer logs it (finish); then, between batches, it starts a snapshot if
// one is due.
func (s *Store) handOff(b *batch) {
	n := b.bytes
	s.inflight.Add(1)
	s.synced <- b
	// The syncer, woken by the send, waits on this processor until the
	// committer blocks: yield, so the log write starts before finish.
	runtime.Gosched()
	s.finish(b)
	if s.backend != nil && s.backend.SnapshotDue(n) {
		s.inflight.Wait() // a snapshot covers exactly what the log holds
		s.startSnapshot()
	}
}

// finish applies b's steps to memdb, the trees and the postings, commits
// its transactions, copies the views readers asked for and releases its
// tables. It runs while the syncer writes and fsyncs b, off the path
// between one fsync and the next: deciding a write (its name, version
// and unique keys) is all that must happen before the hand-off, and the
// rest, most of a write's work on the committer, only before b is
// published. A failure here is a bug (memdb refusing a write the batch
// decided): b.err makes the syncer refuse b and every later write. b may
// be in the log by then, and a restart replays it: its writers' error
// leaves the outcome unknown (TestFailedApplyRefusesWritesUntilRestart).
func (s *Store) finish(b *batch) {
	for _, st := range b.steps {
		txn, state := b.txns[st.t], b.states[st.t]
		var err error
		if st.rec != nil {
			err = txn.Insert(index.Objects, st.rec)
		} else {
			err = txn.Delete(index.Objects, st.old)
		}
		if err != nil && b.err == nil {
			b.err = fmt.Errorf("store: apply to %s: %w", st.t.key, err)
		}
		state.idx.Reindex(state.model, st.old, st.rec, false)
		state.idx.Post(st.old, st.rec)
	}
	if s.failApply.Load() != nil { // a plain read per batch; tests only
		if err := s.failApply.Swap(nil); err != nil && b.err == nil {
			b.err = *err
		}
	}
	b.views = make([]*index.View, len(b.order))
	for i, t := range b.order {
		b.txns[t].Commit()
		st := b.states[t]
		st.applied = b.seq
		if st.wantView.Swap(false) {
			b.views[i] = st.copyView(b.seq)
		}
		st.mu.Unlock()
	}
	close(b.ready)
}

// syncer makes the committer's batches durable, one write and one fsync
// each, and tells the committer whenever it is idle. Only once a batch is
// durable does it publish it (names, views, watch events) and answer its
// ops, so no reader or watcher ever sees a write that is not durable.
func (s *Store) syncer(done chan<- struct{}) {
	defer close(done)
	for {
		s.idle <- struct{}{} // never blocks: the committer takes it before each batch
		b, ok := <-s.synced
		if !ok {
			return
		}
		if hook := s.beforeLog.Load(); hook != nil {
			(*hook)()
		}
		err := s.failure()
		var rev uint64
		var took time.Duration
		if err == nil && s.backend != nil {
			var werr error
			start := time.Now()
			rev, werr = s.backend.Commit(b.payloads)
			took = time.Since(start)
			if werr != nil {
				// The log dropped the batch (durable.Backend.Commit). Writes are
				// refused until a probe finds the log writable again.
				err = s.fail(s.logFailed(werr), false)
				s.log.Error("write-ahead log failed; refusing writes until it recovers", "err", werr)
			}
		} else if err == nil && s.shared == nil && len(b.payloads) > 0 {
			// Memory only: number the records as a log would, so that
			// revisions (X-Svc-Revision, watch resumption) work the same.
			rev = uint64(s.rev.Load()) + uint64(len(b.payloads))
		}
		<-b.ready // the committer applies b while it is logged
		if err == nil && b.err != nil {
			err = s.fail(fmt.Errorf("store: refusing writes until restart: %w", b.err), true)
			s.log.Error("applying a batch failed", "err", b.err)
		}
		if err != nil {
			s.rollBack(b)
			for _, o := range b.ops {
				o.done <- err
			}
		} else {
			// Before the answers: a writer that reads the metrics after
			// its write finds it counted.
			s.metrics.observeBatch(len(b.payloads), b.bytes, took)
			s.publish(b, int64(rev))
		}
		s.inflight.Done()
	}
}

// publish makes a durable batch visible: names first, then index views,
// then watch events, then the answers.
func (s *Store) publish(b *batch, rev int64) {
	if rev != 0 && len(b.payloads) == len(b.changes) {
		// The log numbers each record: each change gets its record's
		// number, so a watcher can resume after it (watch.Hub).
		first := rev - int64(len(b.payloads)) + 1
		for i := range b.changes {
			b.changes[i].c.Rev = first + int64(i)
		}
	}
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
		st.dropStaleView()
		st.published.broadcast()
	}
	for _, c := range b.changes {
		b.states[c.t].hub.Publish(c.c)
	}
	if rev != 0 { // the log's revision; a shared store's feed advances its own
		s.advance(rev)
	}
	for i, o := range b.ops {
		o.done <- b.errs[i]
	}
}

// rollBack undoes a batch that never became durable, with every batch
// applied after it: each table it touched is rebuilt from its published
// names, which hold exactly what is durable (rare, so a full rebuild). The
// store refuses writes meanwhile (failure is set), and the committer
// checks that under the table's lock, so nothing is applied after this;
// it resumes writes only once nothing is in flight (resume).
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

// rebuildFromNames replaces db and idx with a fresh table of the records
// in byName. Called with mu held.
func (st *tableState) rebuildFromNames() error {
	recs := slices.Collect(st.byName.all)
	db := index.NewDB()
	if err := loadObjects(db, recs); err != nil {
		return err
	}
	trees, err := index.Rebuild(st.model, db)
	if err != nil {
		return err
	}
	st.db = db
	st.idx.Replace(trees)
	return nil
}

// state returns the table state the batch writes to, joining t on first
// use: the batch locks the table and opens its write transaction there. A
// batch never spans a control op, so the state is stable for the whole
// batch.
func (b *batch) state(t *table) *tableState {
	if st, ok := b.states[t]; ok {
		return st
	}
	st := t.state.Load()
	st.mu.Lock() // released when the batch is handed off or aborted
	if err := b.store.failure(); err != nil && b.err == nil {
		b.err = err // the log failed while this batch was open
	}
	b.txns[t] = st.db.Txn(true)
	b.states[t] = st
	b.order = append(b.order, t)
	return st
}

func (b *batch) wrote(t *table, name string, rec *Record) {
	if b.written == nil {
		b.written = make(map[tableName]*Record)
	}
	b.written[tableName{t, name}] = rec
}

// current returns the record named name as the batch sees it (nil: none).
// It reads the batch's own writes, then the table's last committed state,
// never the write transaction: memdb reads through a write transaction by
// cloning it, and the clone drops the transaction's cache of the radix
// nodes it has copied, so every later insert of the batch would copy its
// whole path from the root again.
func (b *batch) current(t *table, name string) (*Record, error) {
	if rec, ok := b.written[tableName{t, name}]; ok {
		return rec, nil
	}
	txn, ok := b.reads[t]
	if !ok {
		if b.reads == nil {
			b.reads = make(map[*table]*memdb.Txn)
		}
		// The table's committed state does not change while the batch is
		// open: one read transaction serves all its lookups.
		txn = b.state(t).db.Txn(false)
		b.reads[t] = txn
	}
	raw, err := txn.First(index.Objects, index.NameID, name)
	if raw == nil || err != nil {
		return nil, err
	}
	return raw.(*Record), nil
}

// put stores rec, replacing old (nil for a create); payload is rec framed
// for the log (see frame). The unique trees take it now, for the batch's
// later writes to check against; the rest waits for finish.
func (b *batch) put(t *table, old, rec *Record, payload []byte) {
	st := b.state(t)
	rec.Seq = b.seq
	if old != nil {
		rec.ID = old.ID
		if old.Name == rec.Name && record.Creation(old) == record.Creation(rec) && old.Sig == rec.Sig && index.Entries(old, rewriteEntries) > rewriteEntries {
			// The entries of keys rec keeps stay on old's base (reindex).
			rec.Base = old.Base
			if rec.Base == nil {
				rec.Base = old
			}
			rec.Base.Latest.Store(rec)
		}
	} else {
		rec.ID = st.nextID
		st.nextID++
	}
	b.wrote(t, rec.Name, rec)
	st.idx.Reindex(st.model, old, rec, true)
	b.steps = append(b.steps, step{t, old, rec})
	b.log(payload)
	b.changes = append(b.changes, tableChange{t, watch.Change[*Record]{Old: old, New: rec, HasOld: old != nil, HasNew: true}})
}

// An update rewrites every index entry of an object with at most
// rewriteEntries of them to point at the new version, so that the old
// version (its JSON) is garbage once readers are done with it; only a
// larger object's update leaves its unchanged entries on an older version
// (Record.Base), at the cost of keeping that version alive. Rewriting the
// entries of a Person (about ten) costs an update a few microseconds;
// keeping each updated object's previous version cost the heap about
// 1.1 KB per object updated since its labels last changed.
const rewriteEntries = 64

// log adds payload to what the batch writes to the log, and to its bytes.
func (b *batch) log(payload []byte) {
	b.payloads = append(b.payloads, payload)
	b.bytes += int64(len(payload))
}

// remove deletes old for good. final is the object as last shown to
// clients (with its deletionTimestamp), which watchers receive.
func (b *batch) remove(t *table, old, final *Record) {
	b.wrote(t, old.Name, nil)
	st := b.state(t)
	st.idx.Reindex(st.model, old, nil, true)
	b.steps = append(b.steps, step{t, old, nil})
	b.log(encodeRemove(t.key, old.Name))
	b.changes = append(b.changes, tableChange{t, watch.Change[*Record]{Old: final, HasOld: true}})
}
