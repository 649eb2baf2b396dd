package model

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
)

// Registry holds the models being served, looked up by kind or by URL
// resource. It is safe for concurrent use; plugins register and unregister
// models while the server runs.
type Registry struct {
	mu    sync.RWMutex
	byGVK map[GroupVersionKind]*Model
	byGVR map[GroupVersionResource]*Model
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byGVK: map[GroupVersionKind]*Model{}, byGVR: map[GroupVersionResource]*Model{}}
}

// Register adds m. It fails on a declaration mistake or when the kind or
// the plural is already taken in the same group and version.
func (r *Registry) Register(m *Model) error {
	if err := m.Check(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byGVK[m.GVK()]; ok {
		return fmt.Errorf("model %s is already registered", m.GVK())
	}
	if _, ok := r.byGVR[m.GVR()]; ok {
		return fmt.Errorf("resource %s is already registered", m.GVR())
	}
	r.byGVK[m.GVK()] = m
	r.byGVR[m.GVR()] = m
	return nil
}

// Unregister removes m; removing a model that is not registered is a no-op.
func (r *Registry) Unregister(m *Model) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byGVK[m.GVK()] == m {
		delete(r.byGVK, m.GVK())
		delete(r.byGVR, m.GVR())
	}
}

// ByKind finds a model by group, version and kind.
func (r *Registry) ByKind(gvk GroupVersionKind) (*Model, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	m, ok := r.byGVK[gvk]
	return m, ok
}

// ByResource finds a model by group, version and plural.
func (r *Registry) ByResource(gvr GroupVersionResource) (*Model, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	m, ok := r.byGVR[gvr]
	return m, ok
}

// Models returns every registered model sorted by group, version and
// kind, so listings never depend on map order.
func (r *Registry) Models() []*Model {
	r.mu.RLock()
	out := make([]*Model, 0, len(r.byGVK))
	for _, m := range r.byGVK {
		out = append(out, m)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Model) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}
