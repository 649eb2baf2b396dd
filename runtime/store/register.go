package store

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
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
	var old *tableState
	err := s.submit(ctx, &op{control: true, apply: func(*batch) error {
		st := t.state.Load()
		if st.model != nil {
			return fmt.Errorf("store: %s is already registered as %s", t.key, st.model.GVK())
		}
		old = st
		t.state.Store(&tableState{model: m, db: st.db, phase: phaseBuilding})
		return nil
	}})
	if err != nil {
		return err
	}
	db, byName, n, buildErr := s.build(ctx, m, old.db)
	err = s.submit(context.Background(), &op{control: true, apply: func(*batch) error {
		if buildErr != nil {
			t.state.Store(old)
			return nil
		}
		t.state.Store(&tableState{model: m, db: db, phase: phaseReady, hub: watch.NewHub[*Record](s.opts.WatchBuffer), byName: byName})
		return nil
	}})
	if buildErr != nil {
		return fmt.Errorf("store: register %s: %w", m.GVK(), buildErr)
	}
	if err != nil {
		return err
	}
	s.log.Debug("model registered", "model", m.GVK().String(), "objects", n)
	return nil
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
// and loads them into a new MemDB with m's schema, batching inserts.
func (s *Store) build(ctx context.Context, m *model.Model, src *memdb.MemDB) (*memdb.MemDB, *sync.Map, int, error) {
	start := time.Now()
	db, err := newDB(modelSchema(m))
	if err != nil {
		return nil, nil, 0, fmt.Errorf("schema: %w", err)
	}
	it, err := src.Txn(false).Get(tableObjects, indexID+"_prefix", []byte(nil))
	if err != nil {
		return nil, nil, 0, err
	}
	// Chunks go to decoders and come back in order through their own
	// result channels, so insertion stays in name order.
	type chunk struct {
		in  []*Record
		out chan []*Record
		err error
	}
	tasks := make(chan *chunk)
	results := make(chan *chunk, 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range tasks {
				recs := make([]*Record, len(c.in))
				for i, raw := range c.in {
					obj := m.NewObject()
					if err := json.Unmarshal(raw.Data, obj); err != nil {
						c.err = fmt.Errorf("object %s does not decode: %w", raw.Name, err)
						break
					}
					recs[i] = newRecord(m, obj, raw.Data)
				}
				c.out <- recs
			}
		}()
	}
	go func() {
		defer close(results)
		defer close(tasks)
		var in []*Record
		send := func() {
			c := &chunk{in: in, out: make(chan []*Record, 1)}
			results <- c
			tasks <- c
			in = nil
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			in = append(in, raw.(*Record))
			if len(in) == buildChunk {
				send()
			}
		}
		if len(in) > 0 {
			send()
		}
	}()
	defer func() {
		for range results { // let the producer finish on early return
		}
		wg.Wait()
	}()

	unique := map[int]map[model.Key]string{}
	for i, ix := range m.Indexes {
		if ix.Unique {
			unique[i] = map[model.Key]string{}
		}
	}
	counts := map[string]int64{}
	byName := &sync.Map{}
	n := 0
	for c := range results {
		recs := <-c.out
		if c.err != nil {
			return nil, nil, n, c.err
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, n, err
		}
		txn := db.Txn(true)
		for _, r := range recs {
			for i, seen := range unique {
				for _, k := range r.keys[i] {
					if other, dup := seen[k]; dup {
						txn.Abort()
						return nil, nil, n, &UniqueError{Kind: m.GVK().String(), Index: m.Indexes[i].Name, Value: model.FormatKey(m.Indexes[i].Type, k), Holder: other}
					}
					seen[k] = r.Name
				}
			}
			if err := txn.Insert(tableObjects, r); err != nil {
				txn.Abort()
				return nil, nil, n, fmt.Errorf("index %s: %w", r.Name, err)
			}
			byName.Store(r.Name, r)
			counts[allCounter]++
			for j := 0; j < len(r.labels); j += 2 {
				counts[labelCounter(r.labels[j], r.labels[j+1])]++
				counts[keyCounter(r.labels[j])]++
			}
			n++
			if n%250000 == 0 {
				s.log.Info("building indexes", "model", m.GVK().String(), "objects", n, "elapsed", time.Since(start))
			}
		}
		txn.Commit()
	}
	txn := db.Txn(true)
	for k, v := range counts {
		if err := txn.Insert(tableCounts, &counter{Key: k, N: v}); err != nil {
			txn.Abort()
			return nil, nil, n, err
		}
	}
	txn.Commit()
	if n >= 10000 {
		s.log.Info("indexes built", "model", m.GVK().String(), "objects", n, "took", time.Since(start))
	}
	return db, byName, n, nil
}
