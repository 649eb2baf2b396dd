package validators

import (
	"fmt"
	"go/token"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// ExtModel marks a component schema as a model.
const ExtModel = "x-svc-model"

// Issue is one schema construct the generators do not support.
type Issue struct {
	// Pointer is the JSON pointer of the schema in the document, e.g.
	// /components/schemas/PersonSpec/properties/age.
	Pointer string
	Message string
}

func (i Issue) String() string { return i.Pointer + ": " + i.Message }

// formats returns the formats supported on a type.
func formats(typ string) []string {
	switch typ {
	case openapi3.TypeString:
		return []string{"email", "uri", "date-time", "date", "uuid"}
	case openapi3.TypeInteger:
		return []string{"int32", "int64"}
	case openapi3.TypeNumber:
		return []string{"float", "double"}
	}
	return nil
}

// unsupportedExtensions would change the Go types behind the validators'
// back.
func unsupportedExtensions() []string {
	return []string{
		"x-go-type", "x-go-type-import", "x-go-type-name", "x-go-type-skip-optional-pointer",
		"x-go-json-ignore", "x-omitempty", "x-omitzero", "x-oapi-codegen-extra-tags",
		"x-oapi-codegen-only-honour-go-name",
	}
}

const componentPrefix = "#/components/schemas/"

// Check lists every schema construct in doc's components.schemas that the
// generators do not support, in pointer order. Generate refuses a
// document with issues.
//
// Supported: objects with properties (closed: unknown fields are
// rejected), maps (additionalProperties: <schema>, or true for free-form
// values), arrays (items, minItems, maxItems, uniqueItems on scalar
// items), strings (minLength, maxLength, pattern, enum, formats email,
// uri, date-time, date, uuid), integers (int32, int64) and numbers
// (float, double) with minimum and maximum (exclusive as OpenAPI 3.0
// booleans), booleans, required, and $ref to components. Models are the
// components with x-svc-model; they declare their own fields, the
// envelope (apiVersion, kind, metadata) is added.
func Check(doc *openapi3.T) []Issue {
	c := &checker{doc: doc}
	if doc == nil {
		return []Issue{{Pointer: "", Message: "no document"}}
	}
	if doc.IsOpenAPI31OrLater() {
		c.add("/openapi", "OpenAPI %s documents are not supported; use 3.0", doc.OpenAPI)
	}
	if doc.Components == nil || len(doc.Components.Schemas) == 0 {
		c.add("/components/schemas", "the document declares no component schemas")
		return c.issues
	}
	c.models = map[string]bool{}
	for name, ref := range doc.Components.Schemas {
		if ref != nil && ref.Value != nil && ref.Value.Extensions[ExtModel] != nil {
			c.models[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
		ptr := pointer("/components/schemas", name)
		ref := doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			c.add(ptr, "the component has no schema")
			continue
		}
		if ref.Ref != "" {
			c.add(ptr, "a component that is only a $ref is not supported; refer to the target instead")
			continue
		}
		c.name(ptr, "component name", name)
		if c.models[name] {
			c.model(ptr, ref.Value)
		}
		c.schema(ptr, ref.Value, true)
		if cycle := c.cycle(name); cycle != nil {
			c.add(ptr, "recursive schemas are not supported (%s)", strings.Join(cycle, " → "))
		}
	}
	slices.SortStableFunc(c.issues, func(a, b Issue) int { return strings.Compare(a.Pointer, b.Pointer) })
	return c.issues
}

type checker struct {
	doc    *openapi3.T
	models map[string]bool
	issues []Issue
}

func (c *checker) add(ptr, format string, args ...any) {
	c.issues = append(c.issues, Issue{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

// pointer appends escaped segments to a JSON pointer.
func pointer(base string, segs ...string) string {
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for _, s := range segs {
		base += "/" + r.Replace(s)
	}
	return base
}

func (c *checker) model(ptr string, s *openapi3.Schema) {
	if !s.Type.Is(openapi3.TypeObject) || len(s.Properties) == 0 {
		c.add(ptr, "a model must be an object schema with properties")
	}
	for _, p := range []string{"apiVersion", "kind", "metadata"} {
		if _, ok := s.Properties[p]; ok {
			c.add(pointer(ptr, "properties", p), "%q is part of the envelope every model gets; a model declares only its own fields", p)
		}
	}
	for p := range s.Properties {
		// The Go field would clash with the embedded envelope or a
		// method of the model.
		switch n := strings.ToUpper(p[:min(1, len(p))]) + p[min(1, len(p)):]; n {
		case "Envelope", "GetEnvelope", "Validate":
			c.add(pointer(ptr, "properties", p), "property %q would clash with the model's Go %s", p, n)
		}
	}
}

// ref checks a $ref and reports whether the generators can follow it.
func (c *checker) ref(ptr string, r *openapi3.SchemaRef) bool {
	name, ok := strings.CutPrefix(r.Ref, componentPrefix)
	if !ok || strings.Contains(name, "/") {
		c.add(ptr, "$ref %q is not supported; refer to %s<name>", r.Ref, componentPrefix)
		return false
	}
	if c.doc.Components.Schemas[name] == nil {
		c.add(ptr, "$ref %q points to no component", r.Ref)
		return false
	}
	if c.models[name] {
		c.add(ptr, "$ref to the model %q is not supported; refer to objects by name instead", name)
		return false
	}
	return true
}

// child checks the schema below a property, items or
// additionalProperties.
func (c *checker) child(ptr string, r *openapi3.SchemaRef) {
	switch {
	case r == nil:
	case r.Ref != "":
		c.ref(ptr, r)
	case r.Value == nil:
		c.add(ptr, "missing schema")
	default:
		c.schema(ptr, r.Value, false)
	}
}

// resolve returns the schema r stands for, following a supported $ref.
func (c *checker) resolve(r *openapi3.SchemaRef) *openapi3.Schema {
	if r == nil {
		return nil
	}
	if name, ok := strings.CutPrefix(r.Ref, componentPrefix); ok {
		if t := c.doc.Components.Schemas[name]; t != nil {
			return t.Value
		}
	}
	return r.Value
}

func (c *checker) schema(ptr string, s *openapi3.Schema, top bool) {
	for _, kw := range []struct {
		on   bool
		name string
	}{
		{len(s.AllOf) > 0, "allOf"}, {len(s.AnyOf) > 0, "anyOf"}, {len(s.OneOf) > 0, "oneOf"},
		{s.Not != nil, "not"}, {s.Discriminator != nil, "discriminator"},
		{s.Nullable, "nullable"}, {s.MultipleOf != nil, "multipleOf"},
		{s.MinProps != 0, "minProperties"}, {s.MaxProps != nil, "maxProperties"},
		{s.Const != nil, "const"}, {len(s.PrefixItems) > 0, "prefixItems"},
		{s.ExclusiveMin.Value != nil, "numeric exclusiveMinimum (OpenAPI 3.1)"},
		{s.ExclusiveMax.Value != nil, "numeric exclusiveMaximum (OpenAPI 3.1)"},
	} {
		if kw.on {
			c.add(ptr, "%s is not supported", kw.name)
		}
	}
	for _, ext := range unsupportedExtensions() {
		if _, ok := s.Extensions[ext]; ok {
			c.add(ptr, "extension %s is not supported", ext)
		}
	}
	if n, ok := s.Extensions["x-go-name"]; ok {
		if str, _ := n.(string); !token.IsIdentifier(str) {
			c.add(ptr, "x-go-name must be a Go identifier")
		}
	}
	if !top {
		if _, ok := s.Extensions[ExtModel]; ok {
			c.add(ptr, "%s is only allowed on a component", ExtModel)
		}
	}
	if s.Type == nil || len(*s.Type) != 1 {
		c.add(ptr, "a schema needs exactly one type (or a $ref)")
		return
	}
	typ := (*s.Type)[0]
	c.misplaced(ptr, s, typ)
	if s.Format != "" && !slices.Contains(formats(typ), s.Format) {
		c.add(ptr, "format %q is not supported on %s", s.Format, typ)
	}
	switch typ {
	case openapi3.TypeString:
		c.str(ptr, s)
	case openapi3.TypeInteger, openapi3.TypeNumber, openapi3.TypeBoolean:
	case openapi3.TypeArray:
		c.array(ptr, s)
	case openapi3.TypeObject:
		c.object(ptr, s)
	default:
		c.add(ptr, "type %q is not supported", typ)
	}
}

// misplaced reports keywords that do not apply to the schema's type,
// which kin-openapi ignores and which are most likely mistakes.
func (c *checker) misplaced(ptr string, s *openapi3.Schema, typ string) {
	has := map[string][]bool{
		openapi3.TypeString: {s.MinLength != 0, s.MaxLength != nil, s.Pattern != "", len(s.Enum) > 0},
		"number":            {s.Min != nil, s.Max != nil, s.ExclusiveMin.Bool != nil, s.ExclusiveMax.Bool != nil},
		openapi3.TypeArray:  {s.Items != nil, s.MinItems != 0, s.MaxItems != nil, s.UniqueItems},
		openapi3.TypeObject: {len(s.Properties) > 0, len(s.Required) > 0, s.AdditionalProperties.Has != nil || s.AdditionalProperties.Schema != nil},
	}
	names := map[string][]string{
		openapi3.TypeString: {"minLength", "maxLength", "pattern", "enum"},
		"number":            {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
		openapi3.TypeArray:  {"items", "minItems", "maxItems", "uniqueItems"},
		openapi3.TypeObject: {"properties", "required", "additionalProperties"},
	}
	group := typ
	if typ == openapi3.TypeInteger || typ == openapi3.TypeNumber {
		group = "number"
	}
	for _, g := range slices.Sorted(maps.Keys(has)) {
		if g == group {
			continue
		}
		for i, on := range has[g] {
			if on {
				c.add(ptr, "%s does not apply to type %s", names[g][i], typ)
			}
		}
	}
}

func (c *checker) str(ptr string, s *openapi3.Schema) {
	if s.MaxLength != nil && *s.MaxLength < s.MinLength {
		c.add(ptr, "maxLength is below minLength")
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(goPattern(s.Pattern)); err != nil {
			c.add(ptr+"/pattern", "pattern does not compile as a Go regexp: %v", err)
		}
	}
	for i, v := range s.Enum {
		str, ok := v.(string)
		if !ok {
			c.add(pointer(ptr, "enum", fmt.Sprint(i)), "enum values of a string must be strings")
			continue
		}
		if r, bad := unquotable(str); bad {
			c.add(pointer(ptr, "enum", fmt.Sprint(i)), "enum value may not contain %q", r)
		}
	}
}

func (c *checker) array(ptr string, s *openapi3.Schema) {
	if s.Items == nil {
		c.add(ptr, "an array needs items")
		return
	}
	c.child(pointer(ptr, "items"), s.Items)
	if s.MaxItems != nil && *s.MaxItems < s.MinItems {
		c.add(ptr, "maxItems is below minItems")
	}
	if s.UniqueItems {
		it := c.resolve(s.Items)
		ok := it != nil && it.Type != nil && len(*it.Type) == 1
		if ok {
			switch (*it.Type)[0] {
			case openapi3.TypeString:
				ok = it.Format != "date-time"
			case openapi3.TypeInteger, openapi3.TypeNumber, openapi3.TypeBoolean:
			default:
				ok = false
			}
		}
		if !ok {
			c.add(ptr, "uniqueItems is supported on arrays of strings (not date-time), integers, numbers and booleans only")
		}
	}
}

func (c *checker) object(ptr string, s *openapi3.Schema) {
	ap := s.AdditionalProperties
	free := ap.Has != nil && *ap.Has && ap.Schema == nil
	switch {
	case len(s.Properties) > 0 && (free || ap.Schema != nil):
		c.add(ptr, "properties together with additionalProperties are not supported")
	case len(s.Properties) == 0 && ap.Schema == nil && !free:
		c.add(ptr, "an object needs properties, or additionalProperties (a schema, or true for free-form values)")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		pp := pointer(ptr, "properties", name)
		c.name(pp, "property name", name)
		c.child(pp, s.Properties[name])
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			c.add(ptr, "required property %q is not declared", r)
		}
	}
	if ap.Schema != nil {
		c.child(pointer(ptr, "additionalProperties"), ap.Schema)
	}
}

// cycle returns a chain of components through which start refers to
// itself, or nil.
func (c *checker) cycle(start string) []string {
	var path []string
	seen := map[string]bool{}
	var visit func(name string) bool
	visit = func(name string) bool {
		path = append(path, name)
		ref := c.doc.Components.Schemas[name]
		found := false
		if ref != nil && ref.Value != nil {
			walkRefs(ref.Value, func(target string) bool {
				switch {
				case target == start:
					path = append(path, target)
					found = true
				case !seen[target]:
					seen[target] = true
					found = visit(target)
				}
				return !found
			})
		}
		if !found {
			path = path[:len(path)-1]
		}
		return found
	}
	if visit(start) {
		return path
	}
	return nil
}

// walkRefs calls f with every component s refers to (not through other
// components), until f returns false.
func walkRefs(s *openapi3.Schema, f func(string) bool) bool {
	refs := []*openapi3.SchemaRef{s.Items, s.AdditionalProperties.Schema, s.Not}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		refs = append(refs, s.Properties[k])
	}
	refs = append(append(append(refs, s.AllOf...), s.AnyOf...), s.OneOf...)
	for _, r := range refs {
		if r == nil {
			continue
		}
		if name, ok := strings.CutPrefix(r.Ref, componentPrefix); ok {
			if !f(name) {
				return false
			}
			continue
		}
		if r.Ref == "" && r.Value != nil && !walkRefs(r.Value, f) {
			return false
		}
	}
	return true
}

// name checks a component or property name, which the Go code carries
// in string literals, struct tags and identifiers.
func (c *checker) name(ptr, what, name string) {
	if !strings.ContainsFunc(name, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		c.add(ptr, "%s %q has no letter or digit to make a Go name of", what, name)
	}
	if r, bad := unquotable(name); bad {
		c.add(ptr, "%s may not contain %q", what, r)
	}
}

// unquotable finds a character that cannot go into a Go struct tag or
// comment as it is: a quote, a backtick or a control character.
func unquotable(s string) (rune, bool) {
	for _, r := range s {
		if r == '"' || r == '`' || unicode.IsControl(r) {
			return r, true
		}
	}
	return 0, false
}

// goPattern is a pattern as kin-openapi compiles it: \uXXXX (upper-case
// hex) rewritten to Go's \x{XXXX}. Mirrored so both compile the same
// regexp, quirks included (an escaped backslash before "u" is rewritten
// too).
func goPattern(p string) string {
	var b strings.Builder
	for {
		i := strings.Index(p, `\u`)
		if i < 0 || len(p) < i+6 || !upperHex(p[i+2:i+6]) {
			if i < 0 {
				b.WriteString(p)
				return b.String()
			}
			b.WriteString(p[:i+2])
			p = p[i+2:]
			continue
		}
		b.WriteString(p[:i])
		b.WriteString(`\x{` + p[i+2:i+6] + "}")
		p = p[i+6:]
	}
}

func upperHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
