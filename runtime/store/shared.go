package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/durable/etcd"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// EtcdOptions select the shared backend (Options.Etcd): the objects live
// in an etcd cluster that several replicas share, and this store is the
// replica's in-memory copy, fed by etcd's watch (docs/deployment.md).
type EtcdOptions = etcd.Options

// DefaultEtcdMaxValueBytes is the largest stored object the etcd backend
// takes by default; larger writes are refused with a *TooLargeError.
const DefaultEtcdMaxValueBytes = etcd.DefaultMaxValueBytes

// TooLargeError is a write refused because the stored object would be
// larger than the backend takes (HTTP 413).
type TooLargeError struct {
	Size, Max int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the stored object would be %d bytes; the etcd backend takes at most %d (--etcd-max-object-bytes, below etcd's --max-request-bytes)", e.Size, e.Max)
}

// How long a writer waits for its own write to come back through the
// feed before it answers anyway (the write is committed either way).
const applyWait = 10 * time.Second

// openShared connects to the cluster and loads every object at one
// revision into raw tables; Start watches from the next one.
func (s *Store) openShared() error {
	eo := *s.opts.Etcd
	if eo.Logger == nil {
		eo.Logger = s.log
	}
	b, err := etcd.Open(eo)
	if err != nil {
		return err
	}
	s.shared = b
	host, _ := os.Hostname()
	s.replicaID = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), randomSuffix())
	l := newLoader(s)
	defer l.stop()
	start := time.Now()
	rev, err := b.Load(context.Background(), func(e etcd.Entry) error {
		return l.applyRev(e.Value, e.ModRevision)
	})
	n := l.n
	if lerr := l.finish(); lerr != nil {
		return fmt.Errorf("store: load from etcd: %w", lerr)
	}
	if err != nil {
		return err
	}
	s.rev.Store(rev)
	s.log.Info("store loaded from etcd", "prefix", b.Prefix(), "objects", n, "revision", rev, "took", time.Since(start))
	return nil
}

// Revision is the last revision this store has applied: on etcd, the
// cluster revision its feed has reached; on disk, the log's last record.
// A client that saw revision R elsewhere may ask for at least R
// (WaitRevision) to read its own writes on this replica.
func (s *Store) Revision() int64 { return s.rev.Load() }

// Shared reports whether the store is a replica of a shared backend.
func (s *Store) Shared() bool { return s.shared != nil }

// WaitRevision waits until the store has applied revision rev, or ctx
// ends.
func (s *Store) WaitRevision(ctx context.Context, rev int64) error {
	if s.rev.Load() >= rev {
		return nil // the common case: no timer, no signal
	}
	var nudge <-chan time.Time
	if s.shared != nil {
		// If no change brings the feed there soon, ask etcd for progress.
		t := time.NewTimer(20 * time.Millisecond)
		defer t.Stop()
		nudge = t.C
	}
	for {
		ch := s.revSig.wait()
		if s.rev.Load() >= rev {
			return nil
		}
		select {
		case <-nudge:
			s.shared.RequestProgress(ctx)
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("store: revision %d not reached (at %d): %w", rev, s.rev.Load(), ctx.Err())
		case <-s.stop:
			return ErrClosed
		}
	}
}

// advance records that everything up to rev is applied.
func (s *Store) advance(rev int64) {
	for {
		cur := s.rev.Load()
		if rev <= cur {
			return
		}
		if s.rev.CompareAndSwap(cur, rev) {
			s.revSig.broadcast()
			return
		}
	}
}

// waitApplied waits, bounded, for the feed to apply rev: a writer then
// reads its own write on this replica.
func (s *Store) waitApplied(rev int64) {
	ctx, cancel := context.WithTimeout(context.Background(), applyWait)
	defer cancel()
	if err := s.WaitRevision(ctx, rev); err != nil && !errors.Is(err, ErrClosed) {
		s.log.Warn("a committed write has not come back through the etcd watch yet", "revision", rev, "err", err)
	}
}

// feed applies the cluster's changes in revision order until Close. A
// watch that breaks resumes from the last applied revision; one that
// finds it compacted reloads (resync).
func (s *Store) feed(ctx context.Context) {
	defer close(s.feedDone)
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		if h := s.feedHold.Load(); h != nil { // tests: the feed is paused
			s.feedHeld <- struct{}{}
			select {
			case <-*h:
			case <-ctx.Done():
				return
			}
			continue
		}
		wctx, wcancel := context.WithCancel(ctx)
		s.watchCancel.Store(&wcancel)
		err := s.shared.Watch(wctx, s.rev.Load(), func(rev int64, evs []etcd.Event) error {
			backoff = 50 * time.Millisecond
			s.setFeedErr(nil)
			if len(evs) == 0 {
				s.advance(rev)
				return nil
			}
			return s.applyFeed(rev, evs)
		})
		wcancel()
		if ctx.Err() != nil {
			return
		}
		if s.feedHold.Load() != nil {
			continue
		}
		var ce *etcd.CompactedError
		if errors.As(err, &ce) {
			s.log.Warn("etcd compacted past this replica's revision; loading again", "revision", s.rev.Load(), "compacted", ce.Rev)
			if err = s.resync(ctx); err == nil {
				continue
			}
		}
		s.setFeedErr(err)
		s.log.Warn("etcd watch ended; resuming", "revision", s.rev.Load(), "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (s *Store) setFeedErr(err error) {
	if err == nil {
		if s.feedErr.Load() != nil {
			s.feedErr.Store(nil)
		}
		return
	}
	s.feedErr.Store(&err)
}

// Degraded says why a replica of a shared backend may be behind the
// cluster or unable to write (its watch is down: etcd unreachable or
// without quorum); nil when all is well. Reads go on from memory.
func (s *Store) Degraded() error {
	if p := s.writeErr.Load(); p != nil {
		return *p
	}
	if p := s.feedErr.Load(); p != nil {
		return *p
	}
	return nil
}

// applyFeed applies changes up to revision rev as one batch.
func (s *Store) applyFeed(rev int64, evs []etcd.Event) error {
	s.feedMu.RLock()
	defer s.feedMu.RUnlock()
	err := s.submit(context.Background(), &op{apply: func(b *batch) error {
		for _, ev := range evs {
			s.applyEvent(b, ev)
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("store: apply revision %d: %w", rev, err)
	}
	s.advance(rev)
	return nil
}

// applyEvent applies one change to b: to the indexes of a registered
// model, or by name to a raw table (a model not registered yet, or
// reserved: Register waits for the feed, see feedMu).
func (s *Store) applyEvent(b *batch, ev etcd.Event) {
	if ev.Value == nil {
		s.applyRemove(b, s.tableFor(ev.Table), ev.Name, ev.Final, ev.Rev)
		return
	}
	e, err := decodeEntry(ev.Value)
	if err != nil || e.kind != kindPut {
		s.log.Error("skipping an etcd value that is not a stored object", "revision", ev.Rev, "err", err)
		return
	}
	t := s.tableFor(e.table)
	rec := rawRecord(e, ev.Rev)
	old, _ := b.current(t, e.name)
	st := b.state(t)
	if st.phase != phaseReady {
		txn := b.txns[t]
		if old != nil {
			txn.Delete(index.Objects, old)
		}
		if err := txn.Insert(index.Objects, rec); err != nil && b.err == nil {
			b.err = fmt.Errorf("store: apply %s/%s: %w", t.key, e.name, err)
		}
		b.wrote(t, e.name, rec)
		return
	}
	m := st.model
	if rec, err = claim(m, m.KeysFingerprint(), rec); err != nil {
		s.log.Error("skipping an object from etcd that does not decode", "model", m.GVK().String(), "name", e.name, "revision", ev.Rev, "err", err)
		return
	}
	record.Own(rec)
	b.put(t, old, rec, nil)
	b.changes[len(b.changes)-1].c.Rev = ev.Rev
}

// applyRemove removes name from t at revision rev. final, if the removal
// carried it (etcd's gone key), is the object as watchers receive it;
// otherwise the last stored version stands in.
func (s *Store) applyRemove(b *batch, t *table, name string, final []byte, rev int64) {
	old, _ := b.current(t, name)
	if old == nil {
		return
	}
	st := b.state(t)
	if st.phase != phaseReady {
		b.txns[t].Delete(index.Objects, old)
		b.wrote(t, name, nil)
		return
	}
	gone := old
	if fe, err := decodeEntry(final); final != nil && err == nil && fe.kind == kindPut && fe.table == t.key && fe.name == name {
		if r, err := claim(st.model, st.model.KeysFingerprint(), rawRecord(fe, rev)); err == nil {
			gone = r
		}
	}
	b.remove(t, old, gone)
	b.changes[len(b.changes)-1].c.Rev = rev
}

// rawRecord is a decoded put as a raw record, its bytes copied (the
// frame around them is not kept).
func rawRecord(e logEntry, rev int64) *Record {
	r := &Record{Name: e.name, Version: e.version, Rev: rev}
	if len(e.keys) < 8 {
		r.Data = slices.Clone(e.data)
		return r
	}
	// They live and die with the record: record.Room lays them out as a
	// written record's are.
	data, sec := record.Room(len(e.data), len(e.keys))
	copy(data, e.data)
	copy(sec, e.keys)
	r.Data, r.Sec = data, record.Section(sec)
	return r
}

// resync loads every object again at the cluster's current revision and
// applies the difference to what this replica holds as one batch, so
// readers and watchers go from the old state to the new one in one step
// (and watchers receive the changes they missed as events).
func (s *Store) resync(ctx context.Context) error {
	type item struct {
		payload []byte
		rev     int64
	}
	latest := map[string]map[string]item{}
	rev, err := s.shared.Load(ctx, func(e etcd.Entry) error {
		le, err := decodeEntry(e.Value)
		if err != nil {
			return err
		}
		byName := latest[le.table]
		if byName == nil {
			byName = map[string]item{}
			latest[le.table] = byName
		}
		byName[le.name] = item{e.Value, e.ModRevision}
		return nil
	})
	if err != nil {
		return err
	}
	for key := range latest {
		s.tableFor(key)
	}
	s.feedMu.RLock()
	defer s.feedMu.RUnlock()
	err = s.submit(ctx, &op{apply: func(b *batch) error {
		for _, t := range *s.tables.Load() {
			byName := latest[t.key]
			// The committed state: the batch has not written t yet.
			it, err := b.state(t).db.Txn(false).Get(index.Objects, index.NameID)
			if err != nil {
				return err
			}
			var gone []string
			for raw := it.Next(); raw != nil; raw = it.Next() {
				if r := raw.(*Record); byName[r.Name].payload == nil {
					gone = append(gone, r.Name)
				}
			}
			for _, name := range gone {
				s.applyRemove(b, t, name, nil, rev)
			}
			for name, it := range byName {
				if cur, _ := b.current(t, name); cur != nil && cur.Rev == it.rev {
					continue
				}
				s.applyEvent(b, etcd.Event{Rev: it.rev, Value: it.payload})
			}
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("store: apply the reload at revision %d: %w", rev, err)
	}
	s.rev.Store(rev) // may go back on no one: rev is the cluster's newest
	s.revSig.broadcast()
	s.log.Info("replica reloaded from etcd", "revision", rev)
	return nil
}

// claimInfo names a unique value for an error.
type claimInfo struct{ index, value string }

// claims are the etcd keys claiming rec's values on m's unique indexes.
func (s *Store) claims(m *model.Model, rec *Record) map[string]claimInfo {
	if rec == nil {
		return nil
	}
	var out map[string]claimInfo
	for i, ix := range m.Indexes {
		if !ix.Unique || i >= record.NumIndexes(rec) {
			continue
		}
		for _, k := range record.AppendKeys(rec, i, []model.Key(nil)) {
			if out == nil {
				out = map[string]claimInfo{}
			}
			out[s.shared.ClaimKey(m.StorageKey(), ix.Name, string(k))] = claimInfo{ix.Name, model.FormatKey(ix.Type, k)}
		}
	}
	return out
}

// minus lists the keys of a not in b, sorted.
func minus(a, b map[string]claimInfo) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// errSharedRetry: the object changed on another replica between the read
// and the write; the caller reads it again.
var errSharedRetry = errors.New("object changed on another replica")

// commitShared writes rec over cur (nil: a create; rec removed for good
// when it is being deleted without finalizers, or when remove) as one
// etcd transaction, then waits for this replica to apply it. want is the
// version the caller sent (for a conflict's message); retry makes a lost
// race errSharedRetry instead of a conflict.
func (s *Store) commitShared(ctx context.Context, m *model.Model, cur, rec *Record, want int64, retry bool) error {
	if _, _, err := s.ready(m); err != nil {
		return err
	}
	if s.closed.Load() {
		return ErrClosed
	}
	kind := m.GVK().String()
	w := etcd.Write{Table: m.StorageKey(), Name: rec.Name}
	had, has := s.claims(m, cur), s.claims(m, rec)
	if cur != nil {
		w.ExpectRev = cur.Rev
	}
	if rec.Deleting() && !record.Pending(rec) {
		w.Final = frame(m, rec)
		w.Release = minus(had, nil)
	} else {
		w.Value = frame(m, rec)
		w.Claim, w.Release = minus(has, had), minus(had, has)
	}
	rev, err := s.shared.Write(ctx, w)
	if err == nil {
		s.setWriteErr(nil)
		s.waitApplied(rev)
		return nil
	}
	var (
		ce *etcd.ConflictError
		te *etcd.TooLargeError
		ue *etcd.UnavailableError
	)
	switch {
	case errors.As(err, &ce):
		// Let this replica catch up to what won, so the caller's next
		// read here sees it.
		s.waitApplied(ce.Rev)
		if ce.Holder != "" {
			c := has[ce.Claim]
			return &UniqueError{Kind: kind, Index: c.index, Value: c.value, Holder: ce.Holder}
		}
		if retry {
			return errSharedRetry
		}
		if cur == nil {
			if ce.Current != nil {
				return &AlreadyExistsError{Kind: kind, Name: rec.Name}
			}
			return errSharedRetry
		}
		if ce.Current == nil {
			return &NotFoundError{Kind: kind, Name: rec.Name}
		}
		stored := int64(-1)
		if e, err := decodeEntry(ce.Current); err == nil {
			stored = e.version
		}
		return versionMismatch(kind, rec.Name, want, stored)
	case errors.As(err, &te):
		return &TooLargeError{Size: te.Size, Max: te.Max}
	case errors.As(err, &ue):
		uerr := &UnavailableError{Err: err, Cluster: true, Since: time.Now(), RetryAfter: time.Second}
		s.setWriteErr(uerr)
		return uerr
	case etcd.IsHeldClaims(err):
		return errSharedRetry
	}
	return err
}

func (s *Store) setWriteErr(err error) {
	if err == nil {
		if s.writeErr.Load() != nil {
			s.writeErr.Store(nil)
		}
		return
	}
	s.writeErr.Store(&err)
}

// deleteCollectionShared marks each of olds deleted, one transaction each
// (etcd bounds a transaction's operations): unlike on disk, the
// collection is not deleted atomically. An object changed meanwhile is
// read again; one gone meanwhile is skipped.
func (s *Store) deleteCollectionShared(ctx context.Context, m *model.Model, olds []*Record) ([]*Record, error) {
	recs := make([]*Record, 0, len(olds))
	for _, cur := range olds {
		rec, err := s.Delete(ctx, m, cur.Name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return recs, fmt.Errorf("store: delete collection %s: %w", m.Plural, err)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// Lead runs fn while this replica leads the election called name: on a
// shared store, one replica at a time (the others wait, and one takes
// over within seconds when the leader dies); on disk, the only process,
// at once. fn's context ends when leadership is lost or ctx ends; Lead
// returns when ctx ends.
func (s *Store) Lead(ctx context.Context, name string, fn func(ctx context.Context)) {
	if s.shared == nil {
		fn(ctx)
		<-ctx.Done()
		return
	}
	s.shared.Lead(ctx, name, s.replicaID, fn)
}
