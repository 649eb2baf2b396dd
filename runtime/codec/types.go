package codec

import (
	"encoding"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/validation"
)

// TypeErrors explains why a JSON document does not decode into a Go value
// of type t: doc is the document (decoded with json.Decoder.UseNumber, so
// that numbers keep their text) and err what encoding/json answered. It
// reports every value t cannot hold, with its path ("spec.tags[1]",
// "metadata.labels[team]") and a message free of Go type names; encoding/json
// names the first one only, as "Go struct field PersonSpec.spec.age of type
// int64". A schema check accepts what a Go type may not: JSON Schema calls
// 1.0 and 1e2 integers, but encoding/json puts neither into an int64.
// When the walk finds nothing, err's field is reported if it has one.
func TypeErrors(doc any, t reflect.Type, err error) object.FieldErrors {
	var errs object.FieldErrors
	typeErrors(doc, t, nil, &errs)
	if len(errs) == 0 {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			f := typ.Field
			if f == "" {
				f = "(root)"
			}
			errs.Add(f, "must be %s", kindName(typ.Type))
		}
	}
	return errs
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	unstructuredType    = reflect.TypeFor[object.Unstructured]()
	envelopeType        = reflect.TypeFor[object.Envelope]()
)

// typeErrors walks v beside t as encoding/json decodes it.
func typeErrors(v any, t reflect.Type, p *validation.Path, errs *object.FieldErrors) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return // null leaves any Go value as it is
	}
	if t == unstructuredType {
		t = envelopeType // its envelope is typed, the rest kept raw
	}
	if pt := reflect.PointerTo(t); pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		return // decodes itself (time.Time, raw JSON): its own rules apply
	}
	bad := func() { errs.Add(p.String(), "must be %s", kindName(t)) }
	switch t.Kind() {
	case reflect.Interface:
		return
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		fields := JSONFields(t, false)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if ft, ok := lookup(fields, k); ok {
				typeErrors(m[k], ft, &validation.Path{Parent: p, Name: k}, errs)
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			typeErrors(m[k], t.Elem(), &validation.Path{Parent: p, Name: k, Kind: validation.StepKey}, errs)
		}
	case reflect.Slice, reflect.Array:
		if _, ok := v.(string); ok && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return // []byte takes base64 text
		}
		a, ok := v.([]any)
		if !ok {
			bad()
			return
		}
		for i, e := range a {
			typeErrors(e, t.Elem(), &validation.Path{Parent: p, Index: i, Kind: validation.StepIndex}, errs)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			bad()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			bad()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if msg, ok := numberError(v, t); !ok {
			errs.Add(p.String(), "%s", msg)
		}
	}
}

// numberError checks that v is a JSON number that a Go number of type t
// holds, as encoding/json decodes it; otherwise it says what v must be.
func numberError(v any, t reflect.Type) (string, bool) {
	var text string
	switch n := v.(type) {
	case json.Number:
		text = string(n)
	case float64: // a document decoded without UseNumber
		text = strconv.FormatFloat(n, 'g', -1, 64)
	default:
		return "must be " + kindName(t), false
	}
	bits := t.Bits()
	var err error
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		if _, err := strconv.ParseFloat(text, bits); err != nil {
			return "must be within the range of a " + strconv.Itoa(bits) + "-bit floating-point number", false
		}
		return "", true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(text, 10, bits)
	default:
		_, err = strconv.ParseInt(text, 10, bits)
	}
	if err == nil {
		return "", true
	}
	// JSON number syntax parses (to ±Inf when huge).
	f, _ := strconv.ParseFloat(text, 64)
	lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64
	if unsigned {
		lo, hi = 0, math.Ldexp(1, bits)
	}
	literal := !strings.ContainsAny(text, ".eE")
	switch {
	case !literal && f != math.Trunc(f):
		return "must be an integer", false
	case !literal && f >= lo && f < hi:
		// Whole and in range, but a Go integer takes integer literals
		// only: 1.0 and 1e2 are refused.
		return "must be an integer written without a fraction or exponent", false
	case unsigned && strings.HasPrefix(text, "-"):
		return "must be >= 0", false
	case unsigned:
		return "must be an unsigned " + strconv.Itoa(bits) + "-bit integer", false
	}
	return "must be a " + strconv.Itoa(bits) + "-bit integer", false
}

// kindName is what a value of Go type t is in JSON terms.
func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}

// JSONFields maps the JSON names of struct type t to field types,
// following embedded structs the way encoding/json does. Fields tagged
// ",string" (whose value is text) are left out unless text is set.
func JSONFields(t reflect.Type, text bool) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for name, f := range structFields(t) {
		_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !text && strings.Contains(","+opts+",", ",string,") {
			continue // ",string" fields take their value as text: not walked
		}
		out[name] = f.Type
	}
	return out
}

// structFields maps the JSON names of struct type t to its fields, each
// Index a path from t (through embedded structs, pointers included).
func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, sf := range structFields(ft) {
					if _, ok := out[k]; !ok {
						sf.Index = append([]int{i}, sf.Index...)
						out[k] = sf
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// lookup finds k's field as encoding/json does: the exact name, else one
// that equals it ignoring case.
func lookup(fields map[string]reflect.Type, k string) (reflect.Type, bool) {
	if ft, ok := fields[k]; ok {
		return ft, true
	}
	for name, ft := range fields {
		if strings.EqualFold(name, k) {
			return ft, true
		}
	}
	return nil, false
}

// UnknownFields walks a decoded JSON document alongside the Go type it is
// decoded into and reports every key the type does not declare, with its
// path. encoding/json names the first unknown key only, without a path.
func UnknownFields(doc any, t reflect.Type) object.FieldErrors {
	return unknownFields(doc, t, "")
}

func unknownFields(doc any, t reflect.Type, path string) object.FieldErrors {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // decodes itself; its own rules apply
	}
	var out object.FieldErrors
	switch v := doc.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := JSONFields(t, true) // a ",string" field is still known
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				ft, ok := fields[k]
				if !ok {
					out = append(out, object.FieldError{Field: join(path, k), Message: "unknown field"})
					continue
				}
				out = append(out, unknownFields(v[k], ft, join(path, k))...)
			}
		case reflect.Map:
			for k, e := range v {
				out = append(out, unknownFields(e, t.Elem(), path+"["+k+"]")...)
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range v {
				out = append(out, unknownFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]")...)
			}
		}
	}
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
