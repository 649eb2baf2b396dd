package gotypes

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// clone deep-copies doc through its JSON form; only local $refs survive.
func clone(doc *openapi3.T) (*openapi3.T, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("copy document: %w", err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	c, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("copy document: %w", err)
	}
	return c, nil
}

// normalize returns a copy of doc reduced to its component schemas, with
// every inline object schema hoisted into a component named after where
// it was (parent component, property, "Item" for array items, "Value"
// for map values).
func normalize(doc *openapi3.T) (*openapi3.T, error) {
	if doc == nil || doc.Components == nil || len(doc.Components.Schemas) == 0 {
		return nil, fmt.Errorf("the document has no components.schemas")
	}
	c, err := clone(&openapi3.T{
		OpenAPI:    doc.OpenAPI,
		Info:       &openapi3.Info{Title: "types", Version: "0"},
		Paths:      openapi3.NewPaths(),
		Components: &openapi3.Components{Schemas: doc.Components.Schemas},
	})
	if err != nil {
		return nil, err
	}
	h := &hoister{schemas: c.Components.Schemas}
	for _, name := range slices.Sorted(maps.Keys(h.schemas)) {
		ref := h.schemas[name]
		if ref.Value == nil {
			return nil, fmt.Errorf("component %q has no schema", name)
		}
		if err := h.walkTop(name, ref.Value); err != nil {
			return nil, err
		}
	}
	return c, nil
}

type hoister struct {
	schemas openapi3.Schemas
}

// walkTop hoists the inline objects below a component.
func (h *hoister) walkTop(typeName string, s *openapi3.Schema) error {
	if isStruct(s) {
		return h.walkProps(typeName, s)
	}
	return h.walkContainer(typeName, s)
}

func (h *hoister) walkProps(typeName string, s *openapi3.Schema) error {
	for _, prop := range slices.Sorted(maps.Keys(s.Properties)) {
		part := TypeName(prop)
		if part == "" {
			part = "Field"
		}
		r, err := h.child(typeName+part, s.Properties[prop])
		if err != nil {
			return err
		}
		s.Properties[prop] = r
	}
	return nil
}

func (h *hoister) walkContainer(prefix string, s *openapi3.Schema) error {
	if s.Items != nil {
		r, err := h.child(prefix+"Item", s.Items)
		if err != nil {
			return err
		}
		s.Items = r
	}
	if s.AdditionalProperties.Schema != nil {
		r, err := h.child(prefix+"Value", s.AdditionalProperties.Schema)
		if err != nil {
			return err
		}
		s.AdditionalProperties.Schema = r
	}
	return nil
}

// child returns ref, or a $ref to a new component named name holding it
// when it is an inline object schema.
func (h *hoister) child(name string, ref *openapi3.SchemaRef) (*openapi3.SchemaRef, error) {
	if ref == nil || ref.Ref != "" || ref.Value == nil {
		return ref, nil
	}
	v := ref.Value
	if !isStruct(v) {
		return ref, h.walkContainer(name, v)
	}
	if _, ok := h.schemas[name]; ok {
		return nil, fmt.Errorf("an inline object schema would become the type %s, but a component has that name; move the inline schema to components", name)
	}
	h.schemas[name] = &openapi3.SchemaRef{Value: v}
	if err := h.walkProps(name, v); err != nil {
		return nil, err
	}
	return &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: v}, nil
}

// isStruct reports whether s becomes a Go struct: an object with
// properties.
func isStruct(s *openapi3.Schema) bool {
	return s != nil && s.Type.Is(openapi3.TypeObject) && len(s.Properties) > 0
}
