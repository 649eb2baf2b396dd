package codec_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/object"
)

// field is one expected violation: its path and a substring of its
// message.
type field struct{ path, msg string }

// TestDecodeReportsEveryViolation decodes bodies of the example plugin's
// generated Person (it has a schema validator) and checks the violations
// reported, in order.
func TestDecodeReportsEveryViolation(t *testing.T) {
	m := example.PersonModel()
	const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
	tests := []struct {
		name, body string
		want       []field // nil: decodes
	}{
		{"valid", `{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":30}}`, nil},
		{"empty apiVersion", `{"apiVersion":"","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
			[]field{{"apiVersion", `must be "people.example.com/v1alpha1" for persons, not ""`}}},
		{"empty kind", `{"apiVersion":"people.example.com/v1alpha1","kind":"","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
			[]field{{"kind", `must be "Person" for persons, not ""`}}},
		{"other kind and a constraint", `{"apiVersion":"people.example.com/v1alpha1","kind":"Dog","metadata":{"name":"ann"},"spec":{"name":"Ann","age":151}}`,
			[]field{{"kind", `not "Dog"`}, {"spec.age", "must be <= 150"}}},
		{"missing apiVersion and kind", `{"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
			[]field{{"apiVersion", "is required"}, {"kind", "is required"}}},
		{"apiVersion not a string", `{"apiVersion":1,"kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
			[]field{{"apiVersion", "must be a string"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := codec.Decode(m, []byte(tc.body))
			if tc.want == nil {
				if err != nil || obj == nil {
					t.Fatalf("Decode = %v, %v; want an object", obj, err)
				}
				return
			}
			var ce *codec.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Decode = %v, %v; want a *codec.Error", obj, err)
			}
			if !matches(ce.Fields, tc.want) {
				t.Errorf("violations %v\nwant %v", ce.Fields, tc.want)
			}
		})
	}
}

func matches(got object.FieldErrors, want []field) bool {
	return slices.EqualFunc(got, want, func(g object.FieldError, w field) bool {
		return g.Field == w.path && strings.Contains(g.Message, w.msg)
	})
}
