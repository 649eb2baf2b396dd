package model

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/svcrun/svc/runtime/object"
)

// GroupVersion is an API group and version. The empty group belongs to the
// core kinds; its apiVersion is the bare version ("v1alpha1").
type GroupVersion struct {
	Group   string
	Version string
}

// String returns the apiVersion form: "group/version", or "version" for the
// empty group.
func (gv GroupVersion) String() string {
	if gv.Group == "" {
		return gv.Version
	}
	return gv.Group + "/" + gv.Version
}

// ParseAPIVersion splits an apiVersion. "v1" has the empty group;
// "g/v" has group g; anything with more than one slash, or an empty part, is
// an error.
func ParseAPIVersion(s string) (GroupVersion, error) {
	if strings.TrimSpace(s) == "" {
		return GroupVersion{}, errors.New("apiVersion is empty")
	}
	g, v, found := strings.Cut(s, "/")
	if !found {
		return GroupVersion{Version: s}, nil
	}
	if g == "" || v == "" || strings.Contains(v, "/") {
		return GroupVersion{}, fmt.Errorf("apiVersion %q is not of the form <group>/<version> or <version>", s)
	}
	return GroupVersion{Group: g, Version: v}, nil
}

// GroupVersionKind identifies a model by its kind.
type GroupVersionKind struct {
	Group   string
	Version string
	Kind    string
}

// GroupVersion drops the kind.
func (gvk GroupVersionKind) GroupVersion() GroupVersion {
	return GroupVersion{Group: gvk.Group, Version: gvk.Version}
}

// String returns "group/version/Kind", or "version/Kind" for the empty group.
func (gvk GroupVersionKind) String() string {
	return gvk.GroupVersion().String() + "/" + gvk.Kind
}

// GroupVersionResource identifies a model by its URL resource (plural).
type GroupVersionResource struct {
	Group    string
	Version  string
	Resource string
}

// String returns "group/version/resource".
func (gvr GroupVersionResource) String() string {
	return GroupVersion{gvr.Group, gvr.Version}.String() + "/" + gvr.Resource
}

// Model describes one registered kind: its identity, its indexes and how to
// decode and validate its objects.
type Model struct {
	Group    string
	Version  string
	Kind     string
	Plural   string
	Singular string

	// Indexes are the model's own indexes; Defaults are added by
	// Register and must not be declared here.
	Indexes []Index

	// New returns an empty typed object to decode into. Nil means the model
	// has no Go type and objects decode into *object.Unstructured.
	New func() object.Object

	// Validate checks a decoded object against the model's field rules and
	// appends every violation. Nil means no rules beyond metadata syntax.
	Validate func(obj object.Object, errs *object.FieldErrors)

	// ValidateJSON checks a request body, decoded into a generic JSON value
	// (encoding/json with UseNumber), against the whole object schema:
	// types, required fields, constraints and unknown fields, appending
	// every violation with its path. The HTTP layer runs it before
	// decoding into New's type, since a typed decode cannot see unknown or
	// mistyped fields precisely. Nil leaves that to the typed decode.
	ValidateJSON func(doc any, errs *object.FieldErrors)

	// DecodeJSON, when set (generated), decodes a request body straight
	// into a new object of New's type, holding it on the way to what
	// ValidateJSON checks of types, nulls, required and unknown fields.
	// It reports false for anything it does not read exactly as the
	// generic decode (ValidateJSON, then encoding/json) would, every
	// invalid body included: the caller then decodes the generic way,
	// which names every violation. It fills in no defaults: a create
	// fills them into the decoded value (codec.TypedDefaults).
	DecodeJSON func(data []byte) (object.Object, bool)

	// SetStatusJSON, when set (generated), replaces the status of obj, an
	// object of New's type, with data, the JSON of a status that was
	// stored (not null). It reports false, leaving obj as it was, for
	// anything it does not read exactly as encoding/json would; the
	// caller then uses object.SetStatus.
	SetStatusJSON func(obj object.Object, data []byte) bool

	// EncodeJSON, when set (generated), appends the JSON of an object of
	// the model to dst: exactly what encoding/json's Marshal writes, with
	// no reflection. The store encodes with it. Nil: encoding/json.
	EncodeJSON func(dst []byte, obj object.Object) ([]byte, error)

	// Defaults are the default values the schema declares. They fill in
	// the absent properties of an object described whole for the first
	// time, a create's body or an extension file, before it is validated,
	// as Halo's typed models fill theirs in. Updates, patches and status
	// writes are not defaulted again (codec.DecodeNew says why); objects
	// written in process through a typed client are stored as given.
	// Nil: the schema declares none.
	Defaults *Defaults

	// Schema is the object's OpenAPI 3.0 schema as JSON, envelope
	// included, published in the served OpenAPI document. Nil publishes a
	// free-form spec and status.
	Schema []byte

	// Admit adjusts or refuses an object the HTTP API is about to write
	// (old is nil on create), before validation; ctx is the request's, so
	// the hook can see who is asking. The core User model uses it to keep
	// password hashes out of generic writes, Role and RoleBinding to
	// refuse privilege escalation. Nil admits as is.
	Admit func(ctx context.Context, old, obj object.Object) error

	// AdmitDelete refuses a delete the HTTP API is about to make, as a
	// whole: olds are the stored objects it would delete (one, or every
	// match of a delete-collection). The core RoleBinding and User models
	// use it to keep an enabled super administrator. Nil admits.
	AdmitDelete func(ctx context.Context, olds []object.Object) error

	// WriteLock, if set, is held by the HTTP API across each write of the
	// model, from admission to the answer, so that admission checks that
	// span objects (the last super administrator, across users and role
	// bindings) see no other write under the same lock meanwhile.
	WriteLock sync.Locker

	// Protected names objects the HTTP API must not change or delete (the
	// built-in super-role); such a write is a 403. Nil protects nothing.
	Protected func(name string) bool

	// Settled runs after the HTTP API has written an object of the model
	// and before it answers; Role and RoleBinding wait there until access
	// control decides with the write, so that it takes effect on the
	// caller's next request. Nil answers at once.
	Settled func(ctx context.Context) error

	// Present rewrites a stored object's JSON before the HTTP API returns
	// it (responses, lists, watch events); the core User model drops the
	// password hash. Nil returns the stored bytes.
	Present func(data []byte) []byte

	// IndexVersion names what the index key functions compute. The store
	// persists each object's keys with a fingerprint of it, and at start-up
	// reuses keys whose fingerprint matches instead of decoding the
	// object. Change it whenever an index function changes; empty means
	// keys are never reused. The generator derives it from the index
	// declarations, which determine the functions it emits.
	IndexVersion string

	fp atomic.Uint64 // KeysFingerprint, once computed
}

// KeysFingerprint identifies the keys the model's index functions compute:
// its identity, IndexVersion and every index declaration. It is 0, never
// matching, when IndexVersion is empty.
func (m *Model) KeysFingerprint() uint64 {
	if m.IndexVersion == "" {
		return 0
	}
	// Every write asks: compute once. A model is not changed once in use.
	if fp := m.fp.Load(); fp != 0 {
		return fp
	}
	fp := m.keysFingerprint()
	m.fp.Store(fp)
	return fp
}

func (m *Model) keysFingerprint() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", m.Group, m.Plural, m.IndexVersion)
	for _, ix := range m.Indexes {
		fmt.Fprintf(h, "%s\x00%d\x00%t\x00%t\x00", ix.Name, ix.Type, ix.Multi, ix.Unique)
	}
	return max(h.Sum64(), 1)
}

// GVK returns the model's group, version and kind.
func (m *Model) GVK() GroupVersionKind { return GroupVersionKind{m.Group, m.Version, m.Kind} }

// GVR returns the model's group, version and plural.
func (m *Model) GVR() GroupVersionResource {
	return GroupVersionResource{m.Group, m.Version, m.Plural}
}

// APIVersion returns the apiVersion objects of this model carry.
func (m *Model) APIVersion() string { return GroupVersion{m.Group, m.Version}.String() }

// StorageKey names the model's data: "group/plural" ("plural" for the
// empty group). The version is not part of it, as in Halo's store names.
func (m *Model) StorageKey() string {
	if m.Group == "" {
		return m.Plural
	}
	return m.Group + "/" + m.Plural
}

// NewObject returns an empty object of the model, typed if possible.
func (m *Model) NewObject() object.Object {
	if m.New != nil {
		return m.New()
	}
	return &object.Unstructured{}
}

// AllIndexes returns the default indexes followed by the model's own.
func (m *Model) AllIndexes() []Index {
	return append(DefaultIndexes(), m.Indexes...)
}

// NumIndexes is len(m.AllIndexes()), without building the slice.
func (m *Model) NumIndexes() int { return len(defaultIndexes) + len(m.Indexes) }

// IndexAt returns the index at position i of m.AllIndexes(), without
// building the slice. The result must not be changed.
func (m *Model) IndexAt(i int) *Index {
	if i < len(defaultIndexes) {
		return &defaultIndexes[i]
	}
	return &m.Indexes[i-len(defaultIndexes)]
}

// IndexPos returns the position in m.AllIndexes() of the index named name.
// A model has a handful of indexes: a scan beats building a map, and
// lists ask on every call.
func (m *Model) IndexPos(name string) (int, bool) {
	for i := range defaultIndexes {
		if defaultIndexes[i].Name == name {
			return i, true
		}
	}
	for i := range m.Indexes {
		if m.Indexes[i].Name == name {
			return len(defaultIndexes) + i, true
		}
	}
	return 0, false
}

// Index looks an index up by name among the defaults and the model's own.
func (m *Model) Index(name string) (Index, bool) {
	if i, ok := m.IndexPos(name); ok {
		return *m.IndexAt(i), true
	}
	return Index{}, false
}

// Check reports the first mistake in the model's declaration.
func (m *Model) Check() error {
	if m.Version == "" || m.Kind == "" || m.Plural == "" {
		return fmt.Errorf("model %s: version, kind and plural are required", m.GVK())
	}
	if m.Plural != strings.ToLower(m.Plural) || m.Singular != strings.ToLower(m.Singular) {
		return fmt.Errorf("model %s: plural and singular must be lower case", m.GVK())
	}
	seen := map[string]bool{}
	for _, ix := range m.AllIndexes() {
		if ix.Name == "" || ix.Keys == nil {
			return fmt.Errorf("model %s: index %q needs a name and a key function", m.GVK(), ix.Name)
		}
		if seen[ix.Name] {
			return fmt.Errorf("model %s: index %q is declared twice (or clashes with a default index)", m.GVK(), ix.Name)
		}
		seen[ix.Name] = true
	}
	return nil
}
