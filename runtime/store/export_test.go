package store

import (
	"encoding/json"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

// EncodeObjectForTest frames obj (with its final metadata) as the store
// logs it, index keys included, so benchmarks can write data directories
// directly.
func EncodeObjectForTest(m *model.Model, obj object.Object) ([]byte, int, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, 0, err
	}
	return encodePut(m.StorageKey(), newRecord(m, obj, data)), len(data), nil
}

// BreakLogForTest closes the write-ahead log under the store, so the next
// batch fails to append.
func (s *Store) BreakLogForTest() error { return s.wal.Close() }

// BeforeLogForTest makes the syncer call fn before each log write (with
// the batches it is about to write already applied).
func (s *Store) BeforeLogForTest(fn func()) { s.beforeLog.Store(&fn) }

// AppliedForTest returns the number of the last batch applied to m's table.
func (s *Store) AppliedForTest(m *model.Model) uint64 {
	st := (*s.tables.Load())[m.StorageKey()].state.Load()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.applied
}
