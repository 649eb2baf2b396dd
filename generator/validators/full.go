package validators

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// MetaSchema is the component of the base document that describes
// metadata.
const MetaSchema = "ObjectMeta"

// FullSchema returns the schema of a whole object of model: a deep copy
// of the model's component schema in doc with the envelope added
// (apiVersion and kind strings and metadata, from base's ObjectMeta, all
// three required) and every $ref inlined. It states what the generated
// ValidateKJSON enforces, so that kin-openapi agrees with it (see
// KinOptions):
//
//   - every object schema without additionalProperties gets
//     additionalProperties: false, so that unknown fields are rejected;
//   - every integer without a format gets format int64, the range of its
//     Go type.
func FullSchema(doc, base *openapi3.T, model string) (*openapi3.Schema, error) {
	ref, err := component(doc, model)
	if err != nil {
		return nil, fmt.Errorf("validators: model: %w", err)
	}
	if !ref.Value.Type.Is(openapi3.TypeObject) {
		return nil, fmt.Errorf("validators: model %q is not an object schema", model)
	}
	metaRef, err := component(base, MetaSchema)
	if err != nil {
		return nil, fmt.Errorf("validators: base document: %w", err)
	}
	meta, err := (&inliner{doc: base}).schema(metaRef)
	if err != nil {
		return nil, fmt.Errorf("validators: base %s: %w", MetaSchema, err)
	}
	s, err := (&inliner{doc: doc}).schema(ref)
	if err != nil {
		return nil, fmt.Errorf("validators: model %q: %w", model, err)
	}
	props := openapi3.Schemas{
		"apiVersion": openapi3.NewStringSchema().NewRef(),
		"kind":       openapi3.NewStringSchema().NewRef(),
		"metadata":   meta.NewRef(),
	}
	for name, p := range s.Properties {
		if props[name] != nil {
			return nil, fmt.Errorf("validators: model %q declares %q, which the envelope provides", model, name)
		}
		props[name] = p
	}
	s.Properties = props
	required := []string{"apiVersion", "kind", "metadata"}
	for _, r := range s.Required {
		if !slices.Contains(required, r) {
			required = append(required, r)
		}
	}
	s.Required = required
	// The result shares nothing with doc or base: a caller may edit it.
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("validators: copy schema of %q: %w", model, err)
	}
	out := &openapi3.Schema{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("validators: copy schema of %q: %w", model, err)
	}
	return out, nil
}

func component(doc *openapi3.T, name string) (*openapi3.SchemaRef, error) {
	if doc == nil || doc.Components == nil || doc.Components.Schemas[name] == nil || doc.Components.Schemas[name].Value == nil {
		return nil, fmt.Errorf("no component schema %q", name)
	}
	return doc.Components.Schemas[name], nil
}

// inliner copies schemas with their $refs replaced by copies of the
// targets.
type inliner struct {
	doc   *openapi3.T
	stack []*openapi3.Schema
}

func (in *inliner) ref(r *openapi3.SchemaRef) (*openapi3.SchemaRef, error) {
	if r == nil {
		return nil, nil
	}
	s, err := in.schema(r)
	if err != nil {
		return nil, err
	}
	return s.NewRef(), nil
}

func (in *inliner) schema(r *openapi3.SchemaRef) (*openapi3.Schema, error) {
	v := r.Value
	if r.Ref != "" {
		name, ok := strings.CutPrefix(r.Ref, componentPrefix)
		t := in.doc.Components.Schemas[name]
		if !ok || t == nil || t.Value == nil {
			return nil, fmt.Errorf("cannot resolve $ref %q", r.Ref)
		}
		v = t.Value
	}
	if v == nil {
		return nil, fmt.Errorf("missing schema")
	}
	if slices.Contains(in.stack, v) {
		return nil, fmt.Errorf("recursive schema cannot be inlined")
	}
	in.stack = append(in.stack, v)
	defer func() { in.stack = in.stack[:len(in.stack)-1] }()

	c := *v
	var err error
	if v.Properties != nil {
		c.Properties = make(openapi3.Schemas, len(v.Properties))
		for k, p := range v.Properties {
			if c.Properties[k], err = in.ref(p); err != nil {
				return nil, err
			}
		}
	}
	if c.Items, err = in.ref(v.Items); err != nil {
		return nil, err
	}
	if c.AdditionalProperties.Schema, err = in.ref(v.AdditionalProperties.Schema); err != nil {
		return nil, err
	}
	if c.Not, err = in.ref(v.Not); err != nil {
		return nil, err
	}
	for _, list := range []*openapi3.SchemaRefs{&c.AllOf, &c.AnyOf, &c.OneOf} {
		if len(*list) == 0 {
			continue
		}
		refs := make(openapi3.SchemaRefs, len(*list))
		for i, x := range *list {
			if refs[i], err = in.ref(x); err != nil {
				return nil, err
			}
		}
		*list = refs
	}
	if c.Type.Is(openapi3.TypeObject) && c.AdditionalProperties.Has == nil && c.AdditionalProperties.Schema == nil {
		c.AdditionalProperties.Has = openapi3.Ptr(false)
	}
	if c.Type.Is(openapi3.TypeInteger) && c.Format == "" {
		c.Format = "int64"
	}
	return &c, nil
}
