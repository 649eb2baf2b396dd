package validators

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/generator/gotypes"
	"github.com/svcrun/svc/runtime/validation"
)

// Options configure Generate.
type Options struct {
	// Package is the Go package name of the generated file; it must be
	// the package of gotypes.Generate's output for the same document.
	Package string
	// Models are the component names that are models; nil means every
	// component carrying x-svc-model.
	Models []string
}

// Generate returns the Go source of the validators of doc's models: for
// every model K, a typed (*K).Validate and ValidateKJSON for decoded JSON
// (see the package documentation). base is the envelope document
// (schemas.Base), whose ObjectMeta ValidateKJSON checks metadata against.
// doc and base are not modified.
func Generate(doc, base *openapi3.T, opts Options) (src []byte, err error) {
	// A bug here must fail one generation run, not the whole tool.
	defer func() {
		if r := recover(); r != nil {
			src, err = nil, fmt.Errorf("validators: internal error: %v", r)
		}
	}()
	if doc == nil || base == nil {
		return nil, errors.New("validators: no document")
	}
	if issues := Check(doc); len(issues) > 0 {
		return nil, fmt.Errorf("validators: %w", issuesError(issues))
	}
	if _, err := component(base, MetaSchema); err != nil {
		return nil, fmt.Errorf("validators: base document: %w", err)
	}
	if issues := Check(base); len(issues) > 0 {
		return nil, fmt.Errorf("validators: base document: %w", issuesError(issues))
	}
	models := opts.Models
	if models == nil {
		for name, ref := range doc.Components.Schemas {
			if ref.Value.Extensions[ExtModel] != nil {
				models = append(models, name)
			}
		}
	}
	models = slices.Sorted(slices.Values(models))
	if len(models) == 0 {
		return nil, errors.New("validators: no models")
	}
	types, err := gotypes.Build(doc, gotypes.Options{Package: opts.Package, Models: models})
	if err != nil {
		return nil, fmt.Errorf("validators: %w", err)
	}
	e := &emitter{
		types:    types,
		base:     base,
		patterns: map[string]string{},
		jsonFns:  map[*openapi3.Schema]string{},
		compOf:   map[*openapi3.Schema]string{},
		empty:    map[string]bool{},
	}
	body, err := e.file(opts.Package, models)
	if err != nil {
		return nil, fmt.Errorf("validators: %w", err)
	}
	body.HeaderComment(gotypes.Header)
	var buf bytes.Buffer
	if err := body.Render(&buf); err != nil {
		return nil, fmt.Errorf("validators: render: %w", err)
	}
	return buf.Bytes(), nil
}

func issuesError(issues []Issue) error {
	errs := make([]error, len(issues))
	for i, is := range issues {
		errs[i] = errors.New(is.String())
	}
	return errors.Join(errs...)
}

const objectPkg = gotypes.ObjectPkg

// validationPkg holds the helpers generated validators call (its path
// taken from the package itself, so a move cannot leave it stale).
var validationPkg = reflect.TypeFor[validation.Path]().PkgPath()

// emitter builds the jennifer file.
type emitter struct {
	types *gotypes.Result
	base  *openapi3.T
	// patterns maps each pattern to its package variable.
	patterns map[string]string
	// jsonFns names the JSON validator function of each object schema;
	// pending are those still to be emitted.
	jsonFns map[*openapi3.Schema]string
	pending []jsonFn
	// compOf names the component of each schema of types.Doc; empty
	// memoises which structs have nothing to check.
	compOf map[*openapi3.Schema]string
	empty  map[string]bool
	// n numbers the local variables of the function being emitted.
	n int
}

type jsonFn struct {
	name string
	doc  *openapi3.T
	s    *openapi3.Schema
	// base names the properties whose $refs are into the base document.
	base map[string]bool
}

func (e *emitter) file(pkg string, models []string) (*jen.File, error) {
	f := jen.NewFile(pkg)
	f.ImportName(objectPkg, "object")
	f.ImportName(validationPkg, "validation")
	for c, ref := range e.types.Doc.Components.Schemas {
		e.compOf[ref.Value] = c
	}
	var decls []jen.Code
	// Typed validators: one method per struct, models first.
	for _, m := range models {
		name := e.types.TypeNames[m]
		decls = append(decls, docComment(
			fmt.Sprintf("Validate appends to errs every way o breaks the %s schema. It checks the", m),
			"model's own fields; metadata is object.ValidateMetadata's job. A value",
			"decoded from a document that passes "+jsonName(name)+" has no violations.",
		).Func().Params(jen.Id("o").Op("*").Id(name)).Id("Validate").
			Params(jen.Id("errs").Op("*").Qual(objectPkg, "FieldErrors")).
			Block(jen.Id("o").Dot("validate").Call(jen.Nil(), jen.Id("errs"))))
	}
	for _, c := range slices.Sorted(maps.Keys(e.types.Doc.Components.Schemas)) {
		s := e.types.Doc.Components.Schemas[c].Value
		if !isStructSchema(s) {
			continue
		}
		code, err := e.typedStruct(c, s)
		if err != nil {
			return nil, err
		}
		decls = append(decls, code)
	}
	// JSON validators: one function per object schema, reached from the
	// models.
	for _, m := range models {
		name := e.types.TypeNames[m]
		fn, err := e.modelJSON(m)
		if err != nil {
			return nil, err
		}
		decls = append(decls, docComment(
			fmt.Sprintf("%s appends to errs every way doc, a decoded JSON document (as", jsonName(name)),
			"encoding/json decodes into an any, with float64 or json.Number numbers),",
			fmt.Sprintf("breaks the whole %s schema: envelope, metadata and the model's fields,", m),
			"with types, required fields, null and unknown fields. It accepts exactly",
			"what kin-openapi accepts with the model's FullSchema and KinOptions.",
		).Func().Id(jsonName(name)).
			Params(jen.Id("doc").Any(), jen.Id("errs").Op("*").Qual(objectPkg, "FieldErrors")).
			Block(jen.Id(fn).Call(jen.Id("doc"), jen.Nil(), jen.Id("errs"))))
	}
	for len(e.pending) > 0 {
		fn := e.pending[0]
		e.pending = e.pending[1:]
		code, err := e.objectJSON(fn)
		if err != nil {
			return nil, err
		}
		decls = append(decls, code)
	}
	if len(e.patterns) > 0 {
		byVar := map[string]string{}
		for p, v := range e.patterns {
			byVar[v] = p
		}
		f.Comment("Patterns, compiled once.")
		f.Var().DefsFunc(func(g *jen.Group) {
			for _, v := range slices.Sorted(maps.Keys(byVar)) {
				g.Id(v).Op("=").Qual("regexp", "MustCompile").Call(jen.Lit(goPattern(byVar[v])))
			}
		})
		f.Line()
	}
	for _, d := range decls {
		f.Add(d)
		f.Line()
	}
	return f, nil
}

// docComment starts a declaration with a comment of the given lines.
func docComment(lines ...string) *jen.Statement {
	st := jen.Null()
	for _, l := range lines {
		st.Comment(l).Line()
	}
	return st
}

func jsonName(typeName string) string { return "Validate" + typeName + "JSON" }

func isStructSchema(s *openapi3.Schema) bool {
	return s != nil && s.Type.Is(openapi3.TypeObject) && len(s.Properties) > 0
}

// local returns a fresh local variable name.
func (e *emitter) local(prefix string) string {
	e.n++
	return prefix + strconv.Itoa(e.n)
}

// resolve follows a $ref within doc.
func resolve(doc *openapi3.T, r *openapi3.SchemaRef) (*openapi3.Schema, string, error) {
	if r == nil {
		return nil, "", errors.New("missing schema")
	}
	if r.Ref == "" {
		if r.Value == nil {
			return nil, "", errors.New("missing schema")
		}
		return r.Value, "", nil
	}
	name, ok := strings.CutPrefix(r.Ref, componentPrefix)
	t := doc.Components.Schemas[name]
	if !ok || t == nil || t.Value == nil {
		return nil, "", fmt.Errorf("cannot resolve $ref %q", r.Ref)
	}
	return t.Value, name, nil
}

func typeOf(s *openapi3.Schema) string {
	if s.Type == nil || len(*s.Type) != 1 {
		return ""
	}
	return (*s.Type)[0]
}

// kind is what a schema is to the generated code.
type kind int

const (
	kString kind = iota
	kInteger
	kNumber
	kBoolean
	kArray
	kMap
	kFreeMap // additionalProperties: true
	kObject  // properties
)

func kindOf(s *openapi3.Schema) (kind, error) {
	switch typeOf(s) {
	case openapi3.TypeString:
		return kString, nil
	case openapi3.TypeInteger:
		return kInteger, nil
	case openapi3.TypeNumber:
		return kNumber, nil
	case openapi3.TypeBoolean:
		return kBoolean, nil
	case openapi3.TypeArray:
		return kArray, nil
	case openapi3.TypeObject:
		switch {
		case len(s.Properties) > 0:
			return kObject, nil
		case s.AdditionalProperties.Schema != nil:
			return kMap, nil
		default:
			return kFreeMap, nil
		}
	}
	return 0, fmt.Errorf("unsupported schema type %v", s.Type)
}

// at says how to name a value in an error: a step (property, array index
// or map key) below a parent path.
type at struct {
	parent string // a *validation.Path parameter, or a validation.Path local (local)
	local  bool
	step   uint8    // validation.StepName, validation.StepIndex or validation.StepKey
	arg    jen.Code // the property name, index variable or key variable
}

// ptr is the parent as a *validation.Path.
func (a at) ptr() jen.Code {
	if a.local {
		return jen.Op("&").Id(a.parent)
	}
	return jen.Id(a.parent)
}

func (a at) str() jen.Code {
	method := "Field"
	switch a.step {
	case validation.StepIndex:
		method = "Item"
	case validation.StepKey:
		method = "Entry"
	}
	return jen.Id(a.parent).Dot(method).Call(a.arg)
}

func add(g *jen.Group, a at, msg string) {
	g.Id("errs").Dot("Add").Call(a.str(), jen.Lit(strings.ReplaceAll(msg, "%", "%%")))
}

// Messages, shared by the typed and the JSON validators.
func msgMinLength(n uint64) string {
	if n == 1 {
		return "must not be empty"
	}
	return fmt.Sprintf("must be at least %d characters", n)
}
func msgMaxLength(n uint64) string { return fmt.Sprintf("must be at most %d characters", n) }
func msgEnum(s *openapi3.Schema) string {
	return "must be one of " + strings.Join(enumValues(s), ", ")
}
func msgPattern(p string) string { return "must match the pattern " + p }
func msgMinItems(n uint64) string {
	if n == 1 {
		return "must not be empty"
	}
	return fmt.Sprintf("must have at least %d items", n)
}
func msgMaxItems(n uint64) string { return fmt.Sprintf("must have at most %d items", n) }

const (
	msgRequired = "is required"
	msgUnique   = "must not contain duplicate items"
	msgInteger  = "must be an integer"
	msgFinite   = "must be a finite number"
)

// formatCheck returns the helper checking a string format and its
// message.
func formatCheck(format string) (fn, msg string, ok bool) {
	switch format {
	case "email":
		return "IsEmail", "must be an email address", true
	case "uri":
		return "IsURI", "must be an absolute URI", true
	case "uuid":
		return "IsUUID", "must be a UUID", true
	case "date":
		return "IsDate", "must be a date (YYYY-MM-DD)", true
	case "date-time":
		return "IsDateTime", msgDateTime, true
	}
	return "", "", false
}

const msgDateTime = "must be an RFC 3339 date-time"

func enumValues(s *openapi3.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		if str, ok := v.(string); ok && !slices.Contains(out, str) {
			out = append(out, str)
		}
	}
	return out
}

func enumCases(s *openapi3.Schema) []jen.Code {
	var out []jen.Code
	for _, v := range enumValues(s) {
		out = append(out, jen.Lit(v))
	}
	return out
}

// bound renders a schema bound for comparing with a value of the given
// kind: an integer literal when it compares exactly (integral and below
// 2^53, where int64 and float64 comparisons agree), else a float.
func bound(b float64, k kind) (lit jen.Code, asFloat bool) {
	if k == kInteger && b == math.Trunc(b) && math.Abs(b) < 1<<53 {
		return jen.Op(strconv.FormatInt(int64(b), 10)), false
	}
	return jen.Op(strconv.FormatFloat(b, 'g', -1, 64)), k == kInteger
}

// fmtBound writes a bound for people: integers in full.
func fmtBound(b float64) string {
	if b == math.Trunc(b) && math.Abs(b) < 1e21 {
		return strconv.FormatFloat(b, 'f', -1, 64)
	}
	return strconv.FormatFloat(b, 'g', -1, 64)
}

// numberChecks emits the minimum and maximum checks of v.
func numberChecks(g *jen.Group, s *openapi3.Schema, k kind, v jen.Code, a at) {
	cmp := func(b float64, op, msgOp string) {
		lit, asFloat := bound(b, k)
		x := jen.Add(v)
		if asFloat {
			x = jen.Float64().Call(v)
		}
		g.If(jen.Add(x).Op(op).Add(lit)).BlockFunc(func(g *jen.Group) {
			add(g, a, "must be "+msgOp+" "+fmtBound(b))
		})
	}
	if s.Min != nil {
		if s.ExclusiveMin.Bool != nil && *s.ExclusiveMin.Bool {
			cmp(*s.Min, "<=", ">")
		} else {
			cmp(*s.Min, "<", ">=")
		}
	}
	if s.Max != nil {
		if s.ExclusiveMax.Bool != nil && *s.ExclusiveMax.Bool {
			cmp(*s.Max, ">=", "<")
		} else {
			cmp(*s.Max, ">", "<=")
		}
	}
}

// stringChecks emits the enum, length, pattern and format checks of a
// string value: v as it is (the enum switch compares it with the values
// as constants of its own type) and str, v as a string. patternName
// names the pattern's variable.
func (e *emitter) stringChecks(g *jen.Group, s *openapi3.Schema, v, str jen.Code, a at, patternName string) {
	if len(s.Enum) > 0 {
		g.Switch(v).Block(
			jen.Case(enumCases(s)...),
			jen.Default().BlockFunc(func(g *jen.Group) { add(g, a, msgEnum(s)) }),
		)
	}
	count := jen.Qual("unicode/utf8", "RuneCountInString").Call(str)
	switch {
	case s.MinLength != 0 && s.MaxLength != nil:
		n := e.local("n")
		g.If(jen.Id(n).Op(":=").Add(count), jen.Id(n).Op("<").Lit(int(s.MinLength))).BlockFunc(func(g *jen.Group) {
			add(g, a, msgMinLength(s.MinLength))
		}).Else().If(jen.Id(n).Op(">").Lit(int(*s.MaxLength))).BlockFunc(func(g *jen.Group) {
			add(g, a, msgMaxLength(*s.MaxLength))
		})
	case s.MinLength != 0:
		g.If(jen.Add(count).Op("<").Lit(int(s.MinLength))).BlockFunc(func(g *jen.Group) { add(g, a, msgMinLength(s.MinLength)) })
	case s.MaxLength != nil:
		// A string has at most as many runes as bytes: count only long
		// ones.
		max := jen.Lit(int(*s.MaxLength))
		g.If(jen.Len(str).Op(">").Add(max).Op("&&").Add(count).Op(">").Add(max)).BlockFunc(func(g *jen.Group) {
			add(g, a, msgMaxLength(*s.MaxLength))
		})
	}
	if s.Pattern != "" {
		g.If(jen.Op("!").Id(e.pattern(s.Pattern, patternName)).Dot("MatchString").Call(str)).BlockFunc(func(g *jen.Group) {
			add(g, a, msgPattern(s.Pattern))
		})
	}
	if fn, msg, ok := formatCheck(s.Format); ok {
		g.If(jen.Op("!").Qual(validationPkg, fn).Call(str)).BlockFunc(func(g *jen.Group) { add(g, a, msg) })
	}
}

// pattern returns the variable holding the compiled pattern p.
func (e *emitter) pattern(p, name string) string {
	if v, ok := e.patterns[p]; ok {
		return v
	}
	v := "re" + name
	for i := 2; slices.Contains(slices.Collect(maps.Values(e.patterns)), v); i++ {
		v = "re" + name + strconv.Itoa(i)
	}
	e.patterns[p] = v
	return v
}

func parseType(t string) (ast.Expr, error) {
	x, err := parser.ParseExpr(t)
	if err != nil {
		return nil, fmt.Errorf("field type %q: %w", t, err)
	}
	return x, nil
}

func isIdent(t ast.Expr, name string) bool {
	id, ok := t.(*ast.Ident)
	return ok && id.Name == name
}
