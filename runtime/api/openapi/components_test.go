package openapi_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/api/openapi"
)

const componentsDoc = `{
  "openapi": "3.0.3",
  "info": {"title": "t", "version": "1"},
  "paths": {"/x/{id}": {"get": {
    "parameters": [{"$ref": "#/components/parameters/Id"}],
    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}
  }}},
  "components": {
    "parameters": {"Id": {"name": "id", "in": "path", "required": true, "schema": {"$ref": "#/components/schemas/Name"}},
                   "Spare": {"name": "spare", "in": "query", "schema": {"type": "string"}}},
    "schemas": {
      "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}, "list": {"type": "array", "items": {"$ref": "#/components/schemas/C"}}}},
      "B": {"type": "object", "properties": {"self": {"$ref": "#/components/schemas/B"}}},
      "C": {"type": "string"},
      "Name": {"type": "string"},
      "Lone": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}}
    },
    "securitySchemes": {"basicAuth": {"type": "http", "scheme": "basic"}}
  }
}`

func loadComponentsDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(componentsDoc))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestPruneKeepsWhatPathsReach(t *testing.T) {
	doc := loadComponentsDoc(t)
	pruned, err := openapi.Prune(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := pruned.Components
	for _, name := range []string{"A", "B", "C", "Name"} {
		if c.Schemas[name] == nil {
			t.Errorf("schema %s was pruned though a path reaches it", name)
		}
	}
	if c.Schemas["Lone"] != nil {
		t.Error("schema Lone is kept though only it refers to A")
	}
	if c.Parameters["Id"] == nil || c.Parameters["Spare"] != nil {
		t.Errorf("parameters = %v", c.Parameters)
	}
	if c.SecuritySchemes["basicAuth"] == nil {
		t.Error("security schemes are not reached by $ref and must stay")
	}
	if doc.Components.Schemas["Lone"] == nil {
		t.Error("Prune modified its input")
	}
}

func TestRenameFollowsRefs(t *testing.T) {
	doc := loadComponentsDoc(t)
	renamed, err := openapi.Rename(doc, func(section, name string) string {
		if name == "C" {
			return name
		}
		return "P" + name
	})
	if err != nil {
		t.Fatal(err)
	}
	s := renamed.Components.Schemas
	if s["A"] != nil || s["PA"] == nil || s["C"] == nil || s["PC"] != nil {
		t.Fatalf("schemas after rename: %v", renamed.Components.Schemas)
	}
	if got := s["PB"].Value.Properties["self"].Ref; got != "#/components/schemas/PB" {
		t.Errorf("B's self ref = %s", got)
	}
	if got := s["PA"].Value.Properties["list"].Value.Items.Ref; got != "#/components/schemas/C" {
		t.Errorf("A's items ref = %s", got)
	}
	op := renamed.Paths.Value("/x/{id}").Get
	if got := op.Parameters[0].Ref; got != "#/components/parameters/PId" {
		t.Errorf("parameter ref = %s", got)
	}
	if renamed.Components.SecuritySchemes["basicAuth"] == nil {
		t.Error("security schemes must keep their names")
	}
	if err := renamed.Validate(t.Context()); err != nil {
		t.Errorf("renamed document is invalid: %v", err)
	}

	if _, err := openapi.Rename(doc, func(section, name string) string { return "Same" }); err == nil {
		t.Error("renaming two components to one name was accepted")
	}
}
