package example_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/openapi"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

const base = example.PersonBasePath

type env struct {
	t   *testing.T
	url string
	st  *store.Store
	m   *model.Model
}

// newEnv serves the generated Person model through the generated routes.
func newEnv(t *testing.T) *env {
	t.Helper()
	m := example.PersonModel()
	st := storetest.New(t, m)
	reg := model.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	var a *api.Server
	a = api.New(api.Options{Store: st, Registry: reg, OpenAPI: func() ([]byte, error) {
		doc, err := openapi.Build(reg.Models(), openapi.Options{})
		if err != nil {
			return nil, err
		}
		return openapi.JSON(doc)
	}})
	a.UseRoutes(m, example.RegisterPersonRoutes)
	a.Rebuild()
	srv := httptest.NewServer(a)
	t.Cleanup(func() { a.Close(); srv.Close() })
	return &env{t: t, url: srv.URL, st: st, m: m}
}

func (e *env) do(method, path, contentType, body string) (int, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		e.t.Fatalf("%s %s: body %q is not a JSON object", method, path, b)
	}
	return res.StatusCode, v
}

func fields(p map[string]any) []string {
	var out []string
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		out = append(out, e.(map[string]any)["field"].(string))
	}
	slices.Sort(out)
	return out
}

const ann = `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann"},
	"spec":{"name":"Ann","age":30,"gender":"FEMALE","email":"ann@example.com","tags":["a","b"]}}`

func TestGeneratedModelOverHTTP(t *testing.T) {
	e := newEnv(t)
	if st, body := e.do("POST", base, "application/json", ann); st != http.StatusCreated {
		t.Fatalf("create = %d %v", st, body)
	}
	bad := []struct {
		name   string
		body   string
		fields []string
	}{
		{"unknown field", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"b"},"spec":{"name":"B","agee":3}}`, []string{"spec.agee"}},
		{"key case differs", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"b"},"spec":{"Name":"B"}}`, []string{"spec.Name", "spec.name"}},
		{"null scalar", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"b"},"spec":{"name":"B","age":null}}`, []string{"spec.age"}},
		{"constraints", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"b"},"spec":{"name":"B","age":151,"gender":"X","email":"nope","tags":["` + strings.Repeat("x", 64) + `"]}}`,
			[]string{"spec.age", "spec.email", "spec.gender", "spec.tags[0]"}},
		{"missing spec", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"b"}}`, []string{"spec"}},
		{"wrong types", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"b","labels":{"a":1}},"spec":{"name":7,"age":"x"}}`,
			[]string{"metadata.labels[a]", "spec.age", "spec.name"}},
	}
	for _, c := range bad {
		st, body := e.do("POST", base, "application/json", c.body)
		if st != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400: %v", c.name, st, body)
			continue
		}
		for _, f := range c.fields {
			if !slices.Contains(fields(body), f) {
				t.Errorf("%s: errors %v lack %q", c.name, fields(body), f)
			}
		}
	}
	// Nothing of the bad requests was stored.
	if st, body := e.do("GET", base, "", ""); st != 200 || body["total"].(float64) != 1 {
		t.Fatalf("list = %d %v", st, body)
	}

	// A patch that breaks the schema is a 400 and changes nothing.
	if st, body := e.do("PATCH", base+"/ann", "application/merge-patch+json", `{"spec":{"age":-1}}`); st != 400 || !slices.Contains(fields(body), "spec.age") {
		t.Fatalf("bad patch = %d %v", st, body)
	}
	if st, body := e.do("PATCH", base+"/ann", "application/merge-patch+json", `{"spec":{"age":31}}`); st != 200 || body["spec"].(map[string]any)["age"].(float64) != 31 {
		t.Fatalf("patch = %d %v", st, body)
	}

	// Unique index on spec.email.
	dup := strings.Replace(strings.Replace(ann, `"ann"`, `"ann2"`, 1), `"Ann"`, `"Ann2"`, 1)
	if st, body := e.do("POST", base, "application/json", dup); st != http.StatusConflict {
		t.Fatalf("duplicate email = %d %v", st, body)
	}

	// Generated index functions serve sort and fieldSelector.
	bob := `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"bob"},"spec":{"name":"Bob","age":9,"tags":["b"],"friend":"ann"}}`
	if st, body := e.do("POST", base, "application/json", bob); st != http.StatusCreated {
		t.Fatalf("create bob = %d %v", st, body)
	}
	for q, want := range map[string]string{
		"?sort=spec.age,asc":              "bob,ann",
		"?sort=spec.age,desc":             "ann,bob",
		"?fieldSelector=spec.tags=b":      "bob,ann",
		"?fieldSelector=spec.friend=ann":  "bob",
		"?fieldSelector=spec.age=31":      "ann",
		"?fieldSelector=spec.name=Bob":    "bob",
		"?fieldSelector=spec.tags=a":      "ann",
		"?sort=spec.name&sort=spec.age":   "ann,bob",
		"?fieldSelector=spec.email!=none": "ann",
	} {
		st, body := e.do("GET", base+q, "", "")
		if st != 200 {
			t.Errorf("%s: %d %v", q, st, body)
			continue
		}
		var names []string
		for _, it := range body["items"].([]any) {
			names = append(names, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		if got := strings.Join(names, ","); got != want {
			t.Errorf("%s: got %s, want %s", q, got, want)
		}
	}

	// The served document carries the generated schema.
	st, doc := e.do("GET", "/openapi.json", "", "")
	if st != 200 {
		t.Fatalf("openapi = %d", st)
	}
	raw, _ := json.Marshal(doc)
	for _, want := range []string{`"maximum":150`, `"maxLength":100`, `"enum":["MALE","FEMALE"]`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("served OpenAPI lacks %s", want)
		}
	}
}

func TestTypedClient(t *testing.T) {
	ctx := context.Background()
	m := example.PersonModel()
	st := storetest.New(t, m)
	c := example.NewPersonClient(st, m)
	p := example.NewPerson("ann")
	p.Spec.Name = "Ann"
	age := int64(200)
	p.Spec.Age = &age
	if _, err := c.Create(ctx, p); err == nil {
		t.Fatal("the typed validator let age 200 through")
	}
	age = 20
	if _, err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	res, err := c.List(ctx, client.ListOptions{FieldSelector: []string{example.PersonIndexSpecAge + "=20"}})
	if err != nil || res.Total != 1 || res.Items[0].Spec.Name != "Ann" {
		t.Fatalf("list = %+v, %v", res, err)
	}
}
