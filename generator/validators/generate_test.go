package validators

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestGenerateConcurrently(t *testing.T) {
	base := loadBase(t)
	var wg sync.WaitGroup
	for range 3 {
		for _, fx := range fixtures {
			wg.Go(func() {
				doc := loadDoc(t, fx.schema)
				got, err := Generate(doc, base, Options{Package: fx.name})
				if err != nil {
					t.Error(err)
					return
				}
				want, err := os.ReadFile(filepath.Join("internal", "fixtures", fx.name, "zz_generated.validate.go"))
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: output differs from the fixture", fx.name)
				}
			})
		}
	}
	wg.Wait()
}

func TestGenerateLeavesInputAlone(t *testing.T) {
	doc := loadDoc(t, "testdata/rich.yaml")
	base := loadBase(t)
	before, _ := json.Marshal(doc)
	baseBefore, _ := json.Marshal(base)
	if _, err := Generate(doc, base, Options{Package: "rich"}); err != nil {
		t.Fatal(err)
	}
	if _, err := FullSchema(doc, base, "Gadget"); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(doc)
	baseAfter, _ := json.Marshal(base)
	if !bytes.Equal(before, after) || !bytes.Equal(baseBefore, baseAfter) {
		t.Error("Generate or FullSchema modified its input")
	}
}

func TestGenerateRefuses(t *testing.T) {
	base := loadBase(t)
	bad := schemaDoc(t, `
    S:
      type: object
      properties:
        a: {type: string, format: hostname}
`)
	if _, err := Generate(bad, base, Options{Package: "p"}); err == nil || !strings.Contains(err.Error(), `format "hostname" is not supported`) {
		t.Errorf("unsupported schema: got %v", err)
	}
	good := schemaDoc(t, `
    S:
      type: object
      properties:
        a: {type: string}
`)
	if _, err := Generate(good, &openapi3.T{}, Options{Package: "p"}); err == nil {
		t.Error("base without ObjectMeta accepted")
	}
	if _, err := Generate(good, base, Options{Package: "p", Models: []string{"S2"}}); err == nil {
		t.Error("unknown model accepted")
	}
	if _, err := Generate(good, base, Options{Package: "not a name"}); err == nil {
		t.Error("bad package name accepted")
	}
	if src, err := Generate(good, base, Options{Package: "p"}); err != nil || !bytes.Contains(src, []byte("func ValidateMJSON(")) {
		t.Errorf("minimal document: %v\n%s", err, src)
	}
}

func TestFullSchema(t *testing.T) {
	doc := loadDoc(t, "../../example-plugin/api/openapi.yaml")
	full, err := FullSchema(doc, loadBase(t), "Person")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"apiVersion", "kind", "metadata", "spec"}; !slices.Equal(full.Required, want) {
		t.Errorf("required %v, want %v", full.Required, want)
	}
	for _, p := range []string{"apiVersion", "kind", "metadata", "spec", "status"} {
		if full.Properties[p] == nil || full.Properties[p].Ref != "" {
			t.Errorf("property %s missing or not inlined: %+v", p, full.Properties[p])
		}
	}
	for _, s := range []*openapi3.Schema{full, full.Properties["spec"].Value, full.Properties["status"].Value, full.Properties["metadata"].Value} {
		if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
			t.Errorf("object schema %v is not closed", s.Properties)
		}
	}
	if f := full.Properties["spec"].Value.Properties["age"].Value.Format; f != "int64" {
		t.Errorf("age format %q, want int64", f)
	}
	if labels := full.Properties["metadata"].Value.Properties["labels"].Value; labels.AdditionalProperties.Schema == nil {
		t.Error("metadata.labels lost its value schema")
	}
	// The copy is independent of the document.
	full.Properties["spec"].Value.Properties["name"].Value.MaxLength = nil
	if doc.Components.Schemas["PersonSpec"].Value.Properties["name"].Value.MaxLength == nil {
		t.Error("FullSchema shares schemas with the document")
	}
	if _, err := FullSchema(doc, loadBase(t), "Nobody"); err == nil {
		t.Error("unknown model accepted")
	}
	rec := schemaDoc(t, `
    S:
      type: object
      properties:
        s: {$ref: "#/components/schemas/S"}
`)
	if _, err := FullSchema(rec, loadBase(t), "M"); err == nil {
		t.Error("recursive schema inlined")
	}
}

// FuzzCheck feeds documents to Check and Generate: neither may panic, and
// whatever Check accepts must generate.
func FuzzCheck(f *testing.F) {
	for _, fx := range fixtures {
		data, err := os.ReadFile(fx.schema)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{type: object, properties: {a: {type: string, pattern: "\\u00E9+"}}}`,
		`{type: object, properties: {a: {type: array, items: {type: array, items: {type: object, additionalProperties: true}}}}}`,
		`{type: object, properties: {a: {type: object, additionalProperties: {type: object, properties: {b: {type: integer, format: int32}}}}}}`,
		`{type: object, properties: {a: {type: string, enum: ["%d", "a\"b"]}}}`,
		`{type: object, properties: {a-b: {type: string}, a_b: {type: string}}}`,
		`{type: object, properties: {a: {allOf: [{type: string}]}}}`,
	} {
		f.Add([]byte(`openapi: 3.0.3
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    M:
      x-svc-model: {group: g.example.com, version: v1, kind: M, plural: ms, singular: m}
      type: object
      properties:
        spec: {$ref: "#/components/schemas/S"}
    S: ` + s + "\n"))
	}
	base := loadBase(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(data)
		if err != nil || doc.Validate(loader.Context) != nil {
			return
		}
		if issues := Check(doc); len(issues) > 0 {
			if _, err := Generate(doc, base, Options{Package: "p"}); err == nil {
				t.Fatalf("Generate accepted a document with issues %v", issues)
			}
			return
		}
		if len(models(doc)) == 0 {
			return
		}
		// Name clashes (two names, one Go identifier) are found by Generate.
		if _, err := Generate(doc, base, Options{Package: "p"}); err != nil && !strings.Contains(err.Error(), "x-go-name") {
			t.Fatalf("Check found no issue, but Generate fails: %v", err)
		}
	})
}
