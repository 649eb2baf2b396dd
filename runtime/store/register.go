package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
	"github.com/svcrun/svc/runtime/watch"
)

// buildChunk is how many objects one decode task and one memdb transaction
// of an index build hold.
const buildChunk = 1024

// Register makes m's objects servable: it builds m's indexes from the
// stored objects and returns when they are ready. Meanwhile reads and
// writes of m fail with ErrNotReady. A duplicate key on a unique index or
// an object that does not decode fails the registration, and m stays
// unregistered with its data untouched.
func (s *Store) Register(ctx context.Context, m *model.Model) error {
	if err := m.Check(); err != nil {
		return err
	}
	t := s.tableFor(m.StorageKey())
	unlock := func() {}
	if s.shared != nil {
		// The raw table must hold still while the build reads it.
		s.feedMu.Lock()
		unlock = sync.OnceFunc(s.feedMu.Unlock)
		defer unlock()
	}
	var old *tableState
	err := s.submit(ctx, &op{control: true, apply: func(*batch) error {
		st := t.state.Load()
		switch {
		case st.model == m && st.phase == phaseBuilding && st.reserved:
			old = &tableState{db: st.db}
		case st.model != nil:
			return fmt.Errorf("store: %s is already registered as %s", t.key, st.model.GVK())
		default:
			old = st
		}
		t.state.Store(&tableState{model: m, db: st.db, phase: phaseBuilding})
		return nil
	}})
	if err != nil {
		return err
	}
	built, n, buildErr := s.build(ctx, m, old.db)
	err = s.submit(context.Background(), &op{control: true, apply: func(*batch) error {
		if buildErr != nil {
			t.state.Store(old)
			return nil
		}
		t.state.Store(built)
		return nil
	}})
	if buildErr != nil {
		return fmt.Errorf("store: register %s: %w", m.GVK(), buildErr)
	}
	if err != nil {
		return err
	}
	if s.shared != nil {
		unlock() // the feed goes on while claims are written
		if err := s.syncClaims(ctx, m, t.state.Load()); err != nil {
			return fmt.Errorf("store: register %s: unique-value claims: %w", m.GVK(), err)
		}
	}
	s.log.Debug("model registered", "model", m.GVK().String(), "objects", n)
	return nil
}

// Reserve marks m as registered but not ready, so that its reads and writes
// answer ErrNotReady (not ErrNotRegistered) until a later Register builds
// its indexes. A server reserves its models before it starts serving.
func (s *Store) Reserve(ctx context.Context, m *model.Model) error {
	if err := m.Check(); err != nil {
		return err
	}
	t := s.tableFor(m.StorageKey())
	return s.submit(ctx, &op{control: true, apply: func(*batch) error {
		st := t.state.Load()
		if st.model != nil {
			return fmt.Errorf("store: %s is already registered as %s", t.key, st.model.GVK())
		}
		t.state.Store(&tableState{model: m, db: st.db, phase: phaseBuilding, reserved: true})
		return nil
	}})
}

// Unregister stops serving m. Its objects stay stored (by name only) for a
// later Register; its watchers are dropped with watch.ErrClosed.
func (s *Store) Unregister(ctx context.Context, m *model.Model) error {
	t, ok := (*s.tables.Load())[m.StorageKey()]
	if !ok {
		return nil
	}
	return s.submit(ctx, &op{control: true, apply: func(*batch) error {
		st := t.state.Load()
		if st.model != m {
			return nil
		}
		if st.hub != nil {
			st.hub.Close()
		}
		t.state.Store(&tableState{db: st.db})
		return nil
	}})
}

// build decodes every object of src with m (on every core, in name order)
// and builds a new table state: a MemDB of the records and one sorted tree
// per index, each loaded in order (the trees are built concurrently).
func (s *Store) build(ctx context.Context, m *model.Model, src *memdb.MemDB) (*tableState, int, error) {
	start := time.Now()
	recs, replaced, err := decodeAll(ctx, m, src)
	if err != nil {
		return nil, 0, err
	}
	n := len(recs)
	if n >= 100000 {
		s.log.Info("building indexes", "model", m.GVK().String(), "objects", n, "decodedIn", time.Since(start))
	}
	// The raw table already holds every record by name; only records
	// decoded afresh replace theirs. Nothing else reads or writes it while
	// the model builds. The name table, the name map and each tree are
	// independent: build them side by side on every core.
	db := src
	var byName *names
	trees := make([]*index.Tree, index.NumDefault+len(m.Indexes))
	errs := make([]error, len(trees))
	jobs := []func(*index.Scratch){
		func(*index.Scratch) { errs[0] = loadObjects(db, replaced) },
		func(*index.Scratch) { byName = newNames(recs) },
	}
	order, metas := index.DefaultOrder(recs), index.MetasOf(recs)
	var posts *index.Postings
	for ix := 1; ix < len(trees); ix++ {
		jobs = append(jobs, func(sc *index.Scratch) {
			trees[ix], errs[ix] = index.BuildTree(m, recs, order, metas, ix, sc)
			if ix == index.IxLabels && errs[ix] == nil {
				posts = index.BuildPostings(trees[ix]) // from its tree, in the same job
			}
		})
	}
	// One worker per core, each with its own scratch for the trees it
	// builds.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := new(index.Scratch)
			for j := next.Add(1) - 1; j < int64(len(jobs)); j = next.Add(1) - 1 {
				jobs[j](sc)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if dup := (*index.DupError)(nil); errors.As(err, &dup) {
			u := m.Indexes[dup.Index]
			return nil, n, &UniqueError{Kind: m.GVK().String(), Index: u.Name, Value: model.FormatKey(u.Type, dup.Key), Holder: dup.Holder}
		}
		if err != nil {
			return nil, n, err
		}
	}
	hub := watch.NewHub[*Record](s.opts.WatchBuffer)
	// Writes of m wait for the build (disk) or the feed does (shared):
	// the hub's history starts at the store's revision now.
	hub.Since(s.rev.Load())
	st := &tableState{model: m, db: db, phase: phaseReady, hub: hub, byName: byName, idx: index.Set{Trees: trees, Posts: posts}, nextID: uint32(n), cooled: time.Now(), cooling: s.opts.cooling}
	st.hot.Store(^uint64(0)) // every tree, until readers show which they use
	st.view.Store(st.copyView(0))
	if n >= 10000 {
		s.log.Info("indexes built", "model", m.GVK().String(), "objects", n, "took", time.Since(start))
	}
	return st, n, nil
}

// loadObjects inserts recs into db's objects table, a batch per
// transaction.
func loadObjects(db *memdb.MemDB, recs []*Record) error {
	for i := 0; i < len(recs); i += buildChunk {
		txn := db.Txn(true)
		for _, r := range recs[i:min(i+buildChunk, len(recs))] {
			if err := txn.Insert(index.Objects, r); err != nil {
				txn.Abort()
				return fmt.Errorf("index %s: %w", r.Name, err)
			}
		}
		txn.Commit()
	}
	return nil
}

// claim returns raw as a record indexed for m: raw itself when its keys
// were computed under m's fingerprint fp (its fields unpacked from the
// persisted keys section if need be), else a new record decoded from its
// JSON.
func claim(m *model.Model, fp uint64, raw *Record) (*Record, error) {
	if fp != 0 && record.FP(raw) == fp {
		if record.Indexed(raw) || record.Unpack(raw) && record.NumIndexes(raw) == len(m.Indexes) {
			return raw, nil
		}
	}
	obj := m.NewObject()
	if err := json.Unmarshal(raw.Data, obj); err != nil {
		return nil, fmt.Errorf("object %s does not decode: %w", raw.Name, err)
	}
	rec := record.New(m, obj, raw.Data)
	rec.Rev = raw.Rev
	return rec, nil
}

// decodeAll returns every record of src, in name order, with its index
// fields for m, working on every core. A record already indexed under m's
// fingerprint is used as it is; one restored with persisted keys under it
// is filled in place; any other is decoded into a new record, also
// returned in replaced. Each record gets its id: its position.
func decodeAll(ctx context.Context, m *model.Model, src *memdb.MemDB) (recs, replaced []*Record, err error) {
	raws, err := index.AllRecords(src)
	if err != nil {
		return nil, nil, err
	}
	recs = make([]*Record, len(raws))
	fp := m.KeysFingerprint()
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(buildChunk)) - buildChunk
				if lo >= len(raws) || ctx.Err() != nil {
					return
				}
				for i := lo; i < min(lo+buildChunk, len(raws)); i++ {
					r, err := claim(m, fp, raws[i])
					if err != nil {
						errs[w] = err
						return
					}
					r.ID = uint32(i) // ids number the objects in name order
					record.Own(r)
					recs[i] = r
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	for i, r := range recs {
		if r != raws[i] {
			replaced = append(replaced, r)
		}
	}
	return recs, replaced, ctx.Err()
}
