package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/model"
)

const header = `openapi: 3.0.3
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
`

// doc builds a document whose components.schemas are the given YAML,
// indented by the caller at four spaces.
func doc(schemas string) []byte { return []byte(header + schemas) }

const person = `    Person:
      x-svc-model: {group: people.example.com, version: v1alpha1, kind: Person, plural: persons, singular: person}
      x-svc-indexes:
        - {field: spec.name}
        - {name: by-age, field: spec.age, order: desc}
        - {field: spec.email, unique: true}
        - {field: "spec.tags[]"}
        - {field: spec.born}
        - {field: spec.score}
        - {field: spec.active}
        - {field: spec.address.city}
      type: object
      properties:
        spec:
          $ref: "#/components/schemas/PersonSpec"
    PersonSpec:
      type: object
      required: [name]
      properties:
        name: {type: string}
        age: {type: integer}
        email: {type: string, format: email}
        tags: {type: array, items: {type: string}}
        born: {type: string, format: date-time}
        score: {type: number}
        active: {type: boolean}
        address:
          type: object
          properties:
            city: {type: string}
        meta: {type: object, additionalProperties: {type: string}}
        matrix: {type: array, items: {type: array, items: {type: string}}}
`

func TestParseValid(t *testing.T) {
	d, err := Parse("p.yaml", doc(person), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Models) != 1 {
		t.Fatalf("models = %d", len(d.Models))
	}
	m := d.Models[0]
	if m.GroupVersionKind != (model.GroupVersionKind{Group: "people.example.com", Version: "v1alpha1", Kind: "Person"}) || m.Plural != "persons" || m.Singular != "person" {
		t.Fatalf("model = %+v", m)
	}
	want := []struct {
		name   string
		typ    model.KeyType
		multi  bool
		unique bool
		order  model.Order
		steps  int
	}{
		{"spec.name", model.String, false, false, model.Asc, 2},
		{"by-age", model.Int, false, false, model.Desc, 2},
		{"spec.email", model.String, false, true, model.Asc, 2},
		{"spec.tags", model.String, true, false, model.Asc, 2},
		{"spec.born", model.Time, false, false, model.Asc, 2},
		{"spec.score", model.Float, false, false, model.Asc, 2},
		{"spec.active", model.Bool, false, false, model.Asc, 2},
		{"spec.address.city", model.String, false, false, model.Asc, 3},
	}
	if len(m.Indexes) != len(want) {
		t.Fatalf("indexes = %d, want %d", len(m.Indexes), len(want))
	}
	for i, w := range want {
		ix := m.Indexes[i]
		if ix.Name != w.name || ix.Type != w.typ || ix.Multi != w.multi || ix.Unique != w.unique || ix.Order != w.order || len(ix.Path) != w.steps {
			t.Errorf("index %d = %+v, want %+v", i, ix, w)
		}
	}
	if !m.Indexes[0].Path[1].Required || m.Indexes[1].Path[1].Required {
		t.Errorf("required flags on the path are wrong: %+v", m.Indexes[0].Path)
	}
}

func TestParseRefusals(t *testing.T) {
	cases := []struct {
		name string
		edit func(string) string
		opts Options
		want string // in the diagnostic message
		line int    // expected line, 0 to skip
	}{
		{"reserved group", repl("group: people.example.com", "group: core.svc.run"), Options{}, `group "core.svc.run" is reserved`, 7},
		{"brand group itself", repl("group: people.example.com", "group: svc.run"), Options{}, `is reserved`, 0},
		{"other brand reserved", repl("group: people.example.com", "group: core.halo.run"), Options{Brand: "halo.run"}, `is reserved`, 0},
		{"empty group", repl("group: people.example.com, ", ""), Options{}, "x-svc-model.group is required", 7},
		{"upper plural", repl("plural: persons", "plural: Persons"), Options{}, `plural "Persons" must be lower case`, 0},
		{"camel singular", repl("singular: person", "singular: personItem"), Options{}, `singular "personItem" must be lower case`, 0},
		{"bad version", repl("version: v1alpha1", "version: v1.0"), Options{}, `version "v1.0" must look like`, 0},
		{"kind differs from schema", repl("kind: Person", "kind: Human"), Options{}, `must equal the schema's name`, 0},
		{"missing plural", repl("plural: persons, ", ""), Options{}, "x-svc-model.plural is required", 0},
		{"unknown model key", repl("singular: person}", "singular: person, scope: x}"), Options{}, "unknown key x-svc-model.scope", 0},
		{"unknown extension", repl("      type: object\n      properties:\n        spec:", "      x-svc-index: []\n      type: object\n      properties:\n        spec:"), Options{}, "unknown extension x-svc-index", 0},
		{"index on missing field", repl("{field: spec.name}", "{field: spec.nmae}"), Options{}, `field "spec.nmae": spec has no field "nmae"`, 9},
		{"index on object", repl("{field: spec.name}", "{field: spec.address}"), Options{}, `is an object`, 0},
		{"index on map", repl("{field: spec.name}", "{field: spec.meta}"), Options{}, `is an object`, 0},
		{"index on array without []", repl(`{field: "spec.tags[]"}`, "{field: spec.tags}"), Options{}, `write spec.tags[] to index each element`, 0},
		{"[] on scalar", repl("{field: spec.name}", `{field: "spec.name[]"}`), Options{}, `spec.name is not an array`, 0},
		{"array of arrays", repl("{field: spec.name}", `{field: "spec.matrix[]"}`), Options{}, `an array of arrays or objects`, 0},
		{"[] in the middle", repl("{field: spec.name}", `{field: "spec.tags[].x"}`), Options{}, `only the last segment may end in []`, 0},
		{"through a scalar", repl("{field: spec.name}", "{field: spec.name.first}"), Options{}, `spec.name is not an object`, 0},
		{"metadata index", repl("{field: spec.name}", "{name: x, field: metadata.labels}"), Options{}, `envelope fields have their default indexes`, 0},
		{"default name clash", repl("{field: spec.name}", "{name: metadata.labels, field: spec.name}"), Options{}, `index name "metadata.labels" is already taken`, 0},
		{"duplicate index name", repl("{field: spec.email, unique: true}", "{name: spec.name, field: spec.email}"), Options{}, `index name "spec.name" is already taken`, 0},
		{"bad order", repl("order: desc", "order: down"), Options{}, `order must be asc or desc`, 0},
		{"unknown index key", repl("{field: spec.name}", "{field: spec.name, uniq: true}"), Options{}, `unknown key "uniq"`, 0},
		{"unique multi", repl(`{field: "spec.tags[]"}`, `{field: "spec.tags[]", unique: true}`), Options{}, `multi-valued index cannot be unique`, 0},
		{"missing field", repl("{field: spec.name}", "{name: x}"), Options{}, `field is required`, 0},
		{"envelope declared", repl("        spec:\n          $ref", "        metadata: {type: object}\n        spec:\n          $ref"), Options{}, `metadata is part of the envelope`, 0},
		{"model not an object", repl("      type: object\n      properties:\n        spec:", "      type: string\n      properties:\n        spec:"), Options{}, `a model must be an object`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.edit(person)
			_, err := Parse("plugin.yaml", doc(src), c.opts)
			var ds Diagnostics
			if !errors.As(err, &ds) {
				t.Fatalf("err = %v, want Diagnostics", err)
			}
			for _, d := range ds {
				if strings.Contains(d.Message, c.want) {
					if d.File != "plugin.yaml" {
						t.Errorf("file = %q", d.File)
					}
					if c.line != 0 && d.Line != c.line {
						t.Errorf("line = %d, want %d (%s)", d.Line, c.line, d)
					}
					if d.Line == 0 {
						t.Errorf("no line in %s", d)
					}
					return
				}
			}
			t.Fatalf("no diagnostic containing %q in:\n%v", c.want, err)
		})
	}
}

func repl(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("test edit does not apply: " + old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

func TestDuplicates(t *testing.T) {
	src := person + `    Human:
      x-svc-model: {group: people.example.com, version: v1alpha1, kind: Human, plural: persons, singular: human}
      type: object
      properties:
        spec: {type: object}
`
	_, err := Parse("p.yaml", doc(src), Options{})
	if err == nil || !strings.Contains(err.Error(), `plural "persons" of group "people.example.com" is already used by Human`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCoreAllowsReservedGroups(t *testing.T) {
	src := strings.Replace(person, "group: people.example.com, ", "", 1)
	if _, err := Parse("p.yaml", doc(src), Options{Core: true}); err != nil {
		t.Fatal(err)
	}
}

func TestDocumentErrors(t *testing.T) {
	cases := map[string]struct {
		src  string
		want string
		line int
	}{
		"yaml syntax":  {"openapi: 3.0.3\ninfo: [\n", "not valid YAML", 0},
		"openapi 3.1":  {"openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n", "openapi must be 3.0.x", 1},
		"no models":    {header + "    Thing: {type: object}\n", "no schema carries x-svc-model", 5},
		"invalid spec": {header + "    Thing: {type: object, properties: {a: {type: strin}}}\n", "invalid OpenAPI document", 0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.src), Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if c.line != 0 {
				var ds Diagnostics
				errors.As(err, &ds)
				if ds[0].Line != c.line {
					t.Errorf("line = %d, want %d", ds[0].Line, c.line)
				}
			}
		})
	}
}

func TestOperations(t *testing.T) {
	src := strings.Replace(string(doc(person)), "paths: {}\n", `paths:
  /apis/api.people.example.com/v1alpha1/persons/{name}/greeting:
    get: {operationId: greet, parameters: [{name: name, in: path, required: true, schema: {type: string}}], responses: {"200": {description: ok}}}
  /apis/plugin.api.svc.run/v1alpha1/plugins/example/stats:
    get: {operationId: stats, responses: {"200": {description: ok}}}
`, 1)
	d, err := Parse("p.yaml", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Operation{}
	for _, o := range d.Operations {
		got[o.ID] = o
	}
	if o := got["greet"]; o.Group != "api.people.example.com" || o.Resource != "persons/greeting" || o.Method != "GET" {
		t.Errorf("greet = %+v", o)
	}
	if o := got["stats"]; o.Group != "plugin.api.svc.run" || o.Resource != "plugins/stats" {
		t.Errorf("stats = %+v", o)
	}

	for path, want := range map[string]string{
		"/apis/people.example.com/v1alpha1/persons": "path is generated for model Person",
		"/apis/core.svc.run/v1alpha1/things":        `group "core.svc.run" is reserved`,
		"/custom/things":                            "a custom API path must be",
	} {
		src := strings.Replace(string(doc(person)), "paths: {}\n", "paths:\n  "+path+":\n    get: {responses: {\"200\": {description: ok}}}\n", 1)
		if _, err := Parse("p.yaml", []byte(src), Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", path, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(doc(person))
	f.Add([]byte("openapi: 3.0.3\n"))
	f.Add([]byte(header + "    A: {x-svc-model: 3, x-svc-indexes: {a: 1}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse("f.yaml", data, Options{})
		if err == nil {
			if len(d.Models) == 0 {
				t.Fatal("a document without models was accepted")
			}
			return
		}
		var ds Diagnostics
		if !errors.As(err, &ds) || len(ds) == 0 {
			t.Fatalf("error is not a non-empty Diagnostics: %v", err)
		}
	})
}
