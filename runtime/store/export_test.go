package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store/internal/durable/disk"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// EncodeObjectForTest frames obj (with its final metadata) as the store
// logs it, index keys included, so benchmarks can write data directories
// directly.
func EncodeObjectForTest(m *model.Model, obj object.Object) ([]byte, int, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, 0, err
	}
	return encodePut(m.StorageKey(), record.New(m, obj, data)), len(data), nil
}

// BreakLogForTest closes the write-ahead log under the store, so the next
// batch fails to append.
func (s *Store) BreakLogForTest() error { return s.backend.(*disk.Backend).Log().Close() }

// BeforeLogForTest makes the syncer call fn before each log write (with
// the batches it is about to write already applied).
func (s *Store) BeforeLogForTest(fn func()) { s.beforeLog.Store(&fn) }

// FailNextApplyForTest makes the committer's next apply of a batch fail
// with err, as a bug would (memdb refusing a write the batch decided).
func (s *Store) FailNextApplyForTest(err error) { s.failApply.Store(&err) }

// AppliedForTest returns the number of writes the committer has applied,
// durable or not.
func (s *Store) AppliedForTest() uint64 { return s.appliedOps.Load() }

// CheckPostingsForTest compares the label postings of m's current view
// with the labels of its records, and with postings built afresh from its
// labels index.
func (s *Store) CheckPostingsForTest(m *model.Model) error {
	_, st, err := s.ready(m)
	if err != nil {
		return err
	}
	return index.CheckPostings(st.current(^uint64(0)))
}

// KeyCopiesForTest counts, in m's current view, the string copies that the
// entries of each non-empty key share, by "<index position>:<key>", and
// those the postings of each label share, by "postings:<label>".
func (s *Store) KeyCopiesForTest(m *model.Model) (map[string]int, error) {
	_, st, err := s.ready(m)
	if err != nil {
		return nil, err
	}
	return index.KeyCopies(st.current(^uint64(0))), nil
}

// DurableForTest returns the number of the last batch of m's table in the
// log.
func (s *Store) DurableForTest(m *model.Model) uint64 {
	return (*s.tables.Load())[m.StorageKey()].state.Load().durable.Load()
}

// WithCoolingForTest returns opts with trees dropped from views after d
// without a reader.
func WithCoolingForTest(opts Options, d time.Duration) Options {
	opts.cooling = d
	return opts
}

// WithGatherDelayForTest returns opts with small batches waiting up to d
// for the writers of the last batch.
func WithGatherDelayForTest(opts Options, d time.Duration) Options {
	opts.gather = d
	return opts
}

// ViewHasTreeForTest reports whether m's current view (what a reader that
// asks for no tree in particular gets) holds the tree of the index named
// name.
func (s *Store) ViewHasTreeForTest(m *model.Model, name string) bool {
	_, st, err := s.ready(m)
	if err != nil {
		return false
	}
	for ix, x := range m.AllIndexes() {
		if x.Name == name {
			v := st.current(0)
			return v.Has&index.TreeBit(ix) != 0 && v.Tree(ix) != nil
		}
	}
	return false
}

// EntryWritesForTest returns how many index entries the committer has
// written (set or deleted) in m's table.
func (s *Store) EntryWritesForTest(m *model.Model) uint64 {
	_, st, err := s.ready(m)
	if err != nil {
		panic(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.idx.Writes
}

// PauseFeedForTest stops (on) or resumes a replica's etcd feed; stopped,
// the replica applies nothing, and resumed, it watches again from its
// revision (or reloads, if that was compacted meanwhile).
func (s *Store) PauseFeedForTest(on bool) {
	if on {
		ch := make(chan struct{})
		s.feedHold.Store(&ch)
		if c := s.watchCancel.Load(); c != nil {
			(*c)()
		}
		<-s.feedHeld
		return
	}
	if h := s.feedHold.Swap(nil); h != nil {
		close(*h)
	}
}

// TreeShapesForTest returns the shapes of m's current trees (and of its
// postings, last), as "ix: leaves items/slots".
func (s *Store) TreeShapesForTest(m *model.Model) []string {
	_, st, err := s.ready(m)
	if err != nil {
		panic(err)
	}
	// The committer's trees, under its lock: a view would mark every
	// tree as asked for, and every later view would copy them all.
	st.mu.Lock()
	shapes := index.Shapes(&st.idx)
	st.mu.Unlock()
	var out []string
	for ix, sh := range shapes {
		if sh.Nodes > 0 {
			out = append(out, fmt.Sprintf("%d: %d nodes %d leaves %d items / %d slots (%.0f%%)", ix, sh.Nodes, sh.Leaves, sh.Items, sh.Slots, 100*float64(sh.Items)/float64(sh.Slots)))
		}
	}
	return out
}

// WaitSnapshotForTest waits for a snapshot being written in the
// background, which holds the records of its point in time.
func (s *Store) WaitSnapshotForTest() {
	if s.backend != nil {
		s.backend.Wait()
	}
}
