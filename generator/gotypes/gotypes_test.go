package gotypes

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The golden files are the committed fixture packages of
// generator/validators, which compile them and test them; its TestGolden
// -update rewrites them.
var fixtures = []struct{ name, schema, golden string }{
	{"person", "../../example-plugin/api/openapi.yaml", "../validators/internal/fixtures/person/zz_generated.types.go"},
	{"rich", "../validators/testdata/rich.yaml", "../validators/internal/fixtures/rich/zz_generated.types.go"},
}

func load(t testing.TB, file string) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatal(err)
	}
	return doc
}

func parse(t testing.TB, src string) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func models(doc *openapi3.T) []string {
	var out []string
	for name, ref := range doc.Components.Schemas {
		if ref.Value.Extensions["x-svc-model"] != nil {
			out = append(out, name)
		}
	}
	return out
}

func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			doc := load(t, fx.schema)
			got, err := Generate(doc, Options{Package: fx.name, Models: models(doc)})
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(fx.golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s; review and run go test ./generator/validators -run TestGolden -update", fx.golden)
			}
			imports(t, got)
		})
	}
}

// imports checks that generated code needs nothing but the standard
// library and the runtime.
func imports(t *testing.T, src []byte) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(src), Header+"\n") {
		t.Errorf("source does not start with %q", Header)
	}
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") && !strings.HasPrefix(p, "github.com/svcrun/svc/runtime/") {
			t.Errorf("generated code imports %s", p)
		}
	}
}

func TestBuild(t *testing.T) {
	doc := load(t, "../validators/testdata/rich.yaml")
	r, err := Build(doc, Options{Package: "rich", Models: []string{"Gadget", "Gizmo"}})
	if err != nil {
		t.Fatal(err)
	}
	for comp, goName := range map[string]string{
		"Gadget": "Gadget", "GadgetSpec": "GadgetSpec", "GadgetSpecDimensions": "GadgetSpecDimensions",
		"GadgetSpecNotesItem": "GadgetSpecNotesItem", "GizmoRulesItem": "GizmoRulesItem", "Phase": "Phase",
	} {
		if r.TypeNames[comp] != goName {
			t.Errorf("component %s: Go name %q, want %q", comp, r.TypeNames[comp], goName)
		}
	}
	spec := r.Doc.Components.Schemas["GadgetSpec"].Value
	if ref := spec.Properties["dimensions"].Ref; ref != "#/components/schemas/GadgetSpecDimensions" {
		t.Errorf("inline object not hoisted: dimensions is %q", ref)
	}
	if ref := spec.Properties["notes"].Value.Items.Ref; ref != "#/components/schemas/GadgetSpecNotesItem" {
		t.Errorf("inline array item not hoisted: %q", ref)
	}
	if doc.Components.Schemas["GadgetSpec"].Value.Properties["dimensions"].Ref != "" {
		t.Error("Build hoisted in the caller's document")
	}
	gadget := r.Structs["Gadget"]
	if gadget == nil || len(gadget.Fields) != 2 {
		t.Fatalf("Gadget struct: %+v", gadget)
	}
	for json, want := range map[string]Field{
		"spec":   {Name: "Spec", JSON: "spec", Type: "GadgetSpec"},
		"status": {Name: "Status", JSON: "status", Type: "*GadgetStatus", OmitEmpty: true},
	} {
		if f, ok := gadget.Field(json); !ok || f != want {
			t.Errorf("Gadget.%s = %+v, want %+v", json, f, want)
		}
	}
	fields := map[string]string{}
	for _, f := range r.Structs["GadgetSpec"].Fields {
		fields[f.JSON] = f.Name + " " + f.Type
	}
	for json, want := range map[string]string{
		"age": "", "id": "ID *string", "homepage": "Homepage *string", "contact": "Contact *string",
		"releasedAt": "ReleasedAt *time.Time", "releaseDate": "ReleaseDate *string", "size": "Size int32",
		"serial": "Serial *int64", "count": "Count *int64", "ratio": "Ratio *float64", "weight": "Weight *float64",
		"tags": "Tags []string", "labels": "Labels map[string]string", "extras": "Extras map[string]interface{}",
		"parts": "Parts []Part", "grid": "Grid [][]float64", "mode": "Mode *GadgetSpecMode",
	} {
		if fields[json] != want {
			t.Errorf("GadgetSpec.%s: %q, want %q", json, fields[json], want)
		}
	}
	if r.Types["Phase"] != "string" {
		t.Errorf("Phase: %q", r.Types["Phase"])
	}
	if !bytes.Contains(r.Source, []byte("type Gadget struct {\n\tobject.Envelope\n")) {
		t.Error("Gadget does not embed object.Envelope")
	}
	if !bytes.Contains(r.Source, []byte("_ object.Object = (*Gizmo)(nil)")) {
		t.Error("no interface guard for Gizmo")
	}
}

func TestRefusals(t *testing.T) {
	const head = "openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\npaths: {}\ncomponents:\n  schemas:\n"
	for _, tc := range []struct {
		name, schemas string
		models        []string
		want          string
	}{
		{"no schemas", "    {}\n", nil, "no components.schemas"},
		{"name clash", "    a-b: {type: object, properties: {x: {type: string}}}\n    AB: {type: object, properties: {x: {type: string}}}\n", nil, "Go name AB"},
		{"field clash", "    S: {type: object, properties: {a-b: {type: string}, a_b: {type: string}}}\n", nil, "Go field AB"},
		{"hoisted clash", "    S: {type: object, properties: {dims: {type: object, properties: {w: {type: integer}}}}}\n    SDims: {type: string}\n", nil, "move the inline schema"},
		{"model not an object", "    S: {type: string}\n", []string{"S"}, "not an object schema"},
		{"unknown model", "    S: {type: object, properties: {x: {type: string}}}\n", []string{"T"}, "not an object schema"},
		{"model with an envelope field", "    S: {type: object, properties: {kind: {type: string}}}\n", []string{"S"}, "envelope provides"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(parse(t, head+tc.schemas), Options{Package: "p", Models: tc.models})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := Generate(parse(t, head+"    S: {type: string}\n"), Options{Package: "2x"}); err == nil {
		t.Error("bad package name accepted")
	}
}

func TestConcurrentAndPure(t *testing.T) {
	doc := load(t, "../validators/testdata/rich.yaml")
	before, _ := json.Marshal(doc)
	var wg sync.WaitGroup
	outs := make([][]byte, 4)
	for i := range outs {
		wg.Go(func() {
			src, err := Generate(doc, Options{Package: "rich", Models: []string{"Gadget", "Gizmo"}})
			if err != nil {
				t.Error(err)
			}
			outs[i] = src
		})
	}
	wg.Wait()
	for _, o := range outs[1:] {
		if !bytes.Equal(o, outs[0]) {
			t.Error("outputs differ between runs")
		}
	}
	if after, _ := json.Marshal(doc); !bytes.Equal(before, after) {
		t.Error("Generate modified its input")
	}
}

func TestTypeName(t *testing.T) {
	for in, want := range map[string]string{
		"PersonSpec": "PersonSpec", "person_spec": "PersonSpec", "v1.Person": "V1Person", "a-b c": "ABC",
		"9lives": "", "": "", "é": "É",
	} {
		if got := TypeName(in); got != want {
			t.Errorf("TypeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFixturesAreCurrent(t *testing.T) {
	// The fixture packages' copies of the schemas must be the schemas.
	for _, fx := range fixtures {
		a, err := os.ReadFile(fx.schema)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(fx.golden), "openapi.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s: fixture schema is stale; run go test ./generator/validators -run TestGolden -update", fx.name)
		}
	}
}
