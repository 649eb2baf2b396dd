package validators

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/svcrun/svc/generator/gotypes"
)

// helpersSrc is the helper code generated validators share; see
// internal/rt.
//
//go:embed internal/rt/rt.go
var helpersSrc []byte

// withHelpers renders f with our header and appends the helpers its code
// uses (and the helpers those use), copied from internal/rt.
func withHelpers(f *jen.File) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	gen, err := parseGo("validate.gen.go", buf.Bytes())
	if err != nil {
		return nil, err
	}
	rt, err := parseGo("rt.go", helpersSrc)
	if err != nil {
		return nil, err
	}

	// Pull in helpers by name until nothing new is referenced.
	used := identsIn(gen.file.Decls...)
	var keep []ast.Decl
	kept := map[ast.Decl]bool{}
	for changed := true; changed; {
		changed = false
		for _, d := range rt.file.Decls {
			if kept[d] || isImport(d) || !slices.ContainsFunc(declared(d), func(n string) bool { return used[n] }) {
				continue
			}
			kept[d] = true
			changed = true
			for n := range identsIn(d) {
				used[n] = true
			}
		}
	}
	for _, d := range rt.file.Decls {
		if kept[d] {
			keep = append(keep, d)
		}
	}

	imports := map[string]bool{}
	for _, is := range gen.file.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		imports[p] = true
	}
	rtUsed := identsIn(keep...)
	for _, is := range rt.file.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		if rtUsed[p[strings.LastIndex(p, "/")+1:]] {
			imports[p] = true
		}
	}

	var out bytes.Buffer
	out.WriteString(gotypes.Header + "\n\n")
	fmt.Fprintf(&out, "package %s\n\n", gen.file.Name.Name)
	var std, other []string
	for p := range imports {
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			other = append(other, p)
		} else {
			std = append(std, p)
		}
	}
	slices.Sort(std)
	slices.Sort(other)
	out.WriteString("import (\n")
	for _, p := range std {
		fmt.Fprintf(&out, "\t%q\n", p)
	}
	out.WriteString("\n")
	for _, p := range other {
		fmt.Fprintf(&out, "\t%q\n", p)
	}
	out.WriteString(")\n\n")
	out.Write(gen.src[gen.offset(gen.endOfImports()):])
	if len(keep) > 0 {
		out.WriteString("\n// The helpers below are copied from generator/validators/internal/rt.\n\n")
		for _, d := range keep {
			out.Write(rt.text(d))
			out.WriteString("\n\n")
		}
	}
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format: %w", err)
	}
	return src, nil
}

type goFile struct {
	fset *token.FileSet
	file *ast.File
	src  []byte
}

func parseGo(name string, src []byte) (*goFile, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	return &goFile{fset: fset, file: f, src: src}, nil
}

func (g *goFile) offset(p token.Pos) int { return g.fset.Position(p).Offset }

// endOfImports is where the declarations after the imports start.
func (g *goFile) endOfImports() token.Pos {
	end := g.file.Name.End()
	for _, d := range g.file.Decls {
		if isImport(d) {
			end = d.End()
		}
	}
	return end
}

// text returns the source of d with its doc comment.
func (g *goFile) text(d ast.Decl) []byte {
	start := d.Pos()
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	case *ast.GenDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	}
	return g.src[g.offset(start):g.offset(d.End())]
}

func isImport(d ast.Decl) bool {
	g, ok := d.(*ast.GenDecl)
	return ok && g.Tok == token.IMPORT
}

// declared returns the names d declares; a method counts as declaring its
// receiver's type, so that it comes along with the type.
func declared(d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			t := d.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				return []string{id.Name}
			}
		}
		return []string{d.Name.Name}
	case *ast.GenDecl:
		var out []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
		return out
	}
	return nil
}

func identsIn(decls ...ast.Decl) map[string]bool {
	out := map[string]bool{}
	for _, d := range decls {
		ast.Inspect(d, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				out[id.Name] = true
			}
			return true
		})
	}
	return out
}
