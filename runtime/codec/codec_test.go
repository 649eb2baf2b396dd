package codec_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

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
		// JSON Schema calls these integers; an int64 field takes none.
		{"integer with an exponent", `{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":1e2}}`,
			[]field{{"spec.age", "must be an integer written without a fraction or exponent"}}},
		{"integer with a fraction", `{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":1.0}}`,
			[]field{{"spec.age", "must be an integer written without a fraction or exponent"}}},
		{"whole floats everywhere", `{` + id + `"metadata":{"name":"ann","version":1.0},"spec":{"name":"Ann","age":2E1},"status":{"friendCount":2.0}}`,
			[]field{{"metadata.version", "without a fraction"}, {"spec.age", "without a fraction"}, {"status.friendCount", "without a fraction"}}},
		{"not an integer", `{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann","age":1.5}}`,
			[]field{{"spec.age", "must be an integer"}}},
		{"2^63", `{` + id + `"metadata":{"name":"ann","version":9223372036854775808},"spec":{"name":"Ann"}}`,
			[]field{{"metadata.version", "must be a 64-bit integer"}}},
		// The metadata rules are reported with the schema's violations,
		// each field once.
		{"schema and metadata", `{` + id + `"metadata":{"name":"Bad_Name","labels":{"a b":"c"}},"spec":{"name":"B","age":200,"agee":1}}`,
			[]field{{"spec.age", "must be <= 150"}, {"spec.agee", "unknown field"}, {"metadata.name", "lower case"}, {"metadata.labels[a b]", "invalid key"}}},
		{"other apiVersion, name and schema", `{"apiVersion":"x/v1","kind":"Person","metadata":{"name":"Bad_Name"},"spec":{"name":"B","age":200}}`,
			[]field{{"apiVersion", `not "x/v1"`}, {"spec.age", "must be <= 150"}, {"metadata.name", "lower case"}}},
		{"whole float and metadata", `{` + id + `"metadata":{"generateName":"-x","finalizers":["a","b/c/d"],"annotations":{"-":"x"}},"spec":{"name":"x","age":1.0}}`,
			[]field{{"spec.age", "without a fraction"}, {"metadata.generateName", "valid name prefix"}, {"metadata.annotations[-]", "invalid key"}, {"metadata.finalizers[1]", ""}}},
		{"long name once", `{` + id + `"metadata":{"name":"` + strings.Repeat("a", 254) + `"},"spec":{"name":"x","age":-1}}`,
			[]field{{"metadata.name", "at most 253 characters"}, {"spec.age", "must be >= 0"}}},
		{"metadata of the wrong type", `{` + id + `"metadata":5,"spec":{"name":"x","age":-1}}`,
			[]field{{"metadata", "must be an object"}, {"spec.age", "must be >= 0"}}},
		{"metadata values of the wrong type", `{` + id + `"metadata":{"name":1,"labels":{"a":1,"b c":"x"},"finalizers":[1,"a/b/c"]},"spec":{"name":"x"}}`,
			[]field{{"metadata.finalizers[0]", "must be a string"}, {"metadata.labels[a]", "must be a string"}, {"metadata.name", "must be a string"}, {"metadata.labels[b c]", "invalid key"}}},
		{"no metadata", `{` + id + `"spec":{"name":"x"}}`, []field{{"metadata", "is required"}}},
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
			if s := ce.Error(); strings.Contains(s, "Go ") || strings.Contains(s, "of type") {
				t.Errorf("error %q names Go types", s)
			}
		})
	}
}

func matches(got object.FieldErrors, want []field) bool {
	return slices.EqualFunc(got, want, func(g object.FieldError, w field) bool {
		return g.Field == w.path && strings.Contains(g.Message, w.msg)
	})
}

type inner struct {
	N int32 `json:"n"`
}

type embedded struct {
	E uint8 `json:"e"`
}

type typed struct {
	embedded
	I     int64            `json:"i"`
	U     uint16           `json:"u"`
	F     float32          `json:"f"`
	S     string           `json:"s"`
	B     bool             `json:"b"`
	P     *int             `json:"p"`
	List  []inner          `json:"list"`
	Map   map[string]int64 `json:"map"`
	Raw   []byte           `json:"raw"`
	Any   any              `json:"any"`
	When  time.Time        `json:"when"`
	Text  int64            `json:"text,string"`
	Upper int              `json:"Upper"`
	Skip  int              `json:"-"`
}

// TestTypeErrors: every value the Go type cannot hold, with its path, as
// encoding/json decides; values it can hold are not reported.
func TestTypeErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []field
	}{
		{"fits", `{"i":-9223372036854775808,"u":65535,"f":3.4e38,"s":"x","b":true,"p":null,"e":255,"list":[{"n":-2147483648}],
			"map":{"a":1},"raw":"AAE=","any":[1.5,{}],"when":"2026-01-01T00:00:00Z","text":"7","upper":1,"Skip":"x","other":1.5}`, nil},
		{"whole floats", `{"i":1.0,"u":1e2,"e":2E0,"p":3.00,"list":[{"n":1},{"n":-1e1}],"map":{"b":1,"a":0.0}}`, []field{
			{"e", "must be an integer written without a fraction or exponent"},
			{"i", "without a fraction"}, {"list[1].n", "without a fraction"}, {"map[a]", "without a fraction"},
			{"p", "without a fraction"}, {"u", "without a fraction"}}},
		{"out of range", `{"i":9223372036854775808,"u":65536,"e":-1,"f":1e39,"list":[{"n":2147483648}],"upper":1e30}`, []field{
			{"e", "must be >= 0"}, {"f", "within the range of a 32-bit floating-point number"}, {"i", "must be a 64-bit integer"},
			{"list[0].n", "must be a 32-bit integer"}, {"u", "must be an unsigned 16-bit integer"},
			{"upper", "must be a 64-bit integer"}}}, // the field "Upper", matched as encoding/json does
		{"fractions", `{"i":0.5,"u":-1.5}`, []field{{"i", "must be an integer"}, {"u", "must be an integer"}}},
		{"wrong kinds", `{"i":"1","s":1,"b":"true","list":{},"map":[],"any":1}`, []field{
			{"b", "must be a boolean"}, {"i", "must be an integer"}, {"list", "must be an array"}, {"map", "must be an object"}, {"s", "must be a string"}}},
		{"not an object", `[1]`, []field{{"(root)", "must be an object"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.doc))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			var v typed
			jerr := json.Unmarshal([]byte(tc.doc), &v)
			got := codec.TypeErrors(doc, reflect.TypeOf(&v), jerr)
			if (jerr == nil) != (tc.want == nil) {
				t.Fatalf("encoding/json: %v; the test wants violations %v", jerr, tc.want)
			}
			if !matches(got, tc.want) {
				t.Errorf("violations %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestTypeErrorsUnstructured: an Unstructured object types its envelope
// only.
func TestTypeErrorsUnstructured(t *testing.T) {
	const doc = `{"kind":1,"metadata":{"name":"x","version":1.0,"labels":{"a":2}},"spec":{"anything":1.0}}`
	var v object.Unstructured
	jerr := json.Unmarshal([]byte(doc), &v)
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var d any
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	got := codec.TypeErrors(d, reflect.TypeOf(&v), jerr)
	want := []field{{"kind", "must be a string"}, {"metadata.labels[a]", "must be a string"}, {"metadata.version", "without a fraction"}}
	if !matches(got, want) {
		t.Errorf("violations %v\nwant %v", got, want)
	}
}
