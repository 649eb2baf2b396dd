// Package kintest is the test harness of the fixture packages: it holds a
// model's FullSchema as the kin-openapi oracle, mutates JSON documents,
// fills typed values at random, and checks that the generated validators
// agree with kin-openapi. Only tests import it.
package kintest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/generator/validators"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/schemas"
)

// Oracle validates documents with kin-openapi.
type Oracle struct {
	Schema *openapi3.Schema
	opts   []openapi3.SchemaValidationOption
}

// Load reads the OpenAPI document at file (and the base document) and
// returns the oracle of model.
func Load(t testing.TB, file, model string) *Oracle {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	base, err := openapi3.NewLoader().LoadFromData(schemas.Base)
	if err != nil {
		t.Fatal(err)
	}
	full, err := validators.FullSchema(doc, base, model)
	if err != nil {
		t.Fatal(err)
	}
	return &Oracle{Schema: full, opts: validators.KinOptions()}
}

// Visit returns kin-openapi's verdict on doc.
func (o *Oracle) Visit(doc any) error { return o.Schema.VisitJSON(doc, o.opts...) }

// Flatten turns a kin-openapi error into field errors, for messages.
func Flatten(err error) []string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var out []string
		for _, e := range me {
			out = append(out, Flatten(e)...)
		}
		return out
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return []string{strings.Join(se.JSONPointer(), ".") + ": " + se.Reason}
	}
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}

// Decode decodes data as the HTTP layer does: into an any, numbers as
// float64 or, with useNumber, as json.Number.
func Decode(data []byte, useNumber bool) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if useNumber {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// Typed is a generated model.
type Typed interface {
	Validate(errs *object.FieldErrors)
}

// Model bundles what the agreement checks need of one generated model.
type Model[T any] struct {
	Oracle       *Oracle
	ValidateJSON func(doc any, errs *object.FieldErrors)
}

// Agree decodes data both ways, applies ops (see Mutate), and checks that
// ValidateJSON accepts exactly what kin-openapi accepts, that it reports
// the same errors when run twice, and that a document both accept decodes
// strictly into T and passes T's Validate.
func Agree[T any, PT interface {
	*T
	Typed
}](t *testing.T, m Model[T], data, ops []byte) {
	t.Helper()
	for _, useNumber := range []bool{false, true} {
		doc, err := Decode(data, useNumber)
		if err != nil {
			return
		}
		doc = Mutate(doc, ops)
		var errs, again object.FieldErrors
		m.ValidateJSON(doc, &errs)
		m.ValidateJSON(doc, &again)
		if !slices.Equal(errs, again) {
			t.Fatalf("two runs on %s gave different errors:\n%v\n%v", show(doc), errs, again)
		}
		kinErr := m.Oracle.Visit(doc)
		if (len(errs) == 0) != (kinErr == nil) {
			t.Fatalf("disagreement on %s (numbers as json.Number: %v)\ngenerated: %v\nkin-openapi: %v",
				show(doc), useNumber, errs, Flatten(kinErr))
		}
		if len(errs) > 0 || useNumber {
			continue
		}
		canonical, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		obj := PT(new(T))
		dec := json.NewDecoder(bytes.NewReader(canonical))
		dec.DisallowUnknownFields()
		if err := dec.Decode(obj); err != nil {
			if IsMaxInt64Quirk(err) {
				continue
			}
			t.Fatalf("accepted document %s does not decode: %v", canonical, err)
		}
		var typed object.FieldErrors
		obj.Validate(&typed)
		if len(typed) > 0 {
			t.Fatalf("accepted document %s fails the typed Validate: %v", canonical, typed)
		}
	}
}

// IsMaxInt64Quirk reports a decoding error caused by 2^63 in an int64
// field, which kin-openapi (and so the JSON validators) accept as
// math.MaxInt64 because float64 cannot tell the two apart.
func IsMaxInt64Quirk(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te) && te.Value == "number 9223372036854775808"
}

func show(doc any) string {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Sprintf("%#v", doc)
	}
	return string(b)
}

// SameErrors compares the typed errors of a value with the JSON errors of
// its encoding. They match exactly, except that a nil required list or
// map is "is required" to the typed validator and an encoded null to the
// JSON one.
func SameErrors(typed, fromJSON object.FieldErrors) bool {
	if len(typed) != len(fromJSON) {
		return false
	}
	for i := range typed {
		a, b := typed[i], fromJSON[i]
		if a.Field != b.Field {
			return false
		}
		if a.Message != b.Message && (a.Message != "is required" || b.Message != "must not be null") {
			return false
		}
	}
	return true
}

// Property checks n random values of T: each is base() with up to three
// places refilled at random (see Perturb), or, one time in four, with
// every field refilled. The typed Validate of each must agree with
// kin-openapi on its JSON encoding, and report the same errors as
// ValidateJSON on that encoding. A value that cannot be encoded (NaN, a
// time outside years 0-9999) must fail the typed Validate. base must
// return a fresh, valid value.
func Property[T any, PT interface {
	*T
	Typed
}](t *testing.T, m Model[T], f *Filler, n int, base func() PT) {
	t.Helper()
	valid := 0
	for range n {
		obj := base()
		if f.R.IntN(4) == 0 {
			f.Fill(obj)
		} else {
			f.Perturb(obj, f.R.IntN(4))
		}
		var typed object.FieldErrors
		obj.Validate(&typed)
		data, err := json.Marshal(obj)
		if err != nil {
			if len(typed) == 0 {
				t.Fatalf("%+v cannot be encoded (%v), but the typed Validate accepts it", obj, err)
			}
			continue
		}
		doc, err := Decode(data, false)
		if err != nil {
			t.Fatal(err)
		}
		if kinErr := m.Oracle.Visit(doc); (kinErr == nil) != (len(typed) == 0) {
			t.Fatalf("typed Validate and kin-openapi disagree on %s\ntyped: %v\nkin-openapi: %v", data, typed, Flatten(kinErr))
		}
		var fromJSON object.FieldErrors
		m.ValidateJSON(doc, &fromJSON)
		if !SameErrors(typed, fromJSON) {
			t.Fatalf("typed and JSON validators report differently on %s\ntyped: %v\nJSON:  %v", data, typed, fromJSON)
		}
		if len(typed) == 0 {
			valid++
		}
	}
	// Both outcomes must be common for the comparison to mean much.
	if valid < n/10 || valid > n*9/10 {
		t.Errorf("%d of %d random values were valid; adjust the filler", valid, n)
	}
}
