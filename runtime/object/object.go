package object

import (
	"slices"
	"time"
)

// Metadata is the metadata every object carries (docs/api.md). The server
// owns Version, CreationTimestamp and DeletionTimestamp: values a client sends
// for them are ignored, except that an update must carry the current Version.
type Metadata struct {
	Name              string            `json:"name"`
	GenerateName      string            `json:"generateName,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	Version           *int64            `json:"version,omitempty"`
	CreationTimestamp *time.Time        `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *time.Time        `json:"deletionTimestamp,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
}

// Envelope is the part of every object the base model provides: apiVersion,
// kind and metadata. Typed models embed it, which makes them an Object.
type Envelope struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
}

// GetEnvelope returns e itself, so that any struct embedding Envelope
// satisfies Object.
func (e *Envelope) GetEnvelope() *Envelope { return e }

// Object is what the store and the HTTP layer handle: anything with an
// envelope. Generated models and Unstructured implement it.
type Object interface {
	GetEnvelope() *Envelope
}

// GetVersion returns the version, or -1 when it is absent.
func (m *Metadata) GetVersion() int64 {
	if m.Version == nil {
		return -1
	}
	return *m.Version
}

// SetVersion sets the version.
func (m *Metadata) SetVersion(v int64) { m.Version = &v }

// HasFinalizer reports whether f is among the finalizers.
func (m *Metadata) HasFinalizer(f string) bool { return slices.Contains(m.Finalizers, f) }

// NormalizeFinalizers turns the finalizer list into a sorted set, so that two
// objects with the same set serialise identically. An empty list becomes
// nil. A list that is not already a sorted set is replaced by a new slice:
// the old one may be shared (a copied Metadata, a caller's slice), and
// sorting and compacting it in place would reorder it and blank its tail
// under its other owner.
func (m *Metadata) NormalizeFinalizers() {
	if len(m.Finalizers) == 0 {
		m.Finalizers = nil
		return
	}
	if isSortedSet(m.Finalizers) {
		return
	}
	f := slices.Clone(m.Finalizers)
	slices.Sort(f)
	m.Finalizers = slices.Compact(f)
}

// isSortedSet reports whether s is strictly increasing.
func isSortedSet(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

// Timestamp returns t as the server stores timestamps: UTC.
func Timestamp(t time.Time) *time.Time {
	u := t.UTC()
	return &u
}
