package model

import (
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/object"
)

func TestParseAPIVersion(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    GroupVersion
		wantErr string
	}{
		{name: "core version", in: "v1", want: GroupVersion{Version: "v1"}},
		{name: "core alpha", in: "v1alpha1", want: GroupVersion{Version: "v1alpha1"}},
		{name: "group", in: "core.example.com/v1", want: GroupVersion{Group: "core.example.com", Version: "v1"}},
		{name: "brand group", in: "content.svc.run/v1alpha1", want: GroupVersion{Group: "content.svc.run", Version: "v1alpha1"}},
		{name: "empty", in: "", wantErr: "apiVersion is empty"},
		{name: "blank", in: "   ", wantErr: "apiVersion is empty"},
		{name: "two slashes", in: "a/b/c", wantErr: `"a/b/c" is not of the form`},
		{name: "empty group", in: "/v1", wantErr: `"/v1" is not of the form`},
		{name: "empty version", in: "g/", wantErr: `"g/" is not of the form`},
		{name: "only slash", in: "/", wantErr: "is not of the form"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAPIVersion(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseAPIVersion(%q): got %+v, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				if got != (GroupVersion{}) {
					t.Errorf("ParseAPIVersion(%q): got %+v with the error, want the zero GroupVersion", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseAPIVersion(%q): got %+v, %v; want %+v, nil", tc.in, got, err, tc.want)
			}
			if s := got.String(); s != tc.in {
				t.Errorf("ParseAPIVersion(%q).String(): got %q, want the input back", tc.in, s)
			}
		})
	}
}

func TestIdentityStrings(t *testing.T) {
	tests := []struct {
		name                                 string
		m                                    *Model
		gv, gvk, gvr, apiVersion, storageKey string
	}{
		{
			name: "empty group",
			m:    &Model{Version: "v1alpha1", Kind: "Role", Plural: "roles"},
			gv:   "v1alpha1", gvk: "v1alpha1/Role", gvr: "v1alpha1/roles", apiVersion: "v1alpha1", storageKey: "roles",
		},
		{
			name: "group",
			m:    &Model{Group: "content.svc.run", Version: "v1alpha1", Kind: "Post", Plural: "posts"},
			gv:   "content.svc.run/v1alpha1", gvk: "content.svc.run/v1alpha1/Post", gvr: "content.svc.run/v1alpha1/posts",
			apiVersion: "content.svc.run/v1alpha1", storageKey: "content.svc.run/posts",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			checks := []struct{ what, got, want string }{
				{"GVK().GroupVersion().String()", m.GVK().GroupVersion().String(), tc.gv},
				{"GVK().String()", m.GVK().String(), tc.gvk},
				{"GVR().String()", m.GVR().String(), tc.gvr},
				{"APIVersion()", m.APIVersion(), tc.apiVersion},
				{"StorageKey()", m.StorageKey(), tc.storageKey},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%+v.%s: got %q, want %q", m.GVK(), c.what, c.got, c.want)
				}
			}
		})
	}
	// The storage key ignores the version: two versions share data.
	v1 := Model{Group: "g", Version: "v1", Kind: "K", Plural: "ks"}
	v2 := Model{Group: "g", Version: "v2", Kind: "K", Plural: "ks"}
	if v1.StorageKey() != v2.StorageKey() {
		t.Errorf("StorageKey of two versions: got %q and %q, want them equal", v1.StorageKey(), v2.StorageKey())
	}
}

func keysOf(object.Object, []Key) []Key { return nil }

func TestCheck(t *testing.T) {
	ok := func() Model {
		return Model{Group: "g.example.com", Version: "v1", Kind: "Thing", Plural: "things", Singular: "thing",
			Indexes: []Index{{Name: "spec.slug", Unique: true, Keys: keysOf}}}
	}
	tests := []struct {
		name    string
		edit    func(*Model)
		wantErr string // "" for a valid model
	}{
		{name: "valid", edit: func(*Model) {}},
		{name: "valid empty group no singular no indexes", edit: func(m *Model) { m.Group, m.Singular, m.Indexes = "", "", nil }},
		{name: "missing version", edit: func(m *Model) { m.Version = "" }, wantErr: "version, kind and plural are required"},
		{name: "missing kind", edit: func(m *Model) { m.Kind = "" }, wantErr: "version, kind and plural are required"},
		{name: "missing plural", edit: func(m *Model) { m.Plural = "" }, wantErr: "version, kind and plural are required"},
		{name: "upper-case plural", edit: func(m *Model) { m.Plural = "Things" }, wantErr: "must be lower case"},
		{name: "upper-case singular", edit: func(m *Model) { m.Singular = "Thing" }, wantErr: "must be lower case"},
		{name: "duplicate index", edit: func(m *Model) {
			m.Indexes = append(m.Indexes, Index{Name: "spec.slug", Keys: keysOf})
		}, wantErr: `index "spec.slug" is declared twice`},
		{name: "index named metadata.name", edit: func(m *Model) {
			m.Indexes = append(m.Indexes, Index{Name: IndexName, Keys: keysOf})
		}, wantErr: `index "metadata.name" is declared twice (or clashes with a default index)`},
		{name: "index named metadata.labels", edit: func(m *Model) {
			m.Indexes = []Index{{Name: IndexLabels, Keys: keysOf}}
		}, wantErr: "clashes with a default index"},
		{name: "index named metadata.creationTimestamp", edit: func(m *Model) {
			m.Indexes = []Index{{Name: IndexCreationTimestamp, Keys: keysOf}}
		}, wantErr: "clashes with a default index"},
		{name: "index without key function", edit: func(m *Model) {
			m.Indexes = append(m.Indexes, Index{Name: "spec.age"})
		}, wantErr: `index "spec.age" needs a name and a key function`},
		{name: "index without name", edit: func(m *Model) {
			m.Indexes = append(m.Indexes, Index{Keys: keysOf})
		}, wantErr: `index "" needs a name and a key function`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := ok()
			tc.edit(&m)
			err := m.Check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check(%+v): got %v, want nil", m.GVK(), err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("Check(%+v): got nil, want error containing %q", m.GVK(), tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("Check(%+v): got %q, want it to contain %q", m.GVK(), err, tc.wantErr)
			}
		})
	}
}

func TestModelIndexLookup(t *testing.T) {
	m := &Model{Version: "v1", Kind: "Thing", Plural: "things", Indexes: []Index{
		{Name: "spec.age", Type: Int, Keys: keysOf},
		{Name: "spec.tags", Multi: true, Keys: keysOf},
	}}
	tests := []struct {
		name   string
		want   bool
		wantTy KeyType
	}{
		{name: IndexName, want: true, wantTy: String},
		{name: IndexLabels, want: true, wantTy: Label},
		{name: IndexCreationTimestamp, want: true, wantTy: Time},
		{name: IndexDeletionTimestamp, want: true, wantTy: Time},
		{name: "spec.age", want: true, wantTy: Int},
		{name: "spec.tags", want: true, wantTy: String},
		{name: "name", want: false}, // the alias is resolved by the query parser
		{name: "spec.missing", want: false},
		{name: "", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix, ok := m.Index(tc.name)
			if ok != tc.want {
				t.Fatalf("Index(%q): got found=%v, want %v", tc.name, ok, tc.want)
			}
			if ok && (ix.Name != tc.name || ix.Type != tc.wantTy) {
				t.Errorf("Index(%q): got {%s %s}, want {%s %s}", tc.name, ix.Name, ix.Type, tc.name, tc.wantTy)
			}
		})
	}

	all := m.AllIndexes()
	var names []string
	for _, ix := range all {
		names = append(names, ix.Name)
	}
	want := []string{IndexName, IndexLabels, IndexCreationTimestamp, IndexDeletionTimestamp, "spec.age", "spec.tags"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("AllIndexes names: got %q, want %q", names, want)
	}
	// AllIndexes must not write into the model's own slice.
	all[len(all)-1].Name = "changed"
	if m.Indexes[1].Name != "spec.tags" {
		t.Errorf("editing AllIndexes() changed the model: Indexes[1].Name = %q", m.Indexes[1].Name)
	}
}

type typedThing struct {
	object.Envelope
	Spec struct{ Age int } `json:"spec"`
}

func TestNewObject(t *testing.T) {
	untyped := &Model{Version: "v1", Kind: "U", Plural: "us"}
	if o, ok := untyped.NewObject().(*object.Unstructured); !ok || o == nil {
		t.Errorf("NewObject without New: got %T, want *object.Unstructured", untyped.NewObject())
	}
	typed := &Model{Version: "v1", Kind: "T", Plural: "ts", New: func() object.Object { return &typedThing{} }}
	a, b := typed.NewObject(), typed.NewObject()
	if _, ok := a.(*typedThing); !ok {
		t.Errorf("NewObject with New: got %T, want *typedThing", a)
	}
	if a == b {
		t.Errorf("NewObject returned the same object twice, want a fresh one each call")
	}
}

func TestIndexAtAndPosMatchAllIndexes(t *testing.T) {
	m := &Model{Group: "g", Version: "v1", Kind: "K", Plural: "ks", Indexes: []Index{{Name: "spec.a"}, {Name: "spec.b", Multi: true}}}
	all := m.AllIndexes()
	if m.NumIndexes() != len(all) {
		t.Fatalf("NumIndexes = %d, want %d", m.NumIndexes(), len(all))
	}
	for i, ix := range all {
		if got := m.IndexAt(i); got.Name != ix.Name || got.Multi != ix.Multi {
			t.Errorf("IndexAt(%d) = %s, want %s", i, got.Name, ix.Name)
		}
		if pos, ok := m.IndexPos(ix.Name); !ok || pos != i {
			t.Errorf("IndexPos(%s) = %d, %v", ix.Name, pos, ok)
		}
	}
	if _, ok := m.IndexPos("spec.c"); ok {
		t.Error("IndexPos found an undeclared index")
	}
	d := DefaultIndexes()
	d[0].Name = "changed"
	if m.IndexAt(0).Name == "changed" {
		t.Error("changing DefaultIndexes() changed every model's")
	}
}
