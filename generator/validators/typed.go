package validators

import (
	"fmt"
	"go/ast"
	"maps"
	"slices"

	"github.com/dave/jennifer/jen"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/validation"
)

// typedStruct emits the validate method of the struct generated for
// component comp. Properties are checked in name order, as the JSON
// validators check them, so that both report in the same order.
func (e *emitter) typedStruct(comp string, s *openapi3.Schema) (jen.Code, error) {
	e.n = 0
	body, _, err := e.structBody(comp, s)
	if err != nil {
		return nil, err
	}
	name := e.types.TypeNames[comp]
	return docComment(
		fmt.Sprintf("validate appends to errs every way o breaks the %s schema, naming", comp),
		"fields below p.",
	).Func().Params(jen.Id("o").Op("*").Id(name)).Id("validate").
		Params(jen.Id("p").Op("*").Qual(validationPkg, "Path"), jen.Id("errs").Op("*").Qual(objectPkg, "FieldErrors")).
		Add(body), nil
}

// structEmpty reports whether the struct of comp has nothing to check,
// so that callers can skip it.
func (e *emitter) structEmpty(comp string) (bool, error) {
	if empty, ok := e.empty[comp]; ok {
		return empty, nil
	}
	n := e.n
	defer func() { e.n = n }()
	_, empty, err := e.structBody(comp, e.types.Doc.Components.Schemas[comp].Value)
	e.empty[comp] = empty
	return empty, err
}

func (e *emitter) structBody(comp string, s *openapi3.Schema) (*jen.Statement, bool, error) {
	name := e.types.TypeNames[comp]
	st := e.types.Structs[name]
	if st == nil {
		return nil, false, fmt.Errorf("no Go struct for component %q", comp)
	}
	return block(func(g *jen.Group) error {
		for _, prop := range slices.Sorted(maps.Keys(s.Properties)) {
			f, ok := st.Field(prop)
			if !ok {
				return fmt.Errorf("struct %s has no field for property %q", name, prop)
			}
			t, err := parseType(f.Type)
			if err != nil {
				return fmt.Errorf("struct %s: %w", name, err)
			}
			a := at{parent: "p", step: validation.StepName, arg: jen.Lit(prop)}
			required := slices.Contains(s.Required, prop)
			if err := e.typedField(g, jen.Id("o").Dot(f.Name), t, s.Properties[prop], a, required, name+f.Name); err != nil {
				return fmt.Errorf("%s.%s: %w", name, f.Name, err)
			}
		}
		return nil
	})
}

// typedField emits the checks of a struct field: absence first, then the
// value.
func (e *emitter) typedField(g *jen.Group, v jen.Code, t ast.Expr, ref *openapi3.SchemaRef, a at, required bool, name string) error {
	s, _, err := resolve(e.types.Doc, ref)
	if err != nil {
		return err
	}
	k, err := kindOf(s)
	if err != nil {
		return err
	}
	if star, ok := t.(*ast.StarExpr); ok {
		val := jen.Op("*").Add(v)
		if k == kObject {
			val = jen.Add(v) // validate takes the pointer
		}
		body, empty, err := block(func(g *jen.Group) error { return e.typedValue(g, val, star.X, s, k, a, name) })
		if err != nil {
			return err
		}
		switch {
		case required:
			g.If(jen.Add(v).Op("==").Nil()).BlockFunc(func(g *jen.Group) { add(g, a, msgRequired) }).
				Do(func(st *jen.Statement) {
					if !empty {
						st.Else().Add(body)
					}
				})
		case !empty:
			g.If(jen.Add(v).Op("!=").Nil()).Add(body)
		}
		return nil
	}
	if k == kArray || k == kMap || k == kFreeMap {
		// Encoded with omitempty, an empty container is an absent one;
		// only a required container is encoded (and checked) when empty.
		body, empty, err := block(func(g *jen.Group) error { return e.typedValue(g, v, t, s, k, a, name) })
		if err != nil {
			return err
		}
		switch {
		case required:
			g.If(jen.Add(v).Op("==").Nil()).BlockFunc(func(g *jen.Group) { add(g, a, msgRequired) }).
				Do(func(st *jen.Statement) {
					if !empty {
						st.Else().Add(body)
					}
				})
		case !empty:
			g.If(jen.Len(v).Op(">").Lit(0)).Add(body)
		}
		return nil
	}
	return e.typedValue(g, v, t, s, k, a, name)
}

// typedValue emits the checks of one value v of Go type t.
func (e *emitter) typedValue(g *jen.Group, v jen.Code, t ast.Expr, s *openapi3.Schema, k kind, a at, name string) error {
	if star, ok := t.(*ast.StarExpr); ok {
		// A nil array item or map value encodes as null.
		val := jen.Op("*").Add(v)
		if k == kObject {
			val = jen.Add(v)
		}
		body, empty, err := block(func(g *jen.Group) error { return e.typedValue(g, val, star.X, s, k, a, name) })
		if err != nil {
			return err
		}
		g.If(jen.Add(v).Op("==").Nil()).BlockFunc(func(g *jen.Group) { add(g, a, "must not be null") }).
			Do(func(st *jen.Statement) {
				if !empty {
					st.Else().Add(body)
				}
			})
		return nil
	}
	switch k {
	case kString:
		if isSelector(t, "time", "Time") {
			if s.Format != "date-time" {
				return fmt.Errorf("time.Time for a string without format date-time")
			}
			g.If(jen.Op("!").Qual(validationPkg, "IsJSONTime").Call(v)).BlockFunc(func(g *jen.Group) {
				add(g, a, msgDateTime)
			})
			return nil
		}
		str := v
		if !isIdent(t, "string") {
			str = jen.String().Call(v)
		}
		e.stringChecks(g, s, v, str, a, name)
	case kInteger:
		numberChecks(g, s, k, v, a)
	case kNumber:
		f := v
		if !isIdent(t, "float64") {
			f = jen.Float64().Call(v)
		}
		g.If(jen.Qual("math", "IsNaN").Call(f).Op("||").Qual("math", "IsInf").Call(f, jen.Lit(0))).
			BlockFunc(func(g *jen.Group) { add(g, a, msgFinite) }).
			Do(func(st *jen.Statement) {
				if s.Min != nil || s.Max != nil {
					st.Else().BlockFunc(func(g *jen.Group) { numberChecks(g, s, k, v, a) })
				}
			})
	case kBoolean, kFreeMap:
	case kObject:
		comp, ok := e.compOf[s]
		if !ok {
			return fmt.Errorf("object schema is not a component")
		}
		if empty, err := e.structEmpty(comp); err != nil || empty {
			return err
		}
		p := e.local("p")
		g.Add(nodeDecl(p, a))
		g.Add(v).Dot("validate").Call(jen.Op("&").Id(p), jen.Id("errs"))
	case kArray:
		return e.typedArray(g, v, t, s, a, name)
	case kMap:
		return e.typedMap(g, v, t, s, a, name)
	}
	return nil
}

// typedElem emits the checks of an array item or map value: unlike a
// field, a nil list or map there is encoded as null.
func (e *emitter) typedElem(g *jen.Group, v jen.Code, t ast.Expr, s *openapi3.Schema, k kind, a at, name string) error {
	if k != kArray && k != kMap && k != kFreeMap {
		return e.typedValue(g, v, t, s, k, a, name)
	}
	body, empty, err := block(func(g *jen.Group) error { return e.typedValue(g, v, t, s, k, a, name) })
	if err != nil {
		return err
	}
	g.If(jen.Add(v).Op("==").Nil()).BlockFunc(func(g *jen.Group) { add(g, a, "must not be null") }).
		Do(func(st *jen.Statement) {
			if !empty {
				st.Else().Add(body)
			}
		})
	return nil
}

func (e *emitter) typedArray(g *jen.Group, v jen.Code, t ast.Expr, s *openapi3.Schema, a at, name string) error {
	itemsCount(g, s, v, a)
	items, _, err := resolve(e.types.Doc, s.Items)
	if err != nil {
		return err
	}
	ik, err := kindOf(items)
	if err != nil {
		return err
	}
	if s.UniqueItems {
		fn := "Unique"
		if ik == kNumber {
			fn = "UniqueFloats"
		}
		g.If(jen.Op("!").Qual(validationPkg, fn).Call(v)).BlockFunc(func(g *jen.Group) { add(g, a, msgUnique) })
	}
	elem, err := e.elemType(t)
	if err != nil {
		return err
	}
	p, i := e.local("p"), e.local("i")
	body, empty, err := block(func(g *jen.Group) error {
		return e.typedElem(g, jen.Add(v).Index(jen.Id(i)), elem, items, ik,
			at{parent: p, local: true, step: validation.StepIndex, arg: jen.Id(i)}, name+"Item")
	})
	if err != nil || empty {
		return err
	}
	g.Add(nodeDecl(p, a))
	g.For(jen.Id(i).Op(":=").Range().Add(v)).Add(body)
	return nil
}

func (e *emitter) typedMap(g *jen.Group, v jen.Code, t ast.Expr, s *openapi3.Schema, a at, name string) error {
	vals, _, err := resolve(e.types.Doc, s.AdditionalProperties.Schema)
	if err != nil {
		return err
	}
	vk, err := kindOf(vals)
	if err != nil {
		return err
	}
	elem, err := e.elemType(t)
	if err != nil {
		return err
	}
	p, k, x := e.local("p"), e.local("k"), e.local("v")
	check := func(g *jen.Group) error {
		return e.typedElem(g, jen.Id(x), elem, vals, vk, at{parent: p, local: true, step: validation.StepKey, arg: jen.Id(k)}, name+"Value")
	}
	if empty, err := e.probe(check); err != nil || empty {
		return err
	}
	body, _, err := block(func(g *jen.Group) error {
		g.Id(x).Op(":=").Add(v).Index(jen.Id(k))
		return check(g)
	})
	if err != nil {
		return err
	}
	g.Add(nodeDecl(p, a))
	g.Qual(validationPkg, "EachKey").Call(v, jen.Id("errs"), jen.Func().Params(jen.Id(k).String()).Add(body))
	return nil
}

// probe reports whether f would emit nothing, without using up local
// variable names.
func (e *emitter) probe(f func(g *jen.Group) error) (bool, error) {
	n := e.n
	defer func() { e.n = n }()
	_, empty, err := block(f)
	return empty, err
}

// elemType returns the item or value type of the slice or map type t,
// looking through named container types.
func (e *emitter) elemType(t ast.Expr) (ast.Expr, error) {
	for range 8 {
		switch x := t.(type) {
		case *ast.ArrayType:
			return x.Elt, nil
		case *ast.MapType:
			return x.Value, nil
		case *ast.Ident:
			under, ok := e.types.Types[x.Name]
			if !ok {
				return nil, fmt.Errorf("unknown container type %s", x.Name)
			}
			var err error
			if t, err = parseType(under); err != nil {
				return nil, err
			}
			continue
		}
		return nil, fmt.Errorf("unexpected container type %T", t)
	}
	return nil, fmt.Errorf("container type nested too deeply")
}

// itemsCount emits the minItems and maxItems checks of v.
func itemsCount(g *jen.Group, s *openapi3.Schema, v jen.Code, a at) {
	if s.MinItems != 0 {
		g.If(jen.Len(v).Op("<").Lit(int(s.MinItems))).BlockFunc(func(g *jen.Group) { add(g, a, msgMinItems(s.MinItems)) })
	}
	if s.MaxItems != nil {
		g.If(jen.Len(v).Op(">").Lit(int(*s.MaxItems))).BlockFunc(func(g *jen.Group) { add(g, a, msgMaxItems(*s.MaxItems)) })
	}
}

func isSelector(t ast.Expr, pkg, name string) bool {
	sel, ok := t.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, pkg) && sel.Sel.Name == name
}

// block collects the statements f emits into a block, and reports
// whether it is empty.
func block(f func(g *jen.Group) error) (*jen.Statement, bool, error) {
	var err error
	st := jen.BlockFunc(func(g *jen.Group) { err = f(g) })
	return st, fmt.Sprintf("%#v", st) == "{\n}", err
}

// nodeDecl declares the validation.Path variable name for the value at a.
func nodeDecl(name string, a at) jen.Code {
	field := func(k string, v jen.Code) jen.Code { return jen.Id(k).Op(":").Add(v) }
	vals := []jen.Code{field("Parent", a.ptr())}
	switch a.step {
	case validation.StepName:
		vals = append(vals, field("Name", a.arg))
	case validation.StepIndex:
		vals = append(vals, field("Index", a.arg), field("Kind", jen.Qual(validationPkg, "StepIndex")))
	case validation.StepKey:
		vals = append(vals, field("Name", a.arg), field("Kind", jen.Qual(validationPkg, "StepKey")))
	}
	return jen.Id(name).Op(":=").Qual(validationPkg, "Path").Values(vals...)
}
