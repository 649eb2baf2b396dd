package store

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

type spliced struct {
	object.Envelope
	Spec struct {
		Note    string `json:"note"`
		Version *int64 `json:"version,omitempty"`
	} `json:"spec"`
}

// TestEncodeNextSplicesTheVersion: an update's bytes, spliced from the
// compared encoding, are what encoding the object with its new version
// writes, also when another member is named version too (then it is
// encoded again) or a string holds the member's text.
func TestEncodeNextSplicesTheVersion(t *testing.T) {
	m := &model.Model{Group: "g.example.com", Version: "v1", Kind: "Thing", Plural: "things",
		New: func() object.Object { return &spliced{} }}
	s := &Store{}
	for _, tc := range []struct {
		note string
		spec *int64
	}{
		{"plain", nil},
		{`"version":7,`, nil},
		{"spec has one", func() *int64 { v := int64(7); return &v }()},
	} {
		o := &spliced{}
		o.APIVersion, o.Kind, o.Metadata.Name = "g.example.com/v1", "Thing", "a"
		o.Spec.Note, o.Spec.Version = tc.note, tc.spec
		o.Metadata.SetVersion(7)
		same, err := marshal(m, o)
		if err != nil {
			t.Fatal(err)
		}
		o.Metadata.SetVersion(8)
		rec, err := s.encodeNext(m, o, same, 7)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(o)
		if !bytes.Equal(rec.Data, want) {
			t.Errorf("%s: spliced %s, want %s", tc.note, rec.Data, want)
		}
	}
}

// TestEntryKey: a put and a removal of one object frame the same key,
// which no other object's shares; a cut record has none.
func TestEntryKey(t *testing.T) {
	put := encodePut("g/persons", &Record{Name: "ann", Version: 3, Data: []byte(`{"a":1}`)})
	rm := encodeRemove("g/persons", "ann")
	kp, err := entryKey(put)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := entryKey(rm)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kp, kr) {
		t.Errorf("put key %q, removal key %q: want them equal", kp, kr)
	}
	for _, other := range [][]byte{encodeRemove("g/persons", "anna"), encodeRemove("g/person", "sann"), encodeRemove("g/personsa", "nn")} {
		if k, _ := entryKey(other); bytes.Equal(k, kp) {
			t.Errorf("%q has the key of ann: %q", other, k)
		}
	}
	for n := range len(kp) + 1 {
		if k, err := entryKey(rm[:n]); err == nil {
			t.Errorf("entryKey of %d of %d bytes = %q, want an error", n, len(rm), k)
		}
	}
}
