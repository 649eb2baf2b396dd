package validators

import (
	"fmt"
	"maps"
	"slices"

	"github.com/dave/jennifer/jen"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/validation"
)

// modelJSON registers the JSON validator of a whole model object (the
// model's schema with the envelope) and returns its name.
func (e *emitter) modelJSON(model string) (string, error) {
	s := e.types.Doc.Components.Schemas[model].Value
	metaRef, err := component(e.base, MetaSchema)
	if err != nil {
		return "", fmt.Errorf("base document: %w", err)
	}
	whole := *s
	whole.Properties = openapi3.Schemas{
		"apiVersion": openapi3.NewStringSchema().NewRef(),
		"kind":       openapi3.NewStringSchema().NewRef(),
		// Resolved in the base document.
		"metadata": {Ref: componentPrefix + MetaSchema, Value: metaRef.Value},
	}
	bases := map[string]bool{"metadata": true}
	for name, p := range s.Properties {
		whole.Properties[name] = p
	}
	whole.Required = append([]string{"apiVersion", "kind", "metadata"}, s.Required...)
	name := "validate" + e.types.TypeNames[model] + "JSON"
	e.jsonFns[s] = name
	e.pending = append(e.pending, jsonFn{name: name, doc: e.types.Doc, s: &whole, base: bases})
	return name, nil
}

// jsonFunc returns the name of the JSON validator of the object schema s
// (of doc), registering it when new.
func (e *emitter) jsonFunc(doc *openapi3.T, s *openapi3.Schema, name string) string {
	if n, ok := e.jsonFns[s]; ok {
		return n
	}
	e.jsonFns[s] = name
	e.pending = append(e.pending, jsonFn{name: name, doc: doc, s: s})
	return name
}

// objectJSON emits the JSON validator of an object schema: the value must
// be an object, its properties are checked in name order, missing
// required ones reported, and unknown keys reported in sorted order.
func (e *emitter) objectJSON(fn jsonFn) (jen.Code, error) {
	e.n = 0
	s := fn.s
	props := slices.Sorted(maps.Keys(s.Properties))
	body, _, err := block(func(g *jen.Group) error {
		g.List(jen.Id("m"), jen.Id("ok")).Op(":=").Add(jen.Qual(validationPkg, "JSONObject")).Call(jen.Id("v"))
		g.If(jen.Op("!").Id("ok")).Block(
			jen.Qual(validationPkg, "BadType").Call(jen.Id("errs"), jen.Id("p").Dot("String").Call(), jen.Id("v"), jen.Lit("an object")),
			jen.Return(),
		)
		g.Id("known").Op(":=").Lit(0)
		for _, prop := range props {
			doc := fn.doc
			if fn.base[prop] {
				doc = e.base
			}
			a := at{parent: "p", step: validation.StepName, arg: jen.Lit(prop)}
			x := e.local("x")
			check, _, err := block(func(g *jen.Group) error {
				g.Id("known").Op("++")
				return e.jsonValue(g, doc, jen.Id(x), s.Properties[prop], a, fn.name+fieldPart(prop))
			})
			if err != nil {
				return fmt.Errorf("property %q: %w", prop, err)
			}
			st := g.If(jen.List(jen.Id(x), jen.Id("ok")).Op(":=").Id("m").Index(jen.Lit(prop)), jen.Id("ok")).Add(check)
			if slices.Contains(s.Required, prop) {
				st.Else().BlockFunc(func(g *jen.Group) { add(g, a, msgRequired) })
			}
		}
		var known []jen.Code
		for _, p := range props {
			known = append(known, jen.Lit(p))
		}
		k := e.local("k")
		g.If(jen.Id("known").Op("!=").Len(jen.Id("m"))).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id(k)).Op(":=").Range().Qual("slices", "Sorted").Call(jen.Qual("maps", "Keys").Call(jen.Id("m")))).Block(
				jen.Switch(jen.Id(k)).Block(
					jen.Case(known...),
					jen.Default().Block(jen.Id("errs").Dot("Add").Call(jen.Id("p").Dot("Field").Call(jen.Id(k)), jen.Lit("unknown field"))),
				),
			),
		)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn.name, err)
	}
	return docComment(
		fmt.Sprintf("%s appends to errs every way v, a decoded JSON value, breaks", fn.name),
		"its object schema, naming fields below p.",
	).Func().Id(fn.name).
		Params(jen.Id("v").Any(), jen.Id("p").Op("*").Qual(validationPkg, "Path"), jen.Id("errs").Op("*").Qual(objectPkg, "FieldErrors")).
		Add(body), nil
}

// fieldPart turns a property name into a part of a Go identifier.
func fieldPart(prop string) string {
	var out []rune
	upper := true
	for _, r := range prop {
		switch {
		case r >= 'a' && r <= 'z':
			if upper {
				r -= 'a' - 'A'
			}
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
		default:
			upper = true
			continue
		}
		upper = false
		out = append(out, r)
	}
	return string(out)
}

// jsonValue emits the checks of a decoded JSON value x.
func (e *emitter) jsonValue(g *jen.Group, doc *openapi3.T, x jen.Code, ref *openapi3.SchemaRef, a at, name string) error {
	s, comp, err := resolve(doc, ref)
	if err != nil {
		return err
	}
	k, err := kindOf(s)
	if err != nil {
		return err
	}
	bad := func(want string) jen.Code {
		return jen.Qual(validationPkg, "BadType").Call(jen.Id("errs"), a.str(), x, jen.Lit(want))
	}
	switch k {
	case kString:
		str := e.local("s")
		checks, empty, err := block(func(g *jen.Group) error {
			e.stringChecks(g, s, jen.Id(str), jen.Id(str), a, name)
			return nil
		})
		if err != nil {
			return err
		}
		if empty {
			g.If(jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Add(x).Assert(jen.String()), jen.Op("!").Id("ok")).Block(bad("a string"))
			return nil
		}
		g.If(jen.List(jen.Id(str), jen.Id("ok")).Op(":=").Add(x).Assert(jen.String()), jen.Op("!").Id("ok")).
			Block(bad("a string")).Else().Add(checks)
	case kInteger, kNumber:
		f := e.local("num")
		if k == kNumber && s.Min == nil && s.Max == nil {
			f = "_"
		}
		want := "a number"
		if k == kInteger {
			want = "an integer"
		}
		st := g.If(jen.List(jen.Id(f), jen.Id("ok")).Op(":=").Add(jen.Qual(validationPkg, "JSONNumber")).Call(x), jen.Op("!").Id("ok")).Block(bad(want))
		if k == kInteger {
			st.Else().If(jen.Id(f).Op("!=").Qual("math", "Trunc").Call(jen.Id(f))).BlockFunc(func(g *jen.Group) { add(g, a, msgInteger) })
			rangeFn, rangeMsg := "IsInt64", "must be a 64-bit integer"
			if s.Format == "int32" {
				rangeFn, rangeMsg = "IsInt32", "must be a 32-bit integer"
			}
			st.Else().If(jen.Op("!").Qual(validationPkg, rangeFn).Call(jen.Id(f))).BlockFunc(func(g *jen.Group) { add(g, a, rangeMsg) })
		}
		if s.Min != nil || s.Max != nil {
			// Compared as float64, like kin-openapi.
			fs := *s
			st.Else().BlockFunc(func(g *jen.Group) { numberChecks(g, &fs, kNumber, jen.Id(f), a) })
		}
	case kBoolean:
		g.If(jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Add(x).Assert(jen.Bool()), jen.Op("!").Id("ok")).Block(bad("a boolean"))
	case kFreeMap:
		g.If(jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Add(jen.Qual(validationPkg, "JSONObject")).Call(x), jen.Op("!").Id("ok")).Block(bad("an object"))
	case kObject:
		fname := name
		if comp != "" {
			if doc == e.types.Doc {
				fname = "validate" + e.types.TypeNames[comp] + "JSON"
			} else {
				// No plugin function starts with "base".
				fname = "base" + fieldPart(comp) + "JSON"
			}
		}
		fname = e.jsonFunc(doc, s, fname)
		p := e.local("p")
		g.Add(nodeDecl(p, a))
		g.Id(fname).Call(x, jen.Op("&").Id(p), jen.Id("errs"))
	case kArray:
		return e.jsonArray(g, doc, x, s, a, name, bad)
	case kMap:
		return e.jsonMap(g, doc, x, s, a, name, bad)
	}
	return nil
}

func (e *emitter) jsonArray(g *jen.Group, doc *openapi3.T, x jen.Code, s *openapi3.Schema, a at, name string, bad func(string) jen.Code) error {
	arr, p, i := e.local("a"), e.local("p"), e.local("i")
	var err error
	g.If(jen.List(jen.Id(arr), jen.Id("ok")).Op(":=").Add(x).Assert(jen.Index().Any()), jen.Op("!").Id("ok")).Block(bad("an array")).
		Else().BlockFunc(func(g *jen.Group) {
		itemsCount(g, s, jen.Id(arr), a)
		if s.UniqueItems {
			g.If(jen.Op("!").Qual(validationPkg, "UniqueJSON").Call(jen.Id(arr))).BlockFunc(func(g *jen.Group) { add(g, a, msgUnique) })
		}
		y := e.local("y")
		var body *jen.Statement
		var empty bool
		body, empty, err = block(func(g *jen.Group) error {
			return e.jsonValue(g, doc, jen.Id(y), s.Items, at{parent: p, local: true, step: validation.StepIndex, arg: jen.Id(i)}, name+"Item")
		})
		if err != nil || empty {
			return
		}
		g.Add(nodeDecl(p, a))
		g.For(jen.List(jen.Id(i), jen.Id(y)).Op(":=").Range().Id(arr)).Add(body)
	})
	return err
}

func (e *emitter) jsonMap(g *jen.Group, doc *openapi3.T, x jen.Code, s *openapi3.Schema, a at, name string, bad func(string) jen.Code) error {
	m, p, k, y := e.local("m"), e.local("p"), e.local("k"), e.local("y")
	check := func(g *jen.Group) error {
		return e.jsonValue(g, doc, jen.Id(y), s.AdditionalProperties.Schema, at{parent: p, local: true, step: validation.StepKey, arg: jen.Id(k)}, name+"Value")
	}
	body, _, err := block(func(g *jen.Group) error {
		g.Id(y).Op(":=").Id(m).Index(jen.Id(k))
		return check(g)
	})
	if err != nil {
		return err
	}
	g.If(jen.List(jen.Id(m), jen.Id("ok")).Op(":=").Add(jen.Qual(validationPkg, "JSONObject")).Call(x), jen.Op("!").Id("ok")).Block(bad("an object")).
		Else().Block(
		nodeDecl(p, a),
		jen.Qual(validationPkg, "EachKey").Call(jen.Id(m), jen.Id("errs"), jen.Func().Params(jen.Id(k).String()).Add(body)),
	)
	return nil
}
