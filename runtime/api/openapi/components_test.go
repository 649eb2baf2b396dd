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

// A discriminator's mapping names schemas too, as references or bare
// names; a reference may point inside a component, and a component name
// may need JSON-pointer escapes.
func TestPruneAndRenameOtherReferences(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`{
  "openapi": "3.0.3",
  "info": {"title": "t", "version": "1"},
  "paths": {"/pets": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
    "201": {"description": "inner", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Owner/properties/name"}}}},
    "202": {"description": "escaped", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/a~1b"}}}}}}}},
  "components": {"schemas": {
    "Pet": {"type": "object", "properties": {"kind": {"type": "string"}}, "discriminator": {"propertyName": "kind", "mapping": {"dog": "#/components/schemas/Dog", "cat": "Cat"}}},
    "Dog": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"type": "object", "properties": {"bark": {"type": "boolean"}}}]},
    "Cat": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"type": "object", "properties": {"purr": {"type": "boolean"}}}]},
    "Owner": {"type": "object", "properties": {"name": {"type": "string"}}},
    "a/b": {"type": "string"},
    "Lone": {"type": "string"}
  }}
}`))
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := openapi.Prune(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Pet", "Dog", "Cat", "Owner", "a/b"} {
		if pruned.Components.Schemas[name] == nil {
			t.Errorf("schema %s was pruned though a path reaches it", name)
		}
	}
	if pruned.Components.Schemas["Lone"] != nil {
		t.Error("schema Lone is kept")
	}
	renamed, err := openapi.Rename(pruned, func(_, name string) string { return "P" + name })
	if err != nil {
		t.Fatal(err)
	}
	mapping := renamed.Components.Schemas["PPet"].Value.Discriminator.Mapping
	if got := mapping["dog"]; got.Ref != "#/components/schemas/PDog" {
		t.Errorf("mapping dog = %v", got)
	}
	if got := mapping["cat"]; got.Ref != "PCat" {
		t.Errorf("mapping cat = %v", got)
	}
	resp := renamed.Paths.Value("/pets").Get.Responses
	if got := resp.Status(201).Value.Content.Get("application/json").Schema.Ref; got != "#/components/schemas/POwner/properties/name" {
		t.Errorf("inner ref = %s", got)
	}
	if got := resp.Status(202).Value.Content.Get("application/json").Schema.Ref; got != "#/components/schemas/Pa~1b" {
		t.Errorf("escaped ref = %s", got)
	}
}
