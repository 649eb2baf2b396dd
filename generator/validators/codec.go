package validators

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"github.com/dave/jennifer/jen"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/generator/gotypes"
	"github.com/svcrun/svc/runtime/jsonfast"
)

// jsonfastPkg holds the helpers the generated codecs call.
var jsonfastPkg = reflect.TypeFor[jsonfast.Decoder]().PkgPath()

// GenerateCodec returns the Go source of the JSON codecs of doc's models
// (Options as for Generate): for every model K whose Go types it can
// handle, decodeKJSON, which decodes a request body straight into a *K
// (model.Model.DecodeJSON), and encodeKJSON, which appends what
// encoding/json's Marshal writes for it (model.Model.EncodeJSON), and
// for a model with a status, setKStatusJSON, which decodes a stored
// status into a *K (model.Model.SetStatusJSON). It returns the component
// names of the models it emitted codecs for; the
// others keep the generic path.
func GenerateCodec(doc *openapi3.T, opts Options) (src []byte, models []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			src, models, err = nil, nil, fmt.Errorf("validators: codec: internal error: %v", r)
		}
	}()
	if doc == nil || len(opts.Models) == 0 {
		return nil, nil, errors.New("validators: codec: no models")
	}
	names := slices.Sorted(slices.Values(opts.Models))
	types, err := gotypes.Build(doc, gotypes.Options{Package: opts.Package, Models: names})
	if err != nil {
		return nil, nil, fmt.Errorf("validators: codec: %w", err)
	}
	c := &codecEmitter{types: types, schemaOf: map[string]*openapi3.Schema{}, models: map[string]bool{}}
	for _, comp := range names {
		c.models[types.TypeNames[comp]] = true
	}
	for comp, name := range types.TypeNames {
		c.schemaOf[name] = types.Doc.Components.Schemas[comp].Value
	}
	f := jen.NewFile(opts.Package)
	f.ImportName(objectPkg, "object")
	f.ImportName(jsonfastPkg, "jsonfast")
	var decls []jen.Code
	structs := map[string]bool{}
	for _, comp := range names {
		name := types.TypeNames[comp]
		c.structs = map[string]bool{}
		code, err := c.model(name)
		if err != nil {
			// Types the codec cannot handle: the model decodes the
			// generic way, as before.
			continue
		}
		models = append(models, comp)
		decls = append(decls, code...)
		maps.Copy(structs, c.structs)
	}
	// The structs the models reach, and those these reach in turn.
	done := map[string]bool{}
	for len(structs) > len(done) {
		for _, name := range slices.Sorted(maps.Keys(structs)) {
			if done[name] {
				continue
			}
			done[name] = true
			c.structs = map[string]bool{}
			code, err := c.structFuncs(name)
			if err != nil {
				return nil, nil, fmt.Errorf("validators: codec: %w", err)
			}
			decls = append(decls, code...)
			maps.Copy(structs, c.structs)
		}
	}
	for _, d := range decls {
		f.Add(d)
		f.Line()
	}
	f.HeaderComment(gotypes.Header)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, nil, fmt.Errorf("validators: codec: render: %w", err)
	}
	return buf.Bytes(), models, nil
}

type codecEmitter struct {
	types    *gotypes.Result
	schemaOf map[string]*openapi3.Schema // Go type name → its schema
	structs  map[string]bool             // non-model structs the model reaches
	models   map[string]bool             // Go type names of the models
	n        int
}

func (c *codecEmitter) local(prefix string) string {
	c.n++
	return prefix + strconv.Itoa(c.n)
}

func decFunc(name string) string { return "decode" + name + "Fields" }
func encFunc(name string) string { return "encode" + name + "Fields" }

// model emits decodeKJSON and encodeKJSON of the model type name.
func (c *codecEmitter) model(name string) ([]jen.Code, error) {
	st := c.types.Structs[name]
	if st == nil {
		return nil, fmt.Errorf("no struct %s", name)
	}
	c.n = 0
	dec, err := c.decodeMembers(st, true)
	if err != nil {
		return nil, err
	}
	enc, err := c.encodeMembers(st, true)
	if err != nil {
		return nil, err
	}
	o := jen.Id("o")
	decode := docComment(
		fmt.Sprintf("decode%sJSON decodes data, a request body, straight into a new %s, or", name, name),
		"reports false where the generic decode must read it (see package jsonfast):",
		"model.Model.DecodeJSON.",
	).Func().Id("decode"+name+"JSON").Params(jen.Id("data").Index().Byte()).Params(jen.Qual(objectPkg, "Object"), jen.Bool()).Block(
		jen.Id("d").Op(":=").Qual(jsonfastPkg, "NewDecoder").Call(jen.Id("data")),
		jen.Defer().Id("d").Dot("Release").Call(),
		jen.Add(o).Op(":=").Op("&").Id(name).Values(),
		jen.Var().Id("env").Uint8(),
		jen.If(jen.Id("d").Dot("BeginObject").Call()).Block(dec...),
		jen.If(jen.Id("env").Op("!=").Qual(jsonfastPkg, "EnvAll").Op("||").Op("!").Id("d").Dot("End").Call()).Block(
			jen.Return(jen.Nil(), jen.False())),
		jen.Return(o, jen.True()),
	)
	body := []jen.Code{
		jen.List(o, jen.Id("ok")).Op(":=").Id("obj").Assert(jen.Op("*").Id(name)),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Qual(jsonfastPkg, "Marshal").Call(jen.Id("dst"), jen.Id("obj")))),
		jen.Id("e").Op(":=").Op("&").Qual(jsonfastPkg, "Encoder").Values(jen.Dict{jen.Id("B"): jen.Id("dst")}),
		jen.Id("e").Dot("Byte").Call(jen.LitRune('{')),
		jen.Id("e").Dot("Envelope").Call(jen.Op("&").Add(o).Dot("Envelope")),
	}
	body = append(body, enc...)
	body = append(body,
		jen.Id("e").Dot("Byte").Call(jen.LitRune('}')),
		jen.Return(jen.Id("e").Dot("B"), jen.Id("e").Dot("Err")),
	)
	encode := docComment(
		fmt.Sprintf("encode%sJSON appends the JSON of o, a *%s, to dst: what encoding/json's", name, name),
		"Marshal writes, without reflection (model.Model.EncodeJSON).",
	).Func().Id("encode"+name+"JSON").Params(jen.Id("dst").Index().Byte(), jen.Id("obj").Qual(objectPkg, "Object")).Params(jen.Index().Byte(), jen.Error()).Block(body...)
	out := []jen.Code{decode, encode}
	if f, ok := st.Field("status"); ok {
		set, err := c.statusSetter(name, f)
		if err != nil {
			return nil, err
		}
		out = append(out, set)
	}
	return out, nil
}

// statusSetter emits setKStatusJSON, which decodes a stored status into
// the status field f of a *K (model.Model.SetStatusJSON): an update keeps
// the stored status, and encoding/json by reflection took 1.7% of an
// update's server CPU for it (docs/performance.md).
func (c *codecEmitter) statusSetter(name string, f gotypes.Field) (jen.Code, error) {
	t, err := parseType(f.Type)
	if err != nil {
		return nil, err
	}
	dec, err := c.decodeInto(jen.Id("v"), t, f.OmitEmpty)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", name, f.Name, err)
	}
	body := []jen.Code{
		jen.List(jen.Id("o"), jen.Id("ok")).Op(":=").Id("obj").Assert(jen.Op("*").Id(name)),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.False())),
		jen.Id("d").Op(":=").Qual(jsonfastPkg, "NewDecoder").Call(jen.Id("data")),
		jen.Defer().Id("d").Dot("Release").Call(),
		jen.Var().Id("v").Add(typeCode(t)),
	}
	body = append(body, dec...)
	body = append(body,
		jen.If(jen.Op("!").Id("d").Dot("End").Call()).Block(jen.Return(jen.False())),
		jen.Id("o").Dot(f.Name).Op("=").Id("v"),
		jen.Return(jen.True()),
	)
	return docComment(
		fmt.Sprintf("set%sStatusJSON replaces the status of obj, a *%s, with data, a stored", name, name),
		"status's JSON, or reports false where encoding/json must read it (see",
		"package jsonfast): model.Model.SetStatusJSON.",
	).Func().Id("set"+name+"StatusJSON").Params(jen.Id("obj").Qual(objectPkg, "Object"), jen.Id("data").Index().Byte()).Bool().Block(body...), nil
}

// structFuncs emits the decoder and encoder of the non-model struct name.
func (c *codecEmitter) structFuncs(name string) ([]jen.Code, error) {
	st := c.types.Structs[name]
	c.n = 0
	dec, err := c.decodeMembers(st, false)
	if err != nil {
		return nil, err
	}
	enc, err := c.encodeMembers(st, false)
	if err != nil {
		return nil, err
	}
	d := jen.Id("d").Op("*").Qual(jsonfastPkg, "Decoder")
	e := jen.Id("e").Op("*").Qual(jsonfastPkg, "Encoder")
	decBody := append([]jen.Code{jen.If(jen.Op("!").Id("d").Dot("BeginObject").Call()).Block(jen.Return())}, dec...)
	encBody := append([]jen.Code{jen.Id("e").Dot("Byte").Call(jen.LitRune('{'))}, enc...)
	encBody = append(encBody, jen.Id("e").Dot("Byte").Call(jen.LitRune('}')))
	return []jen.Code{
		jen.Func().Id(decFunc(name)).Params(d, jen.Id("o").Op("*").Id(name)).Block(decBody...),
		jen.Func().Id(encFunc(name)).Params(e, jen.Id("o").Op("*").Id(name)).Block(encBody...),
	}, nil
}

// decodeMembers emits the loop over an object's members (after its
// opening brace) into o's fields; required properties must be present.
func (c *codecEmitter) decodeMembers(st *gotypes.Struct, model bool) ([]jen.Code, error) {
	s := c.schemaOf[st.Name]
	if s == nil {
		return nil, fmt.Errorf("no schema for %s", st.Name)
	}
	var out []jen.Code
	var cases []jen.Code
	var checks []jen.Code
	for _, f := range st.Fields {
		if f.Name == "AdditionalProperties" {
			return nil, fmt.Errorf("%s: additional properties", st.Name)
		}
		t, err := parseType(f.Type)
		if err != nil {
			return nil, err
		}
		var body []jen.Code
		if slices.Contains(s.Required, f.JSON) {
			seen := c.local("seen")
			out = append(out, jen.Id(seen).Op(":=").False())
			body = append(body, jen.Id(seen).Op("=").True())
			checks = append(checks, jen.If(jen.Op("!").Id(seen)).Block(jen.Id("d").Dot("Fail").Call()))
		}
		stmts, err := c.decodeInto(jen.Id("o").Dot(f.Name), t, f.OmitEmpty)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", st.Name, f.Name, err)
		}
		body = append(body, stmts...)
		cases = append(cases, jen.Case(jen.Lit(f.JSON)).Block(body...))
	}
	cases = append(cases, jen.Default().Block(jen.Id("d").Dot("Fail").Call()))
	loop := []jen.Code{}
	if model {
		loop = append(loop,
			jen.Id("name").Op(":=").Id("d").Dot("Name").Call(),
			jen.If(jen.Id("d").Dot("Envelope").Call(jen.Op("&").Id("o").Dot("Envelope"), jen.Id("name"), jen.Op("&").Id("env"))).Block(jen.Continue()),
			jen.Switch(jen.String().Call(jen.Id("name"))).Block(cases...))
	} else {
		loop = append(loop, jen.Switch(jen.String().Call(jen.Id("d").Dot("Name").Call())).Block(cases...))
	}
	out = append(out, jen.For(jen.Id("d").Dot("More").Call()).Block(loop...))
	out = append(out, checks...)
	return out, nil
}

// underlying resolves a named non-struct type to its type expression.
func (c *codecEmitter) underlying(t ast.Expr) (ast.Expr, bool, error) {
	id, ok := t.(*ast.Ident)
	if !ok {
		return t, false, nil
	}
	u, ok := c.types.Types[id.Name]
	if !ok {
		return t, false, nil
	}
	x, err := parseType(u)
	return x, true, err
}

// numBits returns the size of a Go integer or float type name (0: not one).
func numBits(name string) (bits int, float bool) {
	switch name {
	case "int", "int64":
		return 64, false
	case "int32":
		return 32, false
	case "int16":
		return 16, false
	case "int8":
		return 8, false
	case "float64":
		return 64, true
	case "float32":
		return 32, true
	}
	return 0, false
}

func isFree(t ast.Expr) bool {
	if _, ok := t.(*ast.InterfaceType); ok {
		return true
	}
	if isIdent(t, "any") {
		return true
	}
	if m, ok := t.(*ast.MapType); ok && isIdent(m.Key, "string") {
		return isFree(m.Value)
	}
	return false
}

// decodeInto emits statements that decode the next value into target,
// of Go type t. An empty array or object for an omitempty field fails:
// the typed validator reads it as absent, the schema's as present.
func (c *codecEmitter) decodeInto(target *jen.Statement, t ast.Expr, omitEmpty bool) ([]jen.Code, error) {
	d := jen.Id("d")
	if isFree(t) {
		out := []jen.Code{d.Clone().Dot("Any").Call(jen.Op("&").Add(target))}
		if _, isMap := t.(*ast.MapType); isMap && omitEmpty {
			out = append(out, jen.If(jen.Len(target).Op("==").Lit(0)).Block(d.Clone().Dot("Fail").Call()))
		}
		return out, nil
	}
	if isSelector(t, "time", "Time") {
		return []jen.Code{jen.Add(target).Op("=").Add(d.Clone().Dot("Time").Call())}, nil
	}
	switch x := t.(type) {
	case *ast.Ident:
		switch x.Name {
		case "string":
			return []jen.Code{jen.Add(target).Op("=").Add(d.Clone().Dot("String").Call())}, nil
		case "bool":
			return []jen.Code{jen.Add(target).Op("=").Add(d.Clone().Dot("Bool").Call())}, nil
		}
		if bits, float := numBits(x.Name); bits > 0 {
			fn := "Int"
			if float {
				fn = "Float"
			}
			val := d.Clone().Dot(fn).Call(jen.Lit(bits))
			if x.Name != "int64" && x.Name != "float64" {
				val = jen.Id(x.Name).Call(val)
			}
			return []jen.Code{jen.Add(target).Op("=").Add(val)}, nil
		}
		if _, ok := c.types.Structs[x.Name]; ok {
			if c.models[x.Name] {
				// Its envelope is not among its fields.
				return nil, fmt.Errorf("a model nested in another")
			}
			c.structs[x.Name] = true
			return []jen.Code{jen.Id(decFunc(x.Name)).Call(d, jen.Op("&").Add(target))}, nil
		}
		u, named, err := c.underlying(x)
		if err != nil || !named {
			return nil, fmt.Errorf("unsupported type %s", x.Name)
		}
		v := c.local("v")
		inner, err := c.decodeInto(jen.Id(v), u, omitEmpty)
		if err != nil {
			return nil, err
		}
		return append(append([]jen.Code{jen.Var().Id(v).Add(typeCode(u))}, inner...),
			jen.Add(target).Op("=").Id(x.Name).Call(jen.Id(v))), nil
	case *ast.StarExpr:
		v := c.local("p")
		if id, ok := x.X.(*ast.Ident); ok && c.types.Structs[id.Name] != nil && !c.models[id.Name] {
			c.structs[id.Name] = true
			return []jen.Code{jen.Id(v).Op(":=").New(jen.Id(id.Name)), jen.Id(decFunc(id.Name)).Call(d, jen.Id(v)), jen.Add(target).Op("=").Id(v)}, nil
		}
		inner, err := c.decodeInto(jen.Op("*").Id(v), x.X, false)
		if err != nil {
			return nil, err
		}
		return append(append([]jen.Code{jen.Id(v).Op(":=").New(typeCode(x.X))}, inner...), jen.Add(target).Op("=").Id(v)), nil
	case *ast.ArrayType:
		if x.Len != nil {
			return nil, errors.New("fixed-size array")
		}
		if isIdent(x.Elt, "byte") || isIdent(x.Elt, "uint8") {
			return nil, errors.New("[]byte")
		}
		s, v := c.local("s"), c.local("v")
		inner, err := c.decodeInto(jen.Id(v), x.Elt, false)
		if err != nil {
			return nil, err
		}
		body := append([]jen.Code{jen.Var().Id(v).Add(typeCode(x.Elt))}, inner...)
		body = append(body, jen.Id(s).Op("=").Append(jen.Id(s), jen.Id(v)))
		blk := []jen.Code{
			jen.Id(s).Op(":=").Add(typeCode(x)).Values(),
			jen.For(d.Clone().Dot("More").Call()).Block(body...),
			jen.Add(target).Op("=").Id(s),
		}
		if omitEmpty {
			blk = append(blk, jen.If(jen.Len(jen.Id(s)).Op("==").Lit(0)).Block(d.Clone().Dot("Fail").Call()))
		}
		return []jen.Code{jen.If(d.Clone().Dot("BeginArray").Call()).Block(blk...)}, nil
	case *ast.MapType:
		if !isIdent(x.Key, "string") {
			return nil, errors.New("map key not a string")
		}
		m, k, v := c.local("m"), c.local("k"), c.local("v")
		inner, err := c.decodeInto(jen.Id(v), x.Value, false)
		if err != nil {
			return nil, err
		}
		body := append([]jen.Code{jen.Id(k).Op(":=").Add(d.Clone().Dot("String").Call()), jen.Var().Id(v).Add(typeCode(x.Value))}, inner...)
		body = append(body, jen.Id(m).Index(jen.Id(k)).Op("=").Id(v))
		blk := []jen.Code{
			jen.Id(m).Op(":=").Add(typeCode(x)).Values(),
			jen.For(d.Clone().Dot("More").Call()).Block(body...),
			jen.Add(target).Op("=").Id(m),
		}
		if omitEmpty {
			blk = append(blk, jen.If(jen.Len(jen.Id(m)).Op("==").Lit(0)).Block(d.Clone().Dot("Fail").Call()))
		}
		return []jen.Code{jen.If(d.Clone().Dot("BeginObject").Call()).Block(blk...)}, nil
	}
	return nil, fmt.Errorf("unsupported type %T", t)
}

// typeCode is the jennifer form of a Go type expression of the
// generated package (identifiers, time.Time, pointers, slices, maps).
func typeCode(t ast.Expr) jen.Code {
	switch x := t.(type) {
	case *ast.Ident:
		return jen.Id(x.Name)
	case *ast.SelectorExpr:
		if isSelector(t, "time", "Time") {
			return jen.Qual("time", "Time")
		}
		return jen.Id(x.X.(*ast.Ident).Name + "." + x.Sel.Name)
	case *ast.StarExpr:
		return jen.Op("*").Add(typeCode(x.X))
	case *ast.ArrayType:
		return jen.Index().Add(typeCode(x.Elt))
	case *ast.MapType:
		return jen.Map(typeCode(x.Key)).Add(typeCode(x.Value))
	case *ast.InterfaceType:
		return jen.Interface()
	}
	panic(fmt.Sprintf("typeCode: %T", t))
}

// encodeMembers emits the members of o's struct, after its opening brace
// (and, for a model, after its envelope). A comma goes before every
// member but the first written; where that depends on which omitempty
// members were written, a local "more" tells.
func (c *codecEmitter) encodeMembers(st *gotypes.Struct, model bool) ([]jen.Code, error) {
	const (
		none  = iota // nothing written yet
		some         // something written
		maybe        // more tells
	)
	state := none
	if model {
		state = some
	}
	var out []jen.Code
	declared := false
	for fi, f := range st.Fields {
		t, err := parseType(f.Type)
		if err != nil {
			return nil, err
		}
		v := jen.Id("o").Dot(f.Name)
		var cond jen.Code
		if f.OmitEmpty {
			if cond, err = c.nonEmpty(v, t); err != nil {
				return nil, err
			}
		}
		vt := t
		if star, ok := t.(*ast.StarExpr); ok && cond != nil {
			// Written only when not nil.
			v, vt = jen.Parens(jen.Op("*").Add(v)), star.X
		}
		val, err := c.encodeValue(v, vt, true)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", st.Name, f.Name, err)
		}
		if id, ok := vt.(*ast.Ident); ok && vt != t && c.types.Structs[id.Name] != nil {
			// A struct behind a pointer: its encoder takes the pointer.
			val = []jen.Code{jen.Id(encFunc(id.Name)).Call(jen.Id("e"), jen.Id("o").Dot(f.Name))}
		}
		name := string(jsonfast.AppendString(nil, f.JSON)) + ":"
		var stmts []jen.Code
		switch state {
		case some:
			name = "," + name
		case maybe:
			stmts = append(stmts, jen.If(jen.Id("more")).Block(jen.Id("e").Dot("Byte").Call(jen.LitRune(','))))
		}
		if cond != nil && state != some && fi < len(st.Fields)-1 {
			if !declared {
				out = append(out, jen.Id("more").Op(":=").False())
				declared = true
			}
			stmts = append(stmts, jen.Id("more").Op("=").True())
		}
		stmts = append(stmts, jen.Id("e").Dot("Raw").Call(jen.Lit(name)))
		stmts = append(stmts, val...)
		if cond == nil {
			out = append(out, stmts...)
			state = some
			continue
		}
		out = append(out, jen.If(cond).Block(stmts...))
		if state == none {
			state = maybe
		}
	}
	return out, nil
}

// nonEmpty is encoding/json's omitempty test of v, of type t (nil: never
// empty, as a struct).
func (c *codecEmitter) nonEmpty(v *jen.Statement, t ast.Expr) (jen.Code, error) {
	if isSelector(t, "time", "Time") {
		return nil, nil
	}
	switch x := t.(type) {
	case *ast.StarExpr, *ast.InterfaceType:
		return jen.Add(v).Op("!=").Nil(), nil
	case *ast.ArrayType, *ast.MapType:
		return jen.Len(v).Op(">").Lit(0), nil
	case *ast.Ident:
		switch x.Name {
		case "any":
			return jen.Add(v).Op("!=").Nil(), nil
		case "string":
			return jen.Add(v).Op("!=").Lit(""), nil
		case "bool":
			return v, nil
		}
		if bits, _ := numBits(x.Name); bits > 0 {
			return jen.Add(v).Op("!=").Lit(0), nil
		}
		if c.types.Structs[x.Name] != nil {
			return nil, nil
		}
		u, named, err := c.underlying(x)
		if err != nil || !named {
			return nil, fmt.Errorf("unsupported type %s", x.Name)
		}
		return c.nonEmpty(v, u)
	}
	return nil, fmt.Errorf("unsupported type %T", t)
}

// encodeValue emits the encoding of v, of type t; addressable says
// whether &v may be taken.
func (c *codecEmitter) encodeValue(v *jen.Statement, t ast.Expr, addressable bool) ([]jen.Code, error) {
	e := jen.Id("e")
	if isFree(t) {
		return []jen.Code{e.Clone().Dot("Any").Call(v)}, nil
	}
	if isSelector(t, "time", "Time") {
		return []jen.Code{e.Clone().Dot("Time").Call(v)}, nil
	}
	switch x := t.(type) {
	case *ast.Ident:
		switch x.Name {
		case "string":
			return []jen.Code{e.Clone().Dot("String").Call(v)}, nil
		case "bool":
			return []jen.Code{e.Clone().Dot("Bool").Call(v)}, nil
		}
		if bits, float := numBits(x.Name); bits > 0 {
			if float {
				return []jen.Code{e.Clone().Dot("Float").Call(jen.Float64().Call(v), jen.Lit(bits))}, nil
			}
			return []jen.Code{e.Clone().Dot("Int").Call(jen.Int64().Call(v))}, nil
		}
		if c.types.Structs[x.Name] != nil {
			if c.models[x.Name] {
				return nil, fmt.Errorf("a model nested in another")
			}
			c.structs[x.Name] = true
			if addressable {
				return []jen.Code{jen.Id(encFunc(x.Name)).Call(e, jen.Op("&").Add(v))}, nil
			}
			tmp := c.local("x")
			return []jen.Code{jen.Id(tmp).Op(":=").Add(v), jen.Id(encFunc(x.Name)).Call(e, jen.Op("&").Id(tmp))}, nil
		}
		u, named, err := c.underlying(x)
		if err != nil || !named {
			return nil, fmt.Errorf("unsupported type %s", x.Name)
		}
		return c.encodeValue(jen.Parens(typeCode(u)).Call(v), u, false)
	case *ast.StarExpr:
		inner, err := c.encodeValue(jen.Parens(jen.Op("*").Add(v)), x.X, true)
		if err != nil {
			return nil, err
		}
		return []jen.Code{jen.If(jen.Add(v).Op("==").Nil()).Block(e.Clone().Dot("Raw").Call(jen.Lit("null"))).Else().Block(inner...)}, nil
	case *ast.ArrayType:
		if x.Len != nil || isIdent(x.Elt, "byte") || isIdent(x.Elt, "uint8") {
			return nil, errors.New("unsupported array")
		}
		i := c.local("i")
		inner, err := c.encodeValue(jen.Add(v).Index(jen.Id(i)), x.Elt, addressable)
		if err != nil {
			return nil, err
		}
		body := append([]jen.Code{jen.If(jen.Id(i).Op(">").Lit(0)).Block(e.Clone().Dot("Byte").Call(jen.LitRune(',')))}, inner...)
		return []jen.Code{jen.If(jen.Add(v).Op("==").Nil()).Block(e.Clone().Dot("Raw").Call(jen.Lit("null"))).Else().Block(
			e.Clone().Dot("Byte").Call(jen.LitRune('[')),
			jen.For(jen.Id(i).Op(":=").Range().Add(v)).Block(body...),
			e.Clone().Dot("Byte").Call(jen.LitRune(']')),
		)}, nil
	case *ast.MapType:
		if !isIdent(x.Key, "string") {
			return nil, errors.New("map key not a string")
		}
		i, k := c.local("i"), c.local("k")
		inner, err := c.encodeValue(jen.Add(v).Index(jen.Id(k)), x.Value, false)
		if err != nil {
			return nil, err
		}
		body := append([]jen.Code{
			jen.If(jen.Id(i).Op(">").Lit(0)).Block(e.Clone().Dot("Byte").Call(jen.LitRune(','))),
			e.Clone().Dot("String").Call(jen.Id(k)),
			e.Clone().Dot("Byte").Call(jen.LitRune(':')),
		}, inner...)
		return []jen.Code{jen.If(jen.Add(v).Op("==").Nil()).Block(e.Clone().Dot("Raw").Call(jen.Lit("null"))).Else().Block(
			e.Clone().Dot("Byte").Call(jen.LitRune('{')),
			jen.For(jen.List(jen.Id(i), jen.Id(k)).Op(":=").Range().Qual(jsonfastPkg, "SortedKeys").Call(v)).Block(body...),
			e.Clone().Dot("Byte").Call(jen.LitRune('}')),
		)}, nil
	}
	return nil, fmt.Errorf("unsupported type %T", t)
}
