package validators

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/generator/gotypes"
	"github.com/svcrun/svc/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files (the fixture packages) from what Generate emits")

// fixtures are the schemas whose generated code is committed as compiled
// packages under internal/fixtures; those files are the golden files.
var fixtures = []struct{ name, schema string }{
	{"person", "../../example-plugin/api/openapi.yaml"},
	{"rich", "testdata/rich.yaml"},
}

func loadDoc(t testing.TB, file string) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return doc
}

func loadBase(t testing.TB) *openapi3.T {
	t.Helper()
	base, err := openapi3.NewLoader().LoadFromData(schemas.Base)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// TestGolden regenerates every fixture package and compares it with the
// committed files (go test -run TestGolden -update rewrites them). The
// schema is copied too, so that the fixtures' tests use what their code
// was generated from.
func TestGolden(t *testing.T) {
	base := loadBase(t)
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			doc := loadDoc(t, fx.schema)
			schema, err := os.ReadFile(fx.schema)
			if err != nil {
				t.Fatal(err)
			}
			types, err := gotypes.Generate(doc, gotypes.Options{Package: fx.name, Models: models(doc)})
			if err != nil {
				t.Fatal(err)
			}
			validate, err := Generate(doc, base, Options{Package: fx.name})
			if err != nil {
				t.Fatal(err)
			}
			codec, _, err := GenerateCodec(doc, Options{Package: fx.name, Models: models(doc)})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("internal", "fixtures", fx.name)
			for file, want := range map[string][]byte{"zz_generated.types.go": types, "zz_generated.validate.go": validate, "zz_generated.codec.go": codec, "openapi.yaml": schema} {
				path := filepath.Join(dir, file)
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, want, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -run TestGolden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from what the generators emit now; review and run go test -run TestGolden -update", path)
				}
			}
		})
	}
}

func models(doc *openapi3.T) []string {
	var out []string
	for name, ref := range doc.Components.Schemas {
		if ref.Value.Extensions[ExtModel] != nil {
			out = append(out, name)
		}
	}
	return out
}
