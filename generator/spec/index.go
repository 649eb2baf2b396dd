package spec

import (
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/model"
)

// Index is one x-svc-indexes entry with its field resolved in the schema.
type Index struct {
	Name   string
	Field  string
	Unique bool
	Order  model.Order
	// Multi is set by a trailing [] on Field: one key per array element.
	Multi bool
	Type  model.KeyType
	// Path is the field's route through the schema, one step per dotted
	// segment.
	Path []Step
}

// Step is one property on an index's path.
type Step struct {
	// Prop is the property's JSON name.
	Prop string
	// Required reports whether the parent schema requires the property.
	Required bool
	// Schema is the property's schema, $ref resolved; for the last step of
	// a multi-valued index it is the array's.
	Schema *openapi3.Schema
}

var indexKeys = map[string]bool{"name": true, "field": true, "unique": true, "order": true}

func readIndexes(d *diags, ptr string, s *openapi3.Schema) []*Index {
	raw, ok := s.Extensions[ExtIndexes]
	if !ok {
		return nil
	}
	xptr := ptr + pointer(ExtIndexes)
	list, ok := raw.([]any)
	if !ok {
		d.add(xptr, "%s must be a list of {name, field, unique, order}", ExtIndexes)
		return nil
	}
	names := map[string]bool{}
	for _, ix := range model.DefaultIndexes() {
		names[ix.Name] = true
	}
	var out []*Index
	for i, item := range list {
		iptr := xptr + pointer(strconv.Itoa(i))
		fields, ok := item.(map[string]any)
		if !ok {
			d.add(iptr, "an index must be an object {name, field, unique, order}")
			continue
		}
		for k := range fields {
			if !indexKeys[k] {
				d.add(iptr+pointer(k), "unknown key %q (known: name, field, unique, order)", k)
			}
		}
		ix := &Index{}
		bad := false
		str := func(key string) string {
			v, ok := fields[key]
			if !ok {
				return ""
			}
			s, ok := v.(string)
			if !ok {
				d.add(iptr+pointer(key), "%s must be a string", key)
				bad = true
			}
			return s
		}
		ix.Field = str("field")
		ix.Name = str("name")
		if u, ok := fields["unique"]; ok {
			b, ok := u.(bool)
			if !ok {
				d.add(iptr+pointer("unique"), "unique must be true or false")
				bad = true
			}
			ix.Unique = b
		}
		switch o := str("order"); strings.ToLower(o) {
		case "", "asc":
		case "desc":
			ix.Order = model.Desc
		default:
			d.add(iptr+pointer("order"), "order must be asc or desc, not %q", o)
			bad = true
		}
		if ix.Field == "" {
			if !bad {
				d.add(iptr, "field is required: a dotted path such as spec.name (spec.tags[] for each element of an array)")
			}
			continue
		}
		if ix.Name == "" {
			ix.Name = strings.TrimSuffix(ix.Field, "[]")
		}
		if names[ix.Name] {
			d.add(iptr+pointer("name"), "index name %q is already taken (the defaults are metadata.name, metadata.labels, metadata.creationTimestamp, metadata.deletionTimestamp)", ix.Name)
			continue
		}
		names[ix.Name] = true
		if !resolveField(d, iptr+pointer("field"), s, ix) || bad {
			continue
		}
		if ix.Unique && ix.Multi {
			d.add(iptr+pointer("unique"), "a multi-valued index cannot be unique")
			continue
		}
		out = append(out, ix)
	}
	return out
}

// resolveField walks ix.Field through the schema and sets Path, Multi and
// Type; it reports why the field cannot be indexed.
func resolveField(d *diags, ptr string, root *openapi3.Schema, ix *Index) bool {
	field := ix.Field
	if strings.HasSuffix(field, "[]") {
		ix.Multi = true
		field = strings.TrimSuffix(field, "[]")
	}
	segs := strings.Split(field, ".")
	cur := root
	for i, seg := range segs {
		if seg == "" || strings.ContainsAny(seg, "[]") {
			d.add(ptr, "field %q: only the last segment may end in [], and segments must not be empty", ix.Field)
			return false
		}
		if seg == "metadata" || (i == 0 && (seg == "apiVersion" || seg == "kind")) {
			d.add(ptr, "field %q: envelope fields have their default indexes (metadata.name, metadata.labels, metadata.creationTimestamp); index the model's own fields", ix.Field)
			return false
		}
		if !isObject(cur) {
			d.add(ptr, "field %q: %s is not an object, so it has no field %q", ix.Field, strings.Join(segs[:i], "."), seg)
			return false
		}
		prop := resolve(cur.Properties[seg])
		if prop == nil {
			d.add(ptr, "field %q: %s has no field %q", ix.Field, where(segs[:i]), seg)
			return false
		}
		ix.Path = append(ix.Path, Step{Prop: seg, Required: contains(cur.Required, seg), Schema: prop})
		cur = prop
	}
	leaf := cur
	if ix.Multi {
		if !cur.Type.Is(openapi3.TypeArray) {
			d.add(ptr, "field %q: [] indexes each element of an array, but %s is not an array", ix.Field, field)
			return false
		}
		leaf = resolve(cur.Items)
	} else if cur.Type.Is(openapi3.TypeArray) {
		d.add(ptr, "field %q is an array; write %s[] to index each element", ix.Field, field)
		return false
	}
	t, ok := keyType(leaf)
	if !ok {
		d.add(ptr, "field %q is %s; an index needs a string, integer, number or boolean (or an array of them with [])", ix.Field, describe(leaf))
		return false
	}
	ix.Type = t
	return true
}

func where(segs []string) string {
	if len(segs) == 0 {
		return "the model"
	}
	return strings.Join(segs, ".")
}

func isObject(s *openapi3.Schema) bool {
	return s != nil && (s.Type.Is(openapi3.TypeObject) || (len(s.Type.Slice()) == 0 && len(s.Properties) > 0))
}

// keyType maps a scalar schema to the key type that sorts its values in
// their natural order.
func keyType(s *openapi3.Schema) (model.KeyType, bool) {
	switch {
	case s == nil:
		return 0, false
	case s.Type.Is(openapi3.TypeString):
		if s.Format == "date-time" {
			return model.Time, true
		}
		return model.String, true
	case s.Type.Is(openapi3.TypeInteger):
		return model.Int, true
	case s.Type.Is(openapi3.TypeNumber):
		return model.Float, true
	case s.Type.Is(openapi3.TypeBoolean):
		return model.Bool, true
	}
	return 0, false
}

func describe(s *openapi3.Schema) string {
	switch {
	case s == nil:
		return "untyped"
	case s.Type.Is(openapi3.TypeArray):
		return "an array of arrays or objects"
	case isObject(s) || s.AdditionalProperties.Schema != nil || s.AdditionalProperties.Has != nil:
		return "an object"
	case len(s.Type.Slice()) == 0:
		return "untyped"
	}
	return strings.Join(s.Type.Slice(), ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
