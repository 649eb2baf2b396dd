package example

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

func ptr[T any](v T) *T { return &v }

// personKinds is a table of Persons with every kind of field the
// generated encoder writes: absent and present pointers, empty and nil
// lists and maps, strings that need escaping, times with and without
// fractions and zones.
func personKinds() []*Person {
	at := time.Date(2026, 11, 26, 13, 4, 5, 120000000, time.UTC)
	zoned := time.Date(1999, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -7*3600-30*60))
	full := NewPerson("ann")
	full.Metadata = object.Metadata{Name: "ann", GenerateName: "a-", Labels: map[string]string{"z": "1", "a": "<&>"},
		Annotations: map[string]string{"note": "line\nbreak \u2028 \"q\" \\ \x01 \xff é"}, Version: ptr(int64(7)),
		CreationTimestamp: &at, DeletionTimestamp: &zoned, Finalizers: []string{"b", "a"}}
	full.Spec = PersonSpec{Age: ptr(int64(-3)), Email: ptr("a@b.c"), Friend: ptr(""), Gender: ptr(PersonSpecGenderFEMALE),
		Name: "Ann <script>&</script>", Tags: []string{"", "x", "\u2029"}}
	full.Status = &PersonStatus{FriendCount: ptr(int64(1 << 62))}
	return []*Person{
		{},
		NewPerson("bob"),
		full,
		{Envelope: object.Envelope{Metadata: object.Metadata{Labels: map[string]string{}, Finalizers: []string{}, Version: ptr(int64(0))}},
			Spec: PersonSpec{Tags: []string{}}, Status: &PersonStatus{}},
		{Spec: PersonSpec{Age: ptr(int64(0)), Name: "\t\r\b\f\x7f"}},
	}
}

// TestEncodeMatchesEncodingJSON: the generated encoder writes what
// encoding/json writes for the same Person, byte for byte.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for i, p := range personKinds() {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodePersonJSON(nil, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("person %d:\n got %s, %v\nwant %s", i, got, err, want)
		}
	}
	// A time encoding/json refuses is refused.
	bad := NewPerson("x")
	bad.Metadata.CreationTimestamp = ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := encodePersonJSON(nil, bad); err == nil {
		t.Error("a year past 9999 encoded")
	}
}

// FuzzEncode: for any strings and numbers, the generated encoder writes
// what encoding/json writes, and decoding either gives the object back.
func FuzzEncode(f *testing.F) {
	f.Add("ann", "Ann", "a@b", "k", "v", int64(3), int64(1))
	f.Add("\xff<", "\u2028\\\"", "", "", "\x00", int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, name, spec, email, k, v string, age, n int64) {
		p := NewPerson(name)
		p.Metadata.Labels = map[string]string{k: v, v: k}
		p.Spec = PersonSpec{Name: spec, Email: &email, Age: &age, Tags: []string{k, v}}
		p.Status = &PersonStatus{FriendCount: &n}
		want, _ := json.Marshal(p)
		got, err := encodePersonJSON(nil, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("\n got %s, %v\nwant %s", got, err, want)
		}
	})
}

var testModel = PersonModel()

// genericDecode is the generic path's verdict on a body: the object the
// API would store, or its error.
func genericDecode(data []byte) (object.Object, error) {
	m := testModel
	obj, err := codec.Decode(m, data)
	if err != nil {
		return nil, err
	}
	if errs := store.Validate(m, obj); len(errs) > 0 {
		return nil, errs.Err()
	}
	return obj, nil
}

// fastDecode is the generated path's (runtime/api's decodeFast): ok only
// for a body it reads whole, of the model's apiVersion and kind, that the
// store would accept.
func fastDecode(data []byte) (object.Object, bool) {
	m := testModel
	obj, ok := m.DecodeJSON(data)
	if !ok || obj.GetEnvelope().APIVersion != m.APIVersion() || obj.GetEnvelope().Kind != m.Kind || len(store.Validate(m, obj)) > 0 {
		return nil, false
	}
	return obj, true
}

const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`

// bodies are request bodies the fast path must read (valid) or leave to
// the generic path (the rest).
var (
	validBodies = []string{
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":30,"gender":"FEMALE","email":"ann@example.com","tags":["a","b"]}}`,
		`{` + id + `"metadata":{"name":"ann","labels":{"a":"b"},"annotations":{"x":"\u00e9\n"},"version":3,"finalizers":["f"],"creationTimestamp":"2026-01-02T03:04:05.5+01:00"},"spec":{"name":"A\"nn","age":0,"friend":"bob","tags":["x","y"]},"status":{"friendCount":2}}`,
		` {"spec":{"name":"x"},` + id + `"metadata":{"generateName":"p-","labels":{}}} `,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann"},"status":{}}`,
	}
	// Valid bodies the fast path leaves to the generic one: an escaped
	// name, a repeated one, invalid UTF-8 or a lone surrogate (which
	// encoding/json replaces), an empty list (which the typed validator
	// reads as absent).
	slowBodies = []string{
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","tags":[]}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"n\u0061me":"Ann"}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","name":"Bob"}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann\ud800"}}`,
		"{" + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann` + "\xff" + `"}}`,
	}
	invalidBodies = []string{
		``, `null`, `[]`, `{`, `{}`, `"x"`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann"}} {}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","agee":1,"x":2}}`,
		`{` + id + `"metadata":{"name":"ann","x":1},"spec":{"name":"Ann"},"y":2}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":7,"age":"x"}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":1.0}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":1e2}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":null}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","tags":null}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann"},"status":null}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"Name":"Ann"}}`,
		`{` + id + `"metadata":{"name":"Bad_Name"},"spec":{"name":"Ann"}}`,
		`{` + id + `"metadata":{"name":"ann","creationTimestamp":"yesterday"},"spec":{"name":"Ann"}}`,
		`{` + id + `"metadata":{"name":"ann","version":-1.5},"spec":{"name":"Ann"}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":151,"gender":"X","email":"nope"}}`,
		`{"apiVersion":"x/v1","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
		`{"apiVersion":"people.example.com/v1alpha1","kind":"","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
		`{"kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
		`{` + id + `"spec":{"name":"Ann"}}`,
		`{` + id + `"metadata":{"name":"ann"}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":NaN}}`,
		`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":01}}`,
	}
)

// TestDecodeAgreesWithGeneric: the generated decoder reads the valid
// bodies into what the generic path makes of them, and leaves every
// invalid one to the generic path (which then names every violation).
func TestDecodeAgreesWithGeneric(t *testing.T) {
	for _, b := range validBodies {
		want, err := genericDecode([]byte(b))
		if err != nil {
			t.Fatalf("generic path refuses %s: %v", b, err)
		}
		got, ok := fastDecode([]byte(b))
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n fast %+v (ok %v)\n want %+v", b, got, ok, want)
		}
	}
	for _, b := range slowBodies {
		if got, ok := fastDecode([]byte(b)); ok {
			t.Errorf("fast path accepted %s as %+v", b, got)
		}
		if _, err := genericDecode([]byte(b)); err != nil {
			t.Errorf("generic path refuses %s: %v", b, err)
		}
	}
	for _, b := range invalidBodies {
		if got, ok := fastDecode([]byte(b)); ok {
			t.Errorf("fast path accepted %s as %+v", b, got)
		}
		if _, err := genericDecode([]byte(b)); err == nil {
			t.Errorf("generic path accepts %s", b)
		}
	}
}

// FuzzDecode: whatever the body, the fast path accepts only what the
// generic path accepts, and decodes it to the same object.
func FuzzDecode(f *testing.F) {
	for _, b := range append(append(validBodies, slowBodies...), invalidBodies...) {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// As a plain decoder (store.Decode): what it reads, encoding/json
		// reads the same.
		if got, ok := testModel.DecodeJSON(b); ok {
			var want Person
			if err := json.Unmarshal(b, &want); err != nil || !reflect.DeepEqual(got, &want) {
				t.Fatalf("%q: DecodeJSON %+v, encoding/json %+v, %v", b, got, &want, err)
			}
		}
		got, ok := fastDecode(b)
		if !ok {
			return
		}
		want, err := genericDecode(b)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %+v, generic %+v, %v", b, got, want, err)
		}
	})
}

// TestEncodeDecodeRoundTrip: what the generated encoder writes decodes
// back, on either path, to the same object.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	for i, p := range personKinds()[1:3] {
		p.Metadata.DeletionTimestamp = nil // not a client's to send
		p.Metadata.GenerateName = ""
		data, err := encodePersonJSON(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		var want Person
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := PersonModel().DecodeJSON(data)
		if !ok || !reflect.DeepEqual(got, &want) {
			t.Errorf("person %d: %s decodes to %+v (ok %v), want %+v", i, data, got, ok, &want)
		}
	}
}
