// Package codec turns request bytes into typed objects of a model, checking
// them first with the model's compiled schema validator. The HTTP layer and
// the typed clients share it, so a patch applied in process is held to the
// same rules as one sent over HTTP.
package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

// Error is input that is not a valid object of the model: malformed JSON,
// or every schema violation with its path in Fields.
type Error struct {
	Detail string
	Fields object.FieldErrors
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return e.Detail
	}
	return e.Detail + ": " + (&object.InvalidError{Errors: e.Fields}).Error()
}

// IdentityErrors reports the apiVersion and kind a body gives (nil: none)
// that are not m's. The body must name the URL's model (docs/api.md), and
// "" names none. An absent one is the schema's to require, or the store's
// to fill in for models without a schema.
func IdentityErrors(m *model.Model, apiVersion, kind *string) object.FieldErrors {
	var errs object.FieldErrors
	if apiVersion != nil && *apiVersion != m.APIVersion() {
		errs.Add("apiVersion", "must be %q for %s, not %q", m.APIVersion(), m.Plural, *apiVersion)
	}
	if kind != nil && *kind != m.Kind {
		errs.Add("kind", "must be %q for %s, not %q", m.Kind, m.Plural, *kind)
	}
	return errs
}

// Decode checks data's apiVersion and kind (IdentityErrors) and its schema
// with m.ValidateJSON (when the model has one), and decodes it into a new
// object of m. Field rules beyond the schema (metadata syntax,
// model.Validate) are the store's to check; when the object is refused,
// the metadata rules are reported with the rest.
func Decode(m *model.Model, data []byte) (object.Object, error) {
	return decode(m, data, false)
}

// DecodeNew is Decode for an object described whole for the first time
// (a create, an extension file): m's defaults fill in what data leaves
// out first, so a required property with a default may be left out.
// Updates, patches and status writes decode with Decode: their bodies
// stand on the stored object, whose empty lists and maps read as absent
// (the generated types omit them), and defaulting those again would turn
// an identical write into a change.
func DecodeNew(m *model.Model, data []byte) (object.Object, error) {
	return decode(m, data, true)
}

func decode(m *model.Model, data []byte, fresh bool) (object.Object, error) {
	doc, err := document(data)
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return nil, &Error{Detail: fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &Error{Detail: "malformed JSON: unexpected end of input"}
	case err != nil:
		return nil, &Error{Detail: fmt.Sprintf("cannot decode the object: %v", err)}
	}
	if fresh {
		// The typed decode below reads data: it gets the defaults too.
		if data, err = withDefaults(m, doc, data); err != nil {
			return nil, err
		}
	}
	var errs object.FieldErrors
	if root, ok := doc.(map[string]any); ok {
		str := func(k string) *string {
			if s, ok := root[k].(string); ok {
				return &s
			}
			return nil
		}
		errs = IdentityErrors(m, str("apiVersion"), str("kind"))
	}
	if m.ValidateJSON != nil {
		m.ValidateJSON(doc, &errs)
	}
	obj := m.NewObject()
	if len(errs) == 0 {
		err := json.Unmarshal(data, obj)
		if err == nil {
			return obj, nil
		}
		// The schema accepted what the Go type cannot hold (1.0 for an
		// int64, say): still the input at fault.
		if errs = TypeErrors(doc, reflect.TypeOf(obj), err); len(errs) == 0 {
			return nil, &Error{Detail: fmt.Sprintf("cannot decode the object: %v", err)}
		}
	}
	// Every violation at once (docs/api.md): the metadata rules the store
	// would check next, on the document, since the object did not decode.
	errs.Merge(metadataErrors(doc))
	return nil, &Error{Detail: "the object is invalid; see errors", Fields: errs}
}

// WithDefaults returns data with m's defaults filled in (data itself when
// m declares none or data lacks nothing), for decoders other than Decode.
// Data that is not one JSON value is returned as it is, for the decode
// that follows to report.
func WithDefaults(m *model.Model, data []byte) ([]byte, error) {
	if m.Defaults == nil {
		return data, nil
	}
	doc, err := document(data)
	if err != nil {
		return data, nil // the decode that follows reports it
	}
	return withDefaults(m, doc, data)
}

// document decodes data as one generic JSON value, numbers kept as
// json.Number; anything after the value is an error.
func document(data []byte) (any, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	return doc, nil
}

// withDefaults fills m's defaults into doc, decoded from data, and
// returns data re-encoded if that changed anything, else data itself.
func withDefaults(m *model.Model, doc any, data []byte) ([]byte, error) {
	changed, err := m.Defaults.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("codec: %s: %w", m.GVK(), err)
	}
	if !changed {
		return data, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("codec: %s: encode with defaults: %w", m.GVK(), err)
	}
	return out, nil
}

// metadataErrors checks the metadata of a document with the store's rules
// (object.ValidateMetadata). It reads the document, not a typed object,
// so it works where the typed decode does not; values of the wrong type
// are left out (the schema or TypeErrors names them).
func metadataErrors(doc any) object.FieldErrors {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	raw, _ := root["metadata"].(map[string]any)
	var md object.Metadata
	md.Name, _ = raw["name"].(string)
	md.GenerateName, _ = raw["generateName"].(string)
	md.Labels = stringMap(raw["labels"])
	md.Annotations = stringMap(raw["annotations"])
	if fs, ok := raw["finalizers"].([]any); ok {
		for _, f := range fs {
			s, ok := f.(string)
			if !ok {
				// A gap would shift the indexes the errors name.
				md.Finalizers = nil
				break
			}
			md.Finalizers = append(md.Finalizers, s)
		}
	}
	var errs object.FieldErrors
	object.ValidateMetadata(&md, &errs)
	return errs
}

// stringMap returns the string entries of a JSON object.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	var out map[string]string
	for k, e := range m {
		if s, ok := e.(string); ok {
			if out == nil {
				out = make(map[string]string, len(m))
			}
			out[k] = s
		}
	}
	return out
}
