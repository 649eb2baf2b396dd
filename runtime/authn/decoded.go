package authn

import (
	"sync"

	"github.com/svcrun/svc/runtime/store"
)

// decodedCache keeps objects decoded from stored records, each with the
// record it came from. Records are never modified, so the same record
// pointer means the same object: a request whose user (or token) is
// unchanged skips the JSON decode. The objects are shared: read only.
type decodedCache[T any] struct {
	mu  sync.RWMutex
	m   map[string]decodedEntry[T]
	max int
}

type decodedEntry[T any] struct {
	rec *store.Record
	obj T
}

func newDecodedCache[T any](max int) *decodedCache[T] {
	return &decodedCache[T]{m: map[string]decodedEntry[T]{}, max: max}
}

// get returns the object of rec under key, decoding it only when the key
// last held another record.
func (c *decodedCache[T]) get(key string, rec *store.Record, decode func(*store.Record) (T, error)) (T, error) {
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if ok && e.rec == rec {
		return e.obj, nil
	}
	obj, err := decode(rec)
	if err != nil {
		return obj, err
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m) // bounded; a full cache simply starts over
	}
	c.m[key] = decodedEntry[T]{rec: rec, obj: obj}
	c.mu.Unlock()
	return obj, nil
}

// has reports whether key holds an object.
func (c *decodedCache[T]) has(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.m[key]
	return ok
}
