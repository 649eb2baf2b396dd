package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// ReadJSONBody reads a request body declared as JSON within the server's
// limit: 415 for a body declared as anything else (as Kubernetes and Halo
// answer, rather than parse it as JSON anyway; none declared is read as
// JSON), 413 for one too large, 400 for an empty one. Handlers that decode
// a JSON body of their own use it.
func ReadJSONBody(c *gin.Context) ([]byte, error) {
	// The common header is compared before it is parsed: every create reads it.
	if ct := c.GetHeader("Content-Type"); ct != "" && ct != "application/json" && !isJSON(mediaType(c)) {
		return nil, problem.New(http.StatusUnsupportedMediaType, "Content-Type %q is not supported; send the body as application/json", ct)
	}
	return readBody(c)
}

// readBody reads the whole request body within the server's limits: its
// size and how deeply it nests (codec.MaxDepth).
func readBody(c *gin.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, problem.New(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", tooLarge.Limit)
	case err != nil:
		return nil, problem.New(http.StatusBadRequest, "cannot read request body: %v", err)
	case len(bytes.TrimSpace(body)) == 0:
		return nil, problem.Invalid("request body is empty; send the object as JSON")
	}
	// Before any decoder descends into it: a deep body costs the patch
	// library quadratic memory, and every body is held to one depth.
	if err := codec.CheckDepth(body); err != nil {
		return nil, err
	}
	return body, nil
}

// isJSON reports whether media type mt is JSON: application/json or a
// structured syntax suffix +json (RFC 6839), such as the patch types.
func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// DecodeBody reads a request body (ReadJSONBody) and decodes it strictly
// into a new object of m, with the generic API's errors (400 for an
// invalid one, naming every field). Custom handlers that accept a model's
// objects use it.
func DecodeBody(c *gin.Context, m *model.Model) (object.Object, error) {
	obj, _, err := decodeBody(c, m, false)
	return obj, err
}

// DecodeNewBody is DecodeBody for a body that describes a new object:
// m's defaults fill in what it leaves out (codec.DecodeNew says why only
// new objects). The generic create and custom handlers that create use it.
func DecodeNewBody(c *gin.Context, m *model.Model) (object.Object, error) {
	obj, _, err := decodeBody(c, m, true)
	return obj, err
}

// decodeBody reads the body and decodes it strictly into a new object of
// m (decodeStrict), returning the body too.
func decodeBody(c *gin.Context, m *model.Model, fresh bool) (object.Object, []byte, error) {
	body, err := ReadJSONBody(c)
	if err != nil {
		return nil, nil, err
	}
	obj, err := decodeStrict(m, body, fresh)
	return obj, body, err
}

// decodeStrict decodes data into a new object of m; fresh fills in m's
// defaults first (a create). Malformed JSON, a value of the wrong type and
// a field the model does not declare are 400s naming the field.
func decodeStrict(m *model.Model, data []byte, fresh bool) (object.Object, error) {
	if obj, ok := decodeFast(m, data, fresh); ok {
		return obj, nil
	}
	switch {
	case m.ValidateJSON != nil && fresh:
		return codec.DecodeNew(m, data)
	case m.ValidateJSON != nil:
		return codec.Decode(m, data)
	case fresh:
		var err error
		if data, err = codec.WithDefaults(m, data); err != nil {
			return nil, err
		}
	}
	obj := m.NewObject()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	err := dec.Decode(obj)
	if err == nil && dec.More() {
		err = errors.New("unexpected data after the JSON object")
	}
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = errors.New("unexpected data after the JSON object")
		}
	}
	if err == nil {
		return obj, checkIdentity(m, obj, data)
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return nil, problem.Invalid(fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn))
	case errors.As(err, &typ), strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json names the first of these only: report them all,
		// and the other violations too, so one round trip shows the
		// client everything to fix.
		if errs := everyViolation(m, data, err); len(errs) > 0 {
			return nil, problem.Invalid("the object is invalid; see errors", errs...)
		}
		return nil, problem.Invalid(err.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, problem.Invalid("malformed JSON: unexpected end of input")
	}
	return nil, problem.Invalid(fmt.Sprintf("cannot decode the object: %v", err))
}

// decodeFast decodes data with m's generated decoder, straight into its
// Go type, and reports false unless the object is valid as the store
// checks it (m's apiVersion and kind, metadata, the model's field rules): a body
// with anything to report is decoded again the generic way, which
// reports it (docs/api.md). A create fills m's defaults into the typed
// value (codec.TypedDefaults) before it is checked; a model whose type
// cannot take them that way decodes the generic way.
func decodeFast(m *model.Model, data []byte, fresh bool) (object.Object, bool) {
	if m.DecodeJSON == nil {
		return nil, false
	}
	var fill func(object.Object)
	if fresh && m.Defaults != nil {
		if fill = codec.TypedDefaults(m); fill == nil {
			return nil, false
		}
	}
	obj, ok := m.DecodeJSON(data)
	if !ok {
		return nil, false
	}
	if fill != nil && !fillSafely(fill, obj) {
		return nil, false
	}
	// Both are present (the schema requires them); "" names no model.
	if env := obj.GetEnvelope(); env.APIVersion != m.APIVersion() || env.Kind != m.Kind || len(store.Validate(m, obj)) > 0 {
		return nil, false
	}
	return obj, true
}

// fillSafely fills defaults into obj; a plan that meets a value it was not
// built for (a bug) leaves the body to the generic decode, not a panic.
func fillSafely(fill func(object.Object), obj object.Object) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fill(obj)
	return true
}

// everyViolation lists what is wrong with data, which failed to decode
// into an object of m with err (a wrong type or an unknown field): every
// value of the wrong type, every unknown field, and, read from a lenient
// decode (which skips the values of the wrong type), the violations the
// store would report. It returns nil if it finds none of the first two.
func everyViolation(m *model.Model, data []byte, err error) object.FieldErrors {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers keep their text (1.0 is not 1)
	if dec.Decode(&doc) != nil {
		return nil
	}
	t := reflect.TypeOf(m.NewObject())
	errs := codec.TypeErrors(doc, t, err)
	errs = append(errs, codec.UnknownFields(doc, t)...)
	if len(errs) == 0 {
		return nil
	}
	root, _ := doc.(map[string]any)
	str := func(k string) *string {
		if s, ok := root[k].(string); ok {
			return &s
		}
		return nil
	}
	errs.Merge(codec.IdentityErrors(m, str("apiVersion"), str("kind")))
	lenient := m.NewObject()
	var typ *json.UnmarshalTypeError
	if err := json.Unmarshal(data, lenient); err == nil || errors.As(err, &typ) {
		errs.Merge(store.Validate(m, lenient))
	}
	return errs
}

// checkIdentity refuses an apiVersion or kind given as "", which decodes
// like an absent one but names no model (docs/api.md), with every other
// violation of the object. The store fills in absent ones and checks the
// others.
func checkIdentity(m *model.Model, obj object.Object, data []byte) error {
	if env := obj.GetEnvelope(); env.APIVersion != "" && env.Kind != "" {
		return nil
	}
	var id struct {
		APIVersion *string `json:"apiVersion"`
		Kind       *string `json:"kind"`
	}
	if err := json.Unmarshal(data, &id); err != nil {
		return fmt.Errorf("api: decode apiVersion and kind again: %w", err)
	}
	errs := codec.IdentityErrors(m, id.APIVersion, id.Kind)
	if len(errs) == 0 {
		return nil
	}
	errs.Merge(store.Validate(m, obj))
	return problem.Invalid("the object is invalid; see errors", errs...)
}
