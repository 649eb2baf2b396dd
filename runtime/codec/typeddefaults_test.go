package codec_test

import (
	"encoding/json"
	"testing"

	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// personWithDefaults is the generated Person model with defaults at every
// kind of place: scalars, an enum, a list, and an object whose own
// property has a default below it.
func personWithDefaults() *model.Model {
	m := example.PersonModel()
	m.Defaults = &model.Defaults{Props: map[string]*model.Defaults{
		"spec": {Props: map[string]*model.Defaults{
			"age":    {Value: json.RawMessage(`30`)},
			"gender": {Value: json.RawMessage(`"FEMALE"`)},
			"tags":   {Value: json.RawMessage(`["new"]`)},
		}},
		"status": {Value: json.RawMessage(`{}`), Props: map[string]*model.Defaults{
			"friendCount": {Value: json.RawMessage(`0`)},
		}},
	}}
	return m
}

// The typed defaults give exactly the object the generic decode gives
// (JSON document, defaults, encoding/json), for every body the generated
// decoder reads.
func TestTypedDefaultsMatchTheGenericDecode(t *testing.T) {
	m := personWithDefaults()
	fill := codec.TypedDefaults(m)
	if fill == nil {
		t.Fatal("no typed defaults for the Person model")
	}
	const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
	bodies := []string{
		`{` + id + `"metadata":{"name":"a"},"spec":{"name":"A"}}`,
		`{` + id + `"metadata":{"name":"a"},"spec":{"name":"A","age":41}}`,
		`{` + id + `"metadata":{"name":"a"},"spec":{"name":"A","gender":"MALE","tags":["x","y"]},"status":{}}`,
		`{` + id + `"metadata":{"name":"a"},"spec":{"name":"A"},"status":{"friendCount":3}}`,
	}
	for _, b := range bodies {
		obj, ok := m.DecodeJSON([]byte(b))
		if !ok {
			t.Fatalf("the generated decoder refused %s", b)
		}
		fill(obj)
		matchesGeneric(t, m, obj, b)
	}
	// A filled-in default is the object's own: filling another object does
	// not share it.
	one, _ := m.DecodeJSON([]byte(bodies[0]))
	two, _ := m.DecodeJSON([]byte(bodies[0]))
	fill(one)
	fill(two)
	p1, p2 := one.(*example.Person), two.(*example.Person)
	*p1.Spec.Age = 99
	p1.Spec.Tags[0] = "changed"
	if *p2.Spec.Age != 30 || p2.Spec.Tags[0] != "new" {
		t.Fatalf("defaults shared between objects: %d %v", *p2.Spec.Age, p2.Spec.Tags)
	}
}

// A default the typed value cannot take (a property held by value, or a
// default of the wrong type) leaves the model to the generic decode.
func TestTypedDefaultsRefuseWhatTheTypeCannotTell(t *testing.T) {
	for name, d := range map[string]*model.Defaults{
		"required scalar": {Props: map[string]*model.Defaults{"spec": {Props: map[string]*model.Defaults{"name": {Value: json.RawMessage(`"x"`)}}}}},
		"wrong type":      {Props: map[string]*model.Defaults{"spec": {Props: map[string]*model.Defaults{"age": {Value: json.RawMessage(`"old"`)}}}}},
		"unknown":         {Props: map[string]*model.Defaults{"spec": {Props: map[string]*model.Defaults{"nope": {Value: json.RawMessage(`1`)}}}}},
	} {
		m := example.PersonModel()
		m.Defaults = d
		if codec.TypedDefaults(m) != nil {
			t.Errorf("%s: typed defaults built", name)
		}
	}
}

// The decode of a create's body with defaults: generated decoder and typed
// defaults, against the generic decode (JSON document, defaults, schema
// check, encoding/json).
func BenchmarkDecodeNewWithDefaults(b *testing.B) {
	m := personWithDefaults()
	body := []byte(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","labels":{"team":"t1"}},"spec":{"name":"Ann","email":"ann@example.com","friend":"bob"}}`)
	b.Run("typed", func(b *testing.B) {
		fill := codec.TypedDefaults(m)
		b.ReportAllocs()
		for b.Loop() {
			obj, ok := m.DecodeJSON(body)
			if !ok {
				b.Fatal("refused")
			}
			fill(obj)
		}
	})
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codec.DecodeNew(m, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Whatever the body, when the generated decoder reads it, filling the
// typed defaults gives the object the generic decode gives.
func FuzzTypedDefaults(f *testing.F) {
	m := personWithDefaults()
	fill := codec.TypedDefaults(m)
	const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
	f.Add(`{` + id + `"metadata":{"name":"a"},"spec":{"name":"A"}}`)
	f.Add(`{` + id + `"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"name":"A","tags":["t"],"age":7},"status":{}}`)
	f.Add(`{` + id + `"metadata":{"name":"a"},"spec":{"name":"A","gender":"MALE"},"status":{"friendCount":2}}`)
	f.Fuzz(func(t *testing.T, body string) {
		obj, ok := m.DecodeJSON([]byte(body))
		if !ok {
			return
		}
		fill(obj)
		// What the HTTP API then checks before it takes the object (api's
		// decodeFast): anything else goes the generic way anyway.
		if env := obj.GetEnvelope(); env.APIVersion != m.APIVersion() || env.Kind != m.Kind || len(store.Validate(m, obj)) > 0 {
			return
		}
		matchesGeneric(t, m, obj, body)
	})
}

// matchesGeneric checks that obj, what the generated decoder read of body
// with the typed defaults filled in, is the object the generic decode
// gives (JSON document, defaults, encoding/json).
func matchesGeneric(t *testing.T, m *model.Model, obj object.Object, body string) {
	t.Helper()
	want, err := codec.DecodeNew(m, []byte(body))
	if err != nil {
		t.Fatalf("the generated decoder read %s, the generic decode refused it: %v", body, err)
	}
	got, _ := json.Marshal(obj)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("%s:\n  typed %s\ngeneric %s", body, got, exp)
	}
}
