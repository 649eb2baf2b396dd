package example

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// benchBody is a create's body as the load tool sends it.
const benchBody = `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"lg-abc123-42","labels":{"team":"t2","loadgen.example.com/run":"abc123"},"annotations":{"loadgen.example.com/sent-unix-nano":"1764161234567890123"}},"spec":{"name":"Person 42","age":42,"email":"p42@example.com","tags":["a","b"],"friend":"lg-7"}}`

// BenchmarkDecodeValidateEncode is what a create costs before the store
// commits it: decode the body, validate it, encode what is stored; the
// generic path (codec.Decode: a generic document, the schema validator,
// encoding/json) against the generated one (DecodeJSON, the typed
// validator, EncodeJSON).
func BenchmarkDecodeValidateEncode(b *testing.B) {
	m := PersonModel()
	data := []byte(benchBody)
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			obj, err := codec.Decode(m, data)
			if err != nil {
				b.Fatal(err)
			}
			if errs := store.Validate(m, obj); len(errs) > 0 {
				b.Fatal(errs)
			}
			if _, err := json.Marshal(obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			obj, ok := fastDecode(data)
			if !ok {
				b.Fatal("fast path refused the body")
			}
			if _, err := m.EncodeJSON(make([]byte, 0, 512), obj); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecode is the decode alone: the generic path's document,
// schema validation and typed decode against the generated decoder.
func BenchmarkDecode(b *testing.B) {
	m := PersonModel()
	data := []byte(benchBody)
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := codec.Decode(m, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := m.DecodeJSON(data); !ok {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkEncode: encoding/json against the generated encoder.
func BenchmarkEncode(b *testing.B) {
	m := PersonModel()
	obj, ok := m.DecodeJSON([]byte(benchBody))
	if !ok {
		b.Fatal("refused")
	}
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.EncodeJSON(make([]byte, 0, 512), obj); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSetStatus is what an update pays to keep the stored status:
// the generated setter against object.SetStatus (encoding/json by
// reflection).
func BenchmarkSetStatus(b *testing.B) {
	m := PersonModel()
	raw := []byte(`{"friendCount":3}`)
	for _, s := range []struct {
		name string
		set  func(obj object.Object) error
	}{
		{"generated", func(obj object.Object) error {
			if !m.SetStatusJSON(obj, raw) {
				return errors.New("the generated setter declined a stored status")
			}
			return nil
		}},
		{"encoding-json", func(obj object.Object) error { return object.SetStatus(obj, raw) }},
	} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			p := &Person{}
			for b.Loop() {
				if err := s.set(p); err != nil || p.Status == nil || *p.Status.FriendCount != 3 {
					b.Fatal(err)
				}
			}
		})
	}
}
