package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/schemas"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

// Two models: a core one (empty group) and one in a plugin group with an
// index of its own.
func testModels() []*model.Model {
	return []*model.Model{
		{
			Group: "people.example.com", Version: "v1", Kind: "Person", Plural: "people", Singular: "person",
			Indexes: []model.Index{{Name: "spec.age", Type: model.Int, Keys: func(object.Object, []model.Key) []model.Key { return nil }}},
		},
		{Version: "v1alpha1", Kind: "Plugin", Plural: "plugins", Singular: "plugin"},
	}
}

func build(t *testing.T, models []*model.Model, opts Options) *openapi3.T {
	t.Helper()
	doc, err := Build(models, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return doc
}

func op(t *testing.T, doc *openapi3.T, method, path string) *openapi3.Operation {
	t.Helper()
	item := doc.Paths.Value(path)
	if item == nil {
		t.Fatalf("no path %s; have %v", path, doc.Paths.Keys())
	}
	o := item.GetOperation(method)
	if o == nil {
		t.Fatalf("no %s %s", method, path)
	}
	return o
}

func param(o *openapi3.Operation, name string) *openapi3.Parameter {
	for _, p := range o.Parameters {
		if p.Value != nil && p.Value.Name == name {
			return p.Value
		}
	}
	return nil
}

func TestBuildPathsAndOperations(t *testing.T) {
	doc := build(t, testModels(), Options{Title: "test", Version: "1.2.3"})
	if doc.Info.Title != "test" || doc.Info.Version != "1.2.3" {
		t.Errorf("info = %+v", doc.Info)
	}

	want := map[string][]string{
		"/healthz":                                         {"GET"},
		"/readyz":                                          {"GET"},
		"/openapi.json":                                    {"GET"},
		"/api/v1alpha1/plugins":                            {"DELETE", "GET", "POST"},
		"/api/v1alpha1/plugins/{name}":                     {"DELETE", "GET", "PATCH", "PUT"},
		"/api/v1alpha1/plugins/{name}/status":              {"PUT"},
		"/apis/people.example.com/v1/people":               {"DELETE", "GET", "POST"},
		"/apis/people.example.com/v1/people/{name}":        {"DELETE", "GET", "PATCH", "PUT"},
		"/apis/people.example.com/v1/people/{name}/status": {"PUT"},
	}
	for path, methods := range want {
		item := doc.Paths.Value(path)
		if item == nil {
			t.Errorf("missing path %s", path)
			continue
		}
		got := sortedKeys(item.Operations())
		if !slices.Equal(got, methods) {
			t.Errorf("%s: methods %v, want %v", path, got, methods)
		}
	}
	if n := doc.Paths.Len(); n != len(want) {
		t.Errorf("%d paths, want %d: %v", n, len(want), doc.Paths.Keys())
	}

	ids := map[string]string{
		"GET /apis/people.example.com/v1/people":               "listPerson",
		"POST /apis/people.example.com/v1/people":              "createPerson",
		"DELETE /apis/people.example.com/v1/people":            "deleteCollectionPerson",
		"GET /apis/people.example.com/v1/people/{name}":        "getPerson",
		"PUT /apis/people.example.com/v1/people/{name}":        "updatePerson",
		"PATCH /apis/people.example.com/v1/people/{name}":      "patchPerson",
		"DELETE /apis/people.example.com/v1/people/{name}":     "deletePerson",
		"PUT /apis/people.example.com/v1/people/{name}/status": "updatePersonStatus",
		"GET /api/v1alpha1/plugins":                            "listPlugin",
	}
	for k, id := range ids {
		method, path, _ := strings.Cut(k, " ")
		o := op(t, doc, method, path)
		if o.OperationID != id {
			t.Errorf("%s: operationId %q, want %q", k, o.OperationID, id)
		}
		tag := "Person"
		if strings.Contains(path, "plugins") {
			tag = "Plugin"
		}
		if !slices.Equal(o.Tags, []string{tag}) {
			t.Errorf("%s: tags %v, want [%s]", k, o.Tags, tag)
		}
	}
}

func TestListParameters(t *testing.T) {
	doc := build(t, testModels(), Options{})
	list := op(t, doc, "GET", "/apis/people.example.com/v1/people")
	for _, name := range []string{"page", "size", "sort", "labelSelector", "fieldSelector", "watch"} {
		if param(list, name) == nil {
			t.Errorf("list has no %s parameter", name)
		}
	}
	page := param(list, "page")
	if !page.Schema.Value.Type.Is("integer") || page.Schema.Value.Min == nil || *page.Schema.Value.Min != 1 {
		t.Errorf("page schema = %+v", page.Schema.Value)
	}
	size := param(list, "size")
	if !size.Schema.Value.Type.Is("integer") || size.Schema.Value.Min == nil || *size.Schema.Value.Min != 0 {
		t.Errorf("size schema = %+v", size.Schema.Value)
	}
	sort := param(list, "sort")
	if !sort.Schema.Value.Type.Is("array") || !sort.Schema.Value.Items.Value.Type.Is("string") || sort.Explode == nil || !*sort.Explode {
		t.Errorf("sort is not an exploded array of strings: %+v", sort)
	}
	for _, ix := range []string{"metadata.name", "metadata.creationTimestamp", "metadata.deletionTimestamp", "spec.age"} {
		if !strings.Contains(sort.Description, "`"+ix+"`") {
			t.Errorf("sort description does not name %s: %s", ix, sort.Description)
		}
	}
	if strings.Contains(sort.Description, "`metadata.labels`") {
		t.Errorf("sort description names the labels index: %s", sort.Description)
	}
	for _, name := range []string{"labelSelector", "fieldSelector"} {
		p := param(list, name)
		if !p.Schema.Value.Type.Is("array") || p.Explode == nil || !*p.Explode {
			t.Errorf("%s is not an exploded array: %+v", name, p)
		}
	}
	if w := param(list, "watch"); !w.Schema.Value.Type.Is("boolean") {
		t.Errorf("watch is not a boolean: %+v", w.Schema.Value)
	}

	dc := op(t, doc, "DELETE", "/apis/people.example.com/v1/people")
	if param(dc, "labelSelector") == nil || param(dc, "fieldSelector") == nil {
		t.Errorf("deletecollection lacks selector parameters")
	}
	if param(dc, "page") != nil {
		t.Errorf("deletecollection has a page parameter")
	}
}

func TestResponses(t *testing.T) {
	doc := build(t, testModels(), Options{})
	base := "/apis/people.example.com/v1/people"

	// Success responses.
	listOK := op(t, doc, "GET", base).Responses.Status(200)
	if ref := listOK.Value.Content.Get("application/json").Schema.Ref; ref != "#/components/schemas/PersonList" {
		t.Errorf("list 200 schema = %q", ref)
	}
	created := op(t, doc, "POST", base).Responses.Status(201)
	if created == nil || created.Value.Headers["Location"] == nil {
		t.Fatalf("create has no 201 with Location: %+v", created)
	}
	if ref := created.Value.Content.Get("application/json").Schema.Ref; ref != "#/components/schemas/Person" {
		t.Errorf("create 201 schema = %q", ref)
	}
	if ref := op(t, doc, "POST", base).RequestBody.Value.Content.Get("application/json").Schema.Ref; ref != "#/components/schemas/Person" {
		t.Errorf("create body schema = %q", ref)
	}
	if ref := op(t, doc, "DELETE", base).Responses.Status(200).Value.Content.Get("application/json").Schema.Ref; ref != "#/components/schemas/PersonList" {
		t.Errorf("deletecollection 200 schema = %q", ref)
	}
	for _, m := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		if r := op(t, doc, m, base+"/{name}").Responses.Status(200); r == nil || r.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/Person" {
			t.Errorf("%s object: no 200 with the object", m)
		}
	}
	if r := op(t, doc, "PUT", base+"/{name}/status").Responses.Status(200); r == nil {
		t.Errorf("status: no 200")
	}

	// Patch media types.
	pb := op(t, doc, "PATCH", base+"/{name}").RequestBody.Value.Content
	if jp := pb["application/json-patch+json"]; jp == nil || jp.Schema.Ref != "#/components/schemas/JSONPatch" {
		t.Errorf("patch: no json-patch body: %+v", jp)
	}
	if mp := pb["application/merge-patch+json"]; mp == nil || !mp.Schema.Value.Type.Is("object") {
		t.Errorf("patch: no merge-patch body: %+v", mp)
	}
	if len(pb) != 2 {
		t.Errorf("patch accepts %v", sortedKeys(pb))
	}
	patchOp := doc.Components.Schemas["JSONPatch"].Value.Items.Value
	for _, f := range []string{"op", "path", "value", "from"} {
		if patchOp.Properties[f] == nil {
			t.Errorf("JSON Patch operation has no %s", f)
		}
	}

	// Problem responses.
	wantProblems := map[string][]int{
		"GET " + base:                    {400, 401, 403, 503},
		"POST " + base:                   {400, 401, 403, 409, 413, 503},
		"PATCH " + base + "/{name}":      {400, 401, 403, 404, 409, 413, 415, 503},
		"DELETE " + base + "/{name}":     {401, 403, 404, 503},
		"PUT " + base + "/{name}/status": {400, 401, 403, 404, 409, 413, 503},
		"GET /readyz":                    {503},
	}
	for k, statuses := range wantProblems {
		method, path, _ := strings.Cut(k, " ")
		o := op(t, doc, method, path)
		for _, s := range statuses {
			r := o.Responses.Status(s)
			if r == nil {
				t.Errorf("%s: no %d response", k, s)
				continue
			}
			mt := r.Value.Content.Get("application/problem+json")
			if mt == nil || mt.Schema.Ref != "#/components/schemas/Problem" {
				t.Errorf("%s %d: not a problem response: %+v", k, s, r.Value.Content)
			}
		}
		if d := o.Responses.Default(); d == nil || d.Value.Content.Get("application/problem+json") == nil {
			t.Errorf("%s: no default problem response", k)
		}
	}
	if h := op(t, doc, "GET", base).Responses.Status(401).Value.Headers["WWW-Authenticate"]; h == nil {
		t.Errorf("401 has no WWW-Authenticate header")
	}
	if h := op(t, doc, "GET", "/readyz").Responses.Status(503).Value.Headers["Retry-After"]; h == nil {
		t.Errorf("503 has no Retry-After header")
	}
}

func TestComponents(t *testing.T) {
	doc := build(t, testModels(), Options{})
	s := doc.Components.Schemas

	problem := s["Problem"].Value
	for _, f := range []string{"type", "title", "status", "detail", "instance", "requestId", "errors"} {
		if problem.Properties[f] == nil {
			t.Errorf("Problem has no %s", f)
		}
	}
	if !problem.Properties["status"].Value.Type.Is("integer") {
		t.Errorf("Problem.status is not an integer")
	}
	fe := problem.Properties["errors"].Value.Items.Value
	if fe.Properties["field"] == nil || fe.Properties["message"] == nil {
		t.Errorf("Problem.errors items = %+v", fe)
	}

	meta := s["ObjectMeta"].Value
	if v := meta.Properties["version"].Value; !v.Type.Is("integer") || v.Format != "int64" {
		t.Errorf("ObjectMeta.version = %+v", v)
	}
	for _, f := range []string{"creationTimestamp", "deletionTimestamp"} {
		if v := meta.Properties[f].Value; v.Format != "date-time" || !v.ReadOnly {
			t.Errorf("ObjectMeta.%s = %+v", f, v)
		}
	}
	if v := meta.Properties["finalizers"].Value; !v.Type.Is("array") || !v.Items.Value.Type.Is("string") {
		t.Errorf("ObjectMeta.finalizers = %+v", v)
	}
	// One description of metadata: the one the generator gives every model.
	base, err := openapi3.NewLoader().LoadFromData(schemas.Base)
	if err != nil {
		t.Fatal(err)
	}
	if !sameSchema(meta, base.Components.Schemas["ObjectMeta"].Value) {
		t.Errorf("ObjectMeta differs from schemas/base.yaml's")
	}
	for _, f := range []string{"labels", "annotations"} {
		if v := meta.Properties[f].Value; !v.Type.Is("object") || v.AdditionalProperties.Schema == nil ||
			!v.AdditionalProperties.Schema.Value.Type.Is("string") {
			t.Errorf("ObjectMeta.%s is not a map of strings", f)
		}
	}

	person := s["Person"].Value
	if got := person.Properties["apiVersion"].Value.Enum; !slices.Equal(got, []any{"people.example.com/v1"}) {
		t.Errorf("Person.apiVersion enum = %v", got)
	}
	if got := s["Plugin"].Value.Properties["apiVersion"].Value.Enum; !slices.Equal(got, []any{"v1alpha1"}) {
		t.Errorf("Plugin.apiVersion enum = %v", got)
	}
	if got := person.Properties["kind"].Value.Enum; !slices.Equal(got, []any{"Person"}) {
		t.Errorf("Person.kind enum = %v", got)
	}
	if ref := person.Properties["metadata"].Ref; ref != "#/components/schemas/ObjectMeta" {
		t.Errorf("Person.metadata = %q", ref)
	}

	list := s["PersonList"].Value
	wantFields := []string{"page", "size", "total", "items", "first", "last", "hasNext", "hasPrevious", "totalPages"}
	if got := sortedKeys(list.Properties); !slices.Equal(got, sorted(wantFields)) {
		t.Errorf("PersonList fields = %v", got)
	}
	for _, f := range []string{"total", "totalPages"} {
		if list.Properties[f].Value.Format != "int64" {
			t.Errorf("PersonList.%s is not int64", f)
		}
	}
	if ref := list.Properties["items"].Value.Items.Ref; ref != "#/components/schemas/Person" {
		t.Errorf("PersonList.items = %q", ref)
	}

	ss := doc.Components.SecuritySchemes
	if b := ss["basicAuth"]; b == nil || b.Value.Type != "http" || b.Value.Scheme != "basic" {
		t.Errorf("basicAuth = %+v", b)
	}
	if b := ss["bearerAuth"]; b == nil || b.Value.Type != "http" || b.Value.Scheme != "bearer" {
		t.Errorf("bearerAuth = %+v", b)
	}
	var schemes []string
	for _, req := range doc.Security {
		schemes = append(schemes, sortedKeys(req)...)
	}
	if !slices.Equal(schemes, []string{"basicAuth", "bearerAuth"}) {
		t.Errorf("document security = %v", doc.Security)
	}
	if sec := op(t, doc, "GET", "/healthz").Security; sec == nil || len(*sec) != 0 {
		t.Errorf("/healthz is not public: %v", sec)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestSuppliedSchema(t *testing.T) {
	person := openapi3.NewObjectSchema()
	person.Properties["spec"] = openapi3.NewObjectSchema().WithProperty("age", openapi3.NewIntegerSchema().WithMax(150)).NewRef()
	person.Description = "supplied"
	doc := build(t, testModels(), Options{Schemas: map[string]*openapi3.SchemaRef{
		"Person":          person.NewRef(),
		"Nobody":          openapi3.NewObjectSchema().NewRef(), // names no model: ignored
		"v1alpha1/Plugin": {Value: &openapi3.Schema{Description: "by gvk"}},
		"Plugin":          {Value: &openapi3.Schema{Description: "by kind"}},
	}})
	if d := doc.Components.Schemas["Person"].Value.Description; d != "supplied" {
		t.Errorf("Person description = %q", d)
	}
	if d := doc.Components.Schemas["Plugin"].Value.Description; d != "by gvk" {
		t.Errorf("Plugin description = %q; the GVK key should win", d)
	}
	if _, ok := doc.Components.Schemas["Nobody"]; ok {
		t.Errorf("a schema for no model was added")
	}

	if _, err := Build(testModels(), Options{Schemas: map[string]*openapi3.SchemaRef{"Person": {}}}); err == nil {
		t.Errorf("an empty supplied schema was accepted")
	}
}

func TestKindClashAcrossGroups(t *testing.T) {
	models := clashModels()
	doc := build(t, models, Options{})
	ids := map[string]string{
		"/apis/people.example.com/v1/people":     "listPersonPeopleExampleCom",
		"/apis/crm.example.com/v1/people":        "listPersonCrmExampleComV1",
		"/apis/crm.example.com/v2/people":        "listPersonCrmExampleComV2",
		"/apis/lists.example.com/v1/personlists": "listPersonList",
		"/apis/odd.example.com/v1/problems":      "listProblemOddExampleCom",
		"/api/v1alpha1/plugins":                  "listPlugin",
	}
	for path, id := range ids {
		if got := op(t, doc, "GET", path).OperationID; got != id {
			t.Errorf("GET %s: operationId %q, want %q", path, got, id)
		}
	}
	if got := op(t, doc, "GET", "/apis/crm.example.com/v2/people").Tags; !slices.Equal(got, []string{"Person (crm.example.com/v2)"}) {
		t.Errorf("tags = %v", got)
	}
	if _, ok := doc.Components.Schemas["PersonCrmExampleComV2List"]; !ok {
		t.Errorf("no list schema for crm v2: %v", sortedKeys(doc.Components.Schemas))
	}
	if doc.Components.Schemas["Problem"].Value.Properties["errors"] == nil {
		t.Errorf("the Problem component was replaced by a model")
	}

	// The names depend on the set of models, not on their order.
	rev := slices.Clone(models)
	slices.Reverse(rev)
	a, _ := JSON(doc)
	b, _ := JSON(build(t, rev, Options{}))
	if !bytes.Equal(a, b) {
		t.Errorf("the document depends on the order of the models")
	}
}

func TestBuildRejectsDuplicates(t *testing.T) {
	m := testModels()
	if _, err := Build(append(m, m[0]), Options{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a model given twice: err = %v", err)
	}
	other := &model.Model{Group: "people.example.com", Version: "v1", Kind: "Human", Plural: "people"}
	if _, err := Build(append(m, other), Options{}); err == nil || !strings.Contains(err.Error(), "/apis/people.example.com/v1/people") {
		t.Errorf("two models at one path: err = %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	var prev []byte
	for i := range 5 {
		ms := testModels()
		if i%2 == 1 {
			slices.Reverse(ms)
		}
		out, err := JSON(build(t, ms, Options{Extra: []*openapi3.T{extraDoc()}}))
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && !bytes.Equal(prev, out) {
			t.Fatalf("build %d differs from the one before", i)
		}
		prev = out
	}
	if bytes.Contains(prev, []byte(`\u003c`)) {
		t.Errorf("JSON escapes HTML characters")
	}
	// JSON must give back the same document.
	loader := openapi3.NewLoader()
	back, err := loader.LoadFromData(prev)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	if err := back.Validate(context.Background()); err != nil {
		t.Fatalf("reloaded document: %v", err)
	}
	again, err := JSON(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(prev, again) {
		t.Errorf("JSON of the reloaded document differs")
	}
}

// extraDoc is what a plugin's custom API might contribute: a path of its
// own, a POST on a generated path (docs/api.md: POST base/{name} is a
// custom API when declared), a schema, and a copy of a shared component.
func extraDoc() *openapi3.T {
	greeting := openapi3.NewObjectSchema().WithProperty("message", openapi3.NewStringSchema())
	c := openapi3.NewComponents()
	c.Schemas = openapi3.Schemas{"Greeting": greeting.NewRef()}
	c.SecuritySchemes = openapi3.SecuritySchemes{"basicAuth": {Value: &openapi3.SecurityScheme{
		Type: "http", Scheme: "basic", Description: "A user's name and password.",
	}}}
	ok := func() *openapi3.Responses {
		return openapi3.NewResponses(openapi3.WithStatus(200, &openapi3.ResponseRef{Value: openapi3.NewResponse().
			WithDescription("ok").WithJSONSchemaRef(&openapi3.SchemaRef{Ref: "#/components/schemas/Greeting", Value: greeting})}))
	}
	paths := openapi3.NewPaths()
	paths.Set("/apis/api.greet.example.com/v1/hello", &openapi3.PathItem{Get: &openapi3.Operation{OperationID: "hello", Responses: ok()}})
	paths.Set("/apis/people.example.com/v1/people/{name}", &openapi3.PathItem{
		Parameters: openapi3.Parameters{{Value: openapi3.NewPathParameter("name").WithSchema(openapi3.NewStringSchema())}},
		Post:       &openapi3.Operation{OperationID: "greetPerson", Responses: ok()},
	})
	return &openapi3.T{
		OpenAPI: "3.0.3", Info: &openapi3.Info{Title: "greet", Version: "1"}, Paths: paths, Components: &c,
		Tags: openapi3.Tags{{Name: "Greeting"}},
	}
}

func TestMergeExtra(t *testing.T) {
	extra := extraDoc()
	before, _ := json.Marshal(extra)
	doc := build(t, testModels(), Options{Extra: []*openapi3.T{extra, nil, extraDoc()}}) // the repeat is identical: accepted
	if o := op(t, doc, "GET", "/apis/api.greet.example.com/v1/hello"); o.OperationID != "hello" {
		t.Errorf("hello operationId = %q", o.OperationID)
	}
	item := doc.Paths.Value("/apis/people.example.com/v1/people/{name}")
	if item.Post == nil || item.Post.OperationID != "greetPerson" || item.Get == nil || item.Get.OperationID != "getPerson" {
		t.Errorf("the object path lost or missed an operation: %+v", item.Operations())
	}
	// The two sides declare {name} differently, so each operation carries
	// its own side's declaration.
	if len(item.Parameters) != 0 {
		t.Errorf("path-level parameters were kept: %v", item.Parameters)
	}
	if p := item.Get.Parameters.GetByInAndName("path", "name"); p == nil || p.Description == "" {
		t.Errorf("GET lost its name parameter: %+v", p)
	}
	if p := item.Post.Parameters.GetByInAndName("path", "name"); p == nil || p.Description != "" {
		t.Errorf("POST did not get its own name parameter: %+v", p)
	}
	if doc.Components.Schemas["Greeting"] == nil {
		t.Errorf("no Greeting schema")
	}
	if doc.Tags.Get("Greeting") == nil {
		t.Errorf("no Greeting tag")
	}
	after, _ := json.Marshal(extra)
	if !bytes.Equal(before, after) {
		t.Errorf("Build modified an Extra document")
	}
}

func TestMergeClashes(t *testing.T) {
	cases := []struct {
		name   string
		change func(*openapi3.T)
		want   string
	}{
		{"component", func(d *openapi3.T) {
			d.Components.Schemas["Problem"] = openapi3.NewStringSchema().NewRef()
		}, "schemas/Problem"},
		{"security scheme", func(d *openapi3.T) {
			d.Components.SecuritySchemes["basicAuth"].Value.Description = "other"
		}, "securitySchemes/basicAuth"},
		{"operation", func(d *openapi3.T) {
			d.Paths.Value("/apis/people.example.com/v1/people/{name}").Get = &openapi3.Operation{
				OperationID: "mine", Responses: openapi3.NewResponses(openapi3.WithName("default", openapi3.NewResponse().WithDescription("x"))),
			}
		}, "GET /apis/people.example.com/v1/people/{name}"},
		{"path template", func(d *openapi3.T) {
			item := d.Paths.Value("/apis/people.example.com/v1/people/{name}")
			d.Paths.Delete("/apis/people.example.com/v1/people/{name}")
			item.Parameters[0].Value.Name = "id"
			d.Paths.Set("/apis/people.example.com/v1/people/{id}", item)
		}, "/apis/people.example.com/v1/people/{id}"},
		{"operation id", func(d *openapi3.T) {
			d.Paths.Value("/apis/api.greet.example.com/v1/hello").Get.OperationID = "listPerson"
		}, `"listPerson"`},
		// Generators fold case and drop punctuation: both would be ListPerson.
		{"operation id in another case", func(d *openapi3.T) {
			d.Paths.Value("/apis/api.greet.example.com/v1/hello").Get.OperationID = "List_person"
		}, `GET /apis/api.greet.example.com/v1/hello ("List_person") and GET /apis/people.example.com/v1/people ("listPerson")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			extra := extraDoc()
			tc.change(extra)
			_, err := Build(testModels(), Options{Extra: []*openapi3.T{extra}})
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %s", err, tc.want)
			}
		})
	}

	// Two extra documents clash with each other.
	a, b := extraDoc(), extraDoc()
	b.Components.Schemas["Greeting"] = openapi3.NewStringSchema().NewRef()
	_, err := Build(testModels(), Options{Extra: []*openapi3.T{a, b}})
	if err == nil || !strings.Contains(err.Error(), "extra document 1") || !strings.Contains(err.Error(), "Greeting") {
		t.Errorf("err = %v", err)
	}
}

// Kinds that differ only in case get qualified names, as Kinds that are
// equal do: oapi-codegen would name listURL and listUrl both ListURL.
func TestOperationIDsFoldCase(t *testing.T) {
	doc := build(t, []*model.Model{
		{Group: "a.example.com", Version: "v1", Kind: "URL", Plural: "urls"},
		{Group: "b.example.com", Version: "v1", Kind: "Url", Plural: "urlz"},
	}, Options{})
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := OperationIDKey(op.OperationID)
			if prev, ok := ids[key]; ok {
				t.Errorf("%s %s has id %q, the same as %s", method, path, op.OperationID, prev)
			}
			ids[key] = op.OperationID
		}
	}
	if doc.Paths.Value("/apis/a.example.com/v1/urls").Get.OperationID != "listURLAExampleCom" {
		t.Errorf("list URL: %q", doc.Paths.Value("/apis/a.example.com/v1/urls").Get.OperationID)
	}
}

// clashModels adds models whose Kinds clash with Person, with its list
// schema and with a shared component.
func clashModels() []*model.Model {
	return append(testModels(),
		&model.Model{Group: "crm.example.com", Version: "v1", Kind: "Person", Plural: "people"},
		&model.Model{Group: "crm.example.com", Version: "v2", Kind: "Person", Plural: "people"},
		&model.Model{Group: "lists.example.com", Version: "v1", Kind: "PersonList", Plural: "personlists"},
		&model.Model{Group: "odd.example.com", Version: "v1", Kind: "Problem", Plural: "problems"},
	)
}

func TestGolden(t *testing.T) {
	cases := []struct {
		file   string
		models []*model.Model
		opts   Options
	}{
		{"two-models.golden.json", testModels(), Options{Title: "svc API", Version: "test"}},
		{"clashes-and-extra.golden.json", clashModels(), Options{Title: "svc API", Version: "test", Extra: []*openapi3.T{extraDoc()}}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			out, err := JSON(build(t, tc.models, tc.opts))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("the document differs from %s; if the change is intended, run go test -run TestGolden -update and review the diff", path)
			}
		})
	}
}

// TestModelMetadataIsTheSharedComponent checks that a model schema whose
// metadata is base.yaml's (as the generator writes every one) refers to
// ObjectMeta instead of repeating it, and that other metadata stays.
func TestModelMetadataIsTheSharedComponent(t *testing.T) {
	base, err := openapi3.NewLoader().LoadFromData(schemas.Base)
	if err != nil {
		t.Fatal(err)
	}
	baseMeta, err := json.Marshal(base.Components.Schemas["ObjectMeta"].Value)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, metadata, wantRef string
	}{
		{name: "base", metadata: string(baseMeta), wantRef: "#/components/schemas/ObjectMeta"},
		{name: "other", metadata: `{"type":"object","properties":{"name":{"type":"string"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &model.Model{Group: "people.example.com", Version: "v1", Kind: "Person", Plural: "people", Singular: "person",
				Schema: []byte(`{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":` + tc.metadata + `}}`)}
			doc := build(t, []*model.Model{m}, Options{})
			md := doc.Components.Schemas["Person"].Value.Properties["metadata"]
			if md.Ref != tc.wantRef {
				t.Errorf("Person.metadata.$ref = %q, want %q", md.Ref, tc.wantRef)
			}
		})
	}
}
