package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/model"
)

// pluginDoc is a plugin document with one custom path answering the
// plugin's own Link schema, plus a schema no path uses.
func pluginDoc(group, prop string) []byte {
	return []byte(fmt.Sprintf(`{
  "openapi": "3.0.3",
  "info": {"title": %[1]q, "version": "1"},
  "paths": {
    "/apis/api.%[1]s/v1/links/{name}/resolve": {
      "get": {
        "operationId": "resolve_%[2]s",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Link"}}}}}
      }
    }
  },
  "components": {"schemas": {
    "Link": {"type": "object", "properties": {"spec": {"$ref": "#/components/schemas/LinkSpec"}}},
    "LinkSpec": {"type": "object", "properties": {%[2]q: {"type": "string"}}},
    "Unused": {"type": "object", "properties": {%[2]q: {"type": "integer"}}}
  }}
}`, group, prop))
}

// Two plugins with the same kind in different groups both declare a Link
// schema: the second gets its components qualified, and neither the
// console's paths nor either plugin's are left out.
func TestOpenAPIDocQualifiesClashingPluginComponents(t *testing.T) {
	reg := model.NewRegistry()
	for _, g := range []string{"a.example.com", "b.example.com"} {
		if err := reg.Register(&model.Model{Group: g, Version: "v1", Kind: "Link", Plural: "links", Singular: "link"}); err != nil {
			t.Fatal(err)
		}
	}
	console := []byte(`{"openapi":"3.0.3","info":{"title":"console","version":"1"},
  "paths":{"/apis/api.console.svc.run/v1alpha1/users/-":{"get":{"operationId":"getCurrentUser","responses":{"200":{"description":"ok"}}}}}}`)
	docs := map[string][]byte{
		consoleDoc: console,
		"links-a":  pluginDoc("a.example.com", "url"),
		"links-b":  pluginDoc("b.example.com", "href"),
	}
	var logs bytes.Buffer
	build := openAPIDoc(reg, func() map[string][]byte { return docs }, "svc.run", slog.New(slog.NewTextHandler(&logs, nil)))
	raw, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if logs.Len() > 0 {
		t.Errorf("logged: %s", logs.String())
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("served document does not load: %v", err)
	}
	for _, p := range []string{"/apis/api.console.svc.run/v1alpha1/users/-", "/apis/api.a.example.com/v1/links/{name}/resolve", "/apis/api.b.example.com/v1/links/{name}/resolve"} {
		if doc.Paths.Value(p) == nil {
			t.Errorf("path %s is missing", p)
		}
	}
	schemas := doc.Components.Schemas
	// The first plugin keeps its names, the second's are qualified, and
	// the $refs follow.
	if s := schemas["LinkSpec"]; s == nil || s.Value.Properties["url"] == nil {
		t.Errorf("LinkSpec = %v", s)
	}
	if s := schemas["LinksBLinkSpec"]; s == nil || s.Value.Properties["href"] == nil {
		t.Errorf("LinksBLinkSpec = %v", s)
	}
	ref := doc.Paths.Value("/apis/api.b.example.com/v1/links/{name}/resolve").Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Ref
	if ref != "#/components/schemas/LinksBLink" {
		t.Errorf("b's response refers to %s", ref)
	}
	for name := range schemas {
		if strings.Contains(name, "Unused") {
			t.Errorf("schema %s is served though no path uses it", name)
		}
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Errorf("served document is invalid: %v", err)
	}

	// A plugin whose operation id another has, in any case, is served
	// with the id renamed after it, and a warning names both operations.
	docs["links-c"] = bytes.ReplaceAll(pluginDoc("c.example.com", "src"), []byte("resolve_src"), []byte("resolveURL"))
	// A plugin that clashes even when qualified (a path another serves)
	// is left out alone, with a warning.
	docs["links-d"] = bytes.ReplaceAll(pluginDoc("b.example.com", "alt"), []byte("{name}"), []byte("{id}"))
	raw, err = build()
	if err != nil {
		t.Fatal(err)
	}
	doc, err = openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("served document does not load: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Errorf("served document is invalid: %v", err)
	}
	c := doc.Paths.Value("/apis/api.c.example.com/v1/links/{name}/resolve")
	if c == nil {
		t.Fatalf("the plugin with a clashing operation id is left out: %s", logs.String())
	}
	if c.Get.OperationID != "resolveLinksCURL" {
		t.Errorf("the clashing operation is served as %q, want resolveLinksCURL", c.Get.OperationID)
	}
	for _, want := range []string{`\"resolveURL\"`, "/apis/api.c.example.com/v1/links/{name}/resolve", `/apis/api.a.example.com/v1/links/{name}/resolve (\"resolve_url\")`, `\"resolveLinksCURL\"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the rename warning does not name %s: %s", want, logs.String())
		}
	}
	if doc.Paths.Value("/apis/api.b.example.com/v1/links/{id}/resolve") != nil {
		t.Error("the clashing plugin's path is served")
	}
	if doc.Paths.Value("/apis/api.b.example.com/v1/links/{name}/resolve") == nil {
		t.Error("one clashing plugin hid another's paths")
	}
	if !strings.Contains(logs.String(), "links-d") {
		t.Errorf("no warning names the plugin left out: %s", logs.String())
	}
}

// listDoc is a plugin document whose custom path answers its own List
// schema, with a request body and a response header by reference.
func listDoc(group, prop string) []byte {
	return []byte(fmt.Sprintf(`{
  "openapi": "3.0.3",
  "info": {"title": %[1]q, "version": "1"},
  "paths": {"/apis/api.%[1]s/v1/things/-/search": {"post": {
    "operationId": "search_%[2]s",
    "requestBody": {"$ref": "#/components/requestBodies/Query"},
    "responses": {"200": {"description": "ok",
      "headers": {"X-Total": {"$ref": "#/components/headers/Total"}},
      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/List"}}}}}}}},
  "components": {
    "schemas": {"List": {"type": "object", "properties": {%[2]q: {"type": "string"}}}},
    "requestBodies": {"Query": {"content": {"application/json": {"schema": {"type": "object", "properties": {%[2]q: {"type": "string"}}}}}}},
    "headers": {"Total": {"schema": {"type": "integer"}}}
  }
}`, group, prop))
}

// Qualifying a plugin's components must not land on a name the generic
// document has (plugin "person", component "List", model Person's
// "PersonList"): that plugin is left out alone. Components of every kind
// a path reaches are served, not only schemas, parameters and responses.
func TestOpenAPIDocQualifiedNamesAndAllComponentKinds(t *testing.T) {
	reg := model.NewRegistry()
	if err := reg.Register(&model.Model{Group: "people.example.com", Version: "v1", Kind: "Person", Plural: "persons", Singular: "person"}); err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{"a": listDoc("a.example.com", "x"), "person": listDoc("p.example.com", "y")}
	var logs bytes.Buffer
	raw, err := openAPIDoc(reg, func() map[string][]byte { return docs }, "svc.run", slog.New(slog.NewTextHandler(&logs, nil)))()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("served document does not load: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Errorf("served document is invalid: %v", err)
	}
	if doc.Paths.Value("/apis/api.a.example.com/v1/things/-/search") == nil {
		t.Error("plugin a's path is missing")
	}
	if doc.Paths.Value("/apis/api.p.example.com/v1/things/-/search") != nil {
		t.Error("plugin person's path is served, pointing at the generic PersonList")
	}
	if !strings.Contains(logs.String(), "plugin=person") || !strings.Contains(logs.String(), "PersonList") {
		t.Errorf("no warning names the plugin and the name: %s", logs.String())
	}
	if doc.Components.RequestBodies["Query"] == nil || doc.Components.Headers["Total"] == nil {
		t.Errorf("request bodies %v, headers %v", doc.Components.RequestBodies, doc.Components.Headers)
	}
	if p := doc.Components.Schemas["PersonList"]; p == nil || p.Value.Properties["y"] != nil {
		t.Error("the generic PersonList was replaced")
	}
}

// Two plugins that document one operation identically are merged without
// a warning: the second copy is the same operation, not a clashing id.
func TestOpenAPIDocSameOperationTwice(t *testing.T) {
	shared := []byte(`{"openapi":"3.0.3","info":{"title":"shared","version":"1"},
  "paths":{"/apis/api.shared.example.com/v1/ping":{"get":{"operationId":"getSharedPing","responses":{"200":{"description":"ok"}}}}}}`)
	docs := map[string][]byte{"a": shared, "b": shared}
	var logs bytes.Buffer
	raw, err := openAPIDoc(model.NewRegistry(), func() map[string][]byte { return docs }, "svc.run", slog.New(slog.NewTextHandler(&logs, nil)))()
	if err != nil {
		t.Fatal(err)
	}
	if logs.Len() > 0 {
		t.Errorf("logged: %s", logs.String())
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if item := doc.Paths.Value("/apis/api.shared.example.com/v1/ping"); item == nil || item.Get.OperationID != "getSharedPing" {
		t.Errorf("the shared operation is not served as getSharedPing: %+v", item)
	}
}
