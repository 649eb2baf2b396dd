package storetest

import (
	"context"
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
)

// New opens a durable store in a fresh temporary directory, registers the
// given models and closes the store when the test ends.
func New(t testing.TB, models ...*model.Model) *store.Store {
	t.Helper()
	return Open(t, store.Options{Dir: t.TempDir()}, models...)
}

// Open opens a store with opts, registers models and closes it at cleanup.
func Open(t testing.TB, opts store.Options, models ...*model.Model) *store.Store {
	t.Helper()
	s, err := store.Open(opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	for _, m := range models {
		if err := s.Register(context.Background(), m); err != nil {
			t.Fatalf("register %s: %v", m.GVK(), err)
		}
	}
	return s
}
