package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

const base = "/apis/people.example.com/v1alpha1/persons"

type env struct {
	t   *testing.T
	srv *httptest.Server
	api *api.Server
	st  *store.Store
	m   *model.Model
}

func newEnv(t *testing.T) *env { return newEnvWith(t, api.Options{}) }

// newEnvWith is newEnv with opts (its Store and Registry are filled in).
func newEnvWith(t *testing.T, opts api.Options) *env { return newEnvListening(t, opts, nil) }

// newEnvListening is newEnvWith serving on wrap(listener) when wrap is set.
func newEnvListening(t *testing.T, opts api.Options, wrap func(net.Listener) net.Listener) *env {
	return newEnvOf(t, storetest.PersonModel(), opts, wrap)
}

// newGeneratedEnv serves the example plugin's generated Person model, which
// has a schema validator (ValidateJSON), at the same base path.
func newGeneratedEnv(t *testing.T) *env {
	return newEnvOf(t, example.PersonModel(), api.Options{}, nil)
}

func newEnvOf(t *testing.T, m *model.Model, opts api.Options, wrap func(net.Listener) net.Listener) *env {
	t.Helper()
	st := storetest.New(t, m)
	reg := model.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.Registry = st, reg
	a := api.New(opts)
	srv := httptest.NewUnstartedServer(a)
	if wrap != nil {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Start()
	t.Cleanup(func() { a.Close(); srv.Close() })
	return &env{t: t, srv: srv, api: a, st: st, m: m}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return v
}

func (e *env) do(method, path, contentType, body string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
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
	return resp{res.StatusCode, res.Header, b}
}

func (e *env) create(body string) map[string]any {
	e.t.Helper()
	r := e.do("POST", base, "application/json", body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create %s = %d %s", body, r.status, r.body)
	}
	return r.json(e.t)
}

// expectProblem checks a problem body: status, content type, every field,
// and that the listed field paths are among its errors.
func expectProblem(t *testing.T, r resp, status int, fields ...string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	p := r.json(t)
	for _, k := range []string{"type", "title", "status", "detail", "instance", "requestId"} {
		if _, ok := p[k]; !ok {
			t.Errorf("problem lacks %q: %s", k, r.body)
		}
	}
	if int(p["status"].(float64)) != status {
		t.Errorf("problem status = %v, want %d", p["status"], status)
	}
	got := map[string]bool{}
	if errs, ok := p["errors"].([]any); ok {
		for _, e := range errs {
			got[e.(map[string]any)["field"].(string)] = true
		}
	}
	for _, f := range fields {
		if !got[f] {
			t.Errorf("errors lack field %q: %s", f, r.body)
		}
	}
	return p
}

func TestCreateGetList(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", base, "application/json", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","labels":{"team":"x"}},"spec":{"name":"Ann","age":30}}`)
	if r.status != 201 || r.header.Get("Location") != base+"/ann" {
		t.Fatalf("create = %d Location %q; body %s", r.status, r.header.Get("Location"), r.body)
	}
	obj := r.json(t)
	md := obj["metadata"].(map[string]any)
	if md["version"].(float64) != 0 || md["creationTimestamp"] == nil {
		t.Errorf("created metadata = %v, want version 0 and a creation time", md)
	}
	if g := e.do("GET", base+"/ann", "", ""); g.status != 200 || !bytes.Equal(g.body, r.body) {
		t.Errorf("get = %d %s, want the created object", g.status, g.body)
	}
	e.create(`{"metadata":{"name":"bob"},"spec":{"name":"Bob","age":40}}`)
	l := e.do("GET", base+"?labelSelector=team%3Dx&size=1", "", "")
	if l.status != 200 {
		t.Fatalf("list = %d %s", l.status, l.body)
	}
	var list map[string]json.RawMessage
	json.Unmarshal(l.body, &list)
	if len(list) != 9 {
		t.Errorf("list has %d fields, want exactly 9: %s", len(list), l.body)
	}
	want := `{"page":1,"size":1,"total":1,`
	if !strings.HasPrefix(string(l.body), want) || !strings.Contains(string(l.body), `"totalPages":1}`) {
		t.Errorf("list = %s", l.body)
	}
	all := e.do("GET", base+"?sort=spec.age,desc", "", "").json(t)
	items := all["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["metadata"].(map[string]any)["name"] != "bob" {
		t.Errorf("sorted list = %v", all)
	}
	// No upper bound on size: a page larger than the list is all of it.
	huge := e.do("GET", base+"?size=1000000&sort=spec.age,desc", "", "").json(t)
	if n := len(huge["items"].([]any)); n != 2 || huge["size"] != 1e6 || huge["totalPages"] != 1.0 || huge["last"] != true {
		t.Errorf("size=1000000 = %v, want both objects on the one page", huge)
	}
	if empty := e.do("GET", base+"?labelSelector=team%3Dnone", "", ""); !strings.Contains(string(empty.body), `"items":[]`) {
		t.Errorf("empty list = %s, want items []", empty.body)
	}
}

// Concurrent lists of different sizes each get exactly their own page,
// with a Content-Length that matches it: list bodies are built in
// recycled buffers.
func TestConcurrentListsGetTheirOwnBodies(t *testing.T) {
	e := newEnv(t)
	teams := map[string]int{"a": 30, "b": 1, "c": 7}
	for team, n := range teams {
		for i := range n {
			e.create(fmt.Sprintf(`{"metadata":{"name":"%s-%d","labels":{"team":"%s"}},"spec":{"name":"%s","age":%d}}`, team, i, team, strings.Repeat(team, 40), i))
		}
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 40 {
				team := []string{"a", "b", "c"}[(w+i)%3]
				res, err := http.Get(e.srv.URL + base + "?size=100&labelSelector=team%3D" + team)
				if err != nil {
					t.Error(err)
					return
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != 200 {
					t.Errorf("list team %s = %d %s (%v)", team, res.StatusCode, body, err)
					return
				}
				if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
					t.Errorf("Content-Length %q for a body of %d bytes", cl, len(body))
				}
				var l struct {
					Total int64
					Items []struct {
						Metadata struct{ Labels map[string]string }
					}
				}
				if err := json.Unmarshal(body, &l); err != nil {
					t.Errorf("list team %s: body %q: %v", team, body, err)
					return
				}
				if l.Total != int64(teams[team]) || len(l.Items) != teams[team] {
					t.Errorf("list team %s: total %d, %d items; want %d", team, l.Total, len(l.Items), teams[team])
				}
				for _, it := range l.Items {
					if it.Metadata.Labels["team"] != team {
						t.Errorf("list team %s holds an object of team %q", team, it.Metadata.Labels["team"])
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestBadInputIsA4xxAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.create(`{"metadata":{"name":"ann"},"spec":{"name":"Ann","email":"ann@example.com"}}`)
	before := e.do("GET", base, "", "").body
	huge := `{"metadata":{"name":"big"},"spec":{"name":"` + strings.Repeat("x", 4<<20) + `"}}`
	tests := []struct {
		name, method, path, ctype, body string
		status                          int
		fields                          []string
	}{
		{"malformed JSON", "POST", base, "application/json", `{"metadata":`, 400, nil},
		{"not an object", "POST", base, "application/json", `[1,2]`, 400, nil},
		{"trailing data", "POST", base, "application/json", `{"metadata":{"name":"x"},"spec":{"name":"x"}} {}`, 400, nil},
		{"empty body", "POST", base, "application/json", ``, 400, nil},
		{"wrong type", "POST", base, "application/json", `{"metadata":{"name":"x"},"spec":{"name":"x","age":"old"}}`, 400, []string{"spec.age"}},
		{"whole floats", "POST", base, "application/json", `{"metadata":{"name":"x","version":1.0},"spec":{"name":"x","age":1e2},"status":{"friendCount":2.0}}`, 400, []string{"metadata.version", "spec.age", "status.friendCount"}},
		{"wrong type and unknown field", "POST", base, "application/json", `{"metadata":{"name":"x"},"spec":{"name":"x","age":"old","agee":1}}`, 400, []string{"spec.age", "spec.agee"}},
		{"unknown fields", "POST", base, "application/json", `{"metadata":{"name":"x","nmae":1},"spec":{"name":"x","agee":3}}`, 400, []string{"metadata.nmae", "spec.agee"}},
		{"unknown fields and violations", "POST", base, "application/json", `{"metadata":{"name":"Bad_Name"},"spec":{"age":200,"agee":1}}`, 400, []string{"spec.agee", "metadata.name", "spec.name", "spec.age"}},
		{"wrong types and violations", "POST", base, "application/json", `{"apiVersion":"","metadata":{"name":"Bad_Name","labels":{"a b":"c"}},"spec":{"name":"x","age":"old","gender":"X"},"status":{"friendCount":1.0}}`, 400,
			[]string{"apiVersion", "metadata.name", "metadata.labels[a b]", "spec.age", "spec.gender", "status.friendCount"}},
		{"unknown field before a wrong type", "POST", base, "application/json", `{"metadata":{"name":"x"},"spec":{"name":"x","agee":1,"age":"old"}}`, 400, []string{"spec.agee", "spec.age"}},
		{"constraint violations", "POST", base, "application/json", `{"metadata":{"name":"x"},"spec":{"name":"","age":151,"gender":"X"}}`, 400, []string{"spec.name", "spec.age", "spec.gender"}},
		{"bad name", "POST", base, "application/json", `{"metadata":{"name":"Not_Valid"},"spec":{"name":"x"}}`, 400, []string{"metadata.name"}},
		{"bad label", "POST", base, "application/json", `{"metadata":{"name":"x","labels":{"a b":"c"}},"spec":{"name":"x"}}`, 400, []string{"metadata.labels[a b]"}},
		{"kind mismatch", "POST", base, "application/json", `{"apiVersion":"v1","kind":"Dog","metadata":{"name":"x"},"spec":{"name":"x"}}`, 400, []string{"apiVersion", "kind"}},
		{"empty apiVersion and kind", "POST", base, "application/json", `{"apiVersion":"","kind":"","metadata":{"name":"x"},"spec":{"name":"x"}}`, 400, []string{"apiVersion", "kind"}},
		{"empty kind and violations", "POST", base, "application/json", `{"kind":"","metadata":{"name":"Bad_Name"},"spec":{"name":"x","age":200}}`, 400, []string{"kind", "metadata.name", "spec.age"}},
		{"update with an empty apiVersion", "PUT", base + "/ann", "application/json", `{"apiVersion":"","metadata":{"name":"ann","version":0},"spec":{"name":"x"}}`, 400, []string{"apiVersion"}},
		{"patch emptying kind", "PATCH", base + "/ann", "application/merge-patch+json", `{"kind":""}`, 400, []string{"kind"}},
		{"duplicate name", "POST", base, "application/json", `{"metadata":{"name":"ann"},"spec":{"name":"x"}}`, 409, nil},
		{"unique clash", "POST", base, "application/json", `{"metadata":{"name":"bob"},"spec":{"name":"x","email":"ann@example.com"}}`, 409, nil},
		{"body too large", "POST", base, "application/json", huge, 413, nil},
		{"bad selector", "GET", base + "?labelSelector=a%3Db%2Cc", "", "", 400, []string{"labelSelector"}},
		{"bad field selector", "GET", base + "?fieldSelector=spec", "", "", 400, []string{"fieldSelector"}},
		{"unindexed sort", "GET", base + "?sort=spec.gender", "", "", 400, []string{"sort"}},
		{"unindexed field", "GET", base + "?fieldSelector=spec.gender%3DMALE", "", "", 400, []string{"fieldSelector"}},
		{"bad page", "GET", base + "?page=x", "", "", 400, []string{"page"}},
		{"bad size", "GET", base + "?size=-1", "", "", 400, []string{"size"}},
		{"bad escape", "GET", base + "?labelSelector=%zz", "", "", 400, []string{"labelSelector"}},
		{"every bad list parameter at once", "GET", base + "?page=abc&size=-3&sort=spec.gender&sort=spec.age,sideways&labelSelector=a%3D%3Db&fieldSelector=spec.nope%3D1", "", "", 400,
			[]string{"page", "size", "sort", "labelSelector", "fieldSelector"}},
		{"every bad term of a delete-collection", "DELETE", base + "?fieldSelector=spec.nope%3D1&sort=spec.gender", "", "", 400, []string{"fieldSelector", "sort"}},
		{"bad escape in a delete-collection", "DELETE", base + "?labelSelector=!nothing&fieldSelector=spec.age%3D1%zz", "", "", 400, []string{"fieldSelector"}},
		{"semicolon in a delete-collection", "DELETE", base + "?fieldSelector=spec.age%3D1;labelSelector=x", "", "", 400, []string{"fieldSelector"}},
		{"update without version", "PUT", base + "/ann", "application/json", `{"metadata":{"name":"ann"},"spec":{"name":"Changed"}}`, 409, nil},
		{"update stale version", "PUT", base + "/ann", "application/json", `{"metadata":{"name":"ann","version":5},"spec":{"name":"Changed"}}`, 409, nil},
		{"update name mismatch", "PUT", base + "/ann", "application/json", `{"metadata":{"name":"bob","version":0},"spec":{"name":"Changed"}}`, 400, []string{"metadata.name"}},
		{"update name mismatch and violations", "PUT", base + "/ann", "application/json", `{"metadata":{"name":"bob","version":0,"labels":{"a b":"c"}},"spec":{"name":"x","age":200}}`, 400, []string{"metadata.name", "metadata.labels[a b]", "spec.age"}},
		{"update name mismatch and wrong type", "PUT", base + "/ann", "application/json", `{"metadata":{"name":"bob","version":0},"spec":{"name":"x","age":"old"}}`, 400, []string{"metadata.name", "spec.age"}},
		{"status name mismatch and wrong type", "PUT", base + "/ann/status", "application/json", `{"metadata":{"name":"bob","version":0},"status":{"friendCount":"two"}}`, 400, []string{"metadata.name", "status.friendCount"}},
		{"update missing", "PUT", base + "/nobody", "application/json", `{"metadata":{"name":"nobody","version":0},"spec":{"name":"x"}}`, 404, nil},
		{"create as text", "POST", base, "text/plain", `{"metadata":{"name":"x"},"spec":{"name":"x"}}`, 415, nil},
		{"create as a form", "POST", base, "application/x-www-form-urlencoded", `{"metadata":{"name":"x"},"spec":{"name":"x"}}`, 415, nil},
		{"create as YAML", "POST", base, "application/yaml", "metadata:\n  name: x\n", 415, nil},
		{"update as XML", "PUT", base + "/ann", "application/xml", `{"metadata":{"name":"ann","version":0},"spec":{"name":"x"}}`, 415, nil},
		{"status as text", "PUT", base + "/ann/status", "text/plain", `{"metadata":{"name":"ann","version":0},"status":{"friendCount":1}}`, 415, nil},
		{"patch media type", "PATCH", base + "/ann", "application/json", `{"spec":{"name":"x"}}`, 415, nil},
		{"patch no media type", "PATCH", base + "/ann", "", `{"spec":{"name":"x"}}`, 415, nil},
		{"patch making it invalid", "PATCH", base + "/ann", "application/merge-patch+json", `{"spec":{"age":500}}`, 400, []string{"spec.age"}},
		{"patch malformed", "PATCH", base + "/ann", "application/json-patch+json", `{"op":"add"}`, 400, nil},
		{"patch path missing", "PATCH", base + "/ann", "application/json-patch+json", `[{"op":"replace","path":"/spec/nothing/deep","value":1}]`, 400, nil},
		{"patch failed test", "PATCH", base + "/ann", "application/json-patch+json", `[{"op":"test","path":"/spec/name","value":"Bob"},{"op":"replace","path":"/spec/name","value":"x"}]`, 400, nil},
		{"patch renames", "PATCH", base + "/ann", "application/merge-patch+json", `{"metadata":{"name":"zed"}}`, 400, []string{"metadata.name"}},
		{"get missing", "GET", base + "/nobody", "", "", 404, nil},
		{"delete missing", "DELETE", base + "/nobody", "", "", 404, nil},
		{"create with a name in the path", "POST", base + "/ann", "application/json", `{}`, 405, nil},
		{"method not allowed", "PATCH", base, "", "", 405, nil},
		{"unknown route", "GET", "/apis/nothing.example.com/v1/things", "", "", 404, nil},
		{"watch without upgrade", "GET", base + "?watch=true", "", "", 400, nil},
		{"watch not a boolean", "GET", base + "?watch=maybe", "", "", 400, []string{"watch"}},
		{"sendInitialEvents not a boolean", "GET", base + "?watch=true&sendInitialEvents=yes", "", "", 400, []string{"sendInitialEvents"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectProblem(t, e.do(tc.method, tc.path, tc.ctype, tc.body), tc.status, tc.fields...)
		})
	}
	if after := e.do("GET", base, "", "").body; !bytes.Equal(before, after) {
		t.Errorf("bad requests changed the stored state:\nbefore %s\nafter  %s", before, after)
	}
}

// TestGeneratedModelBadInput: a model with a schema validator answers bad
// input as the hand-written one does (TestBadInputIsA4xxAndChangesNothing).
func TestGeneratedModelBadInput(t *testing.T) {
	e := newGeneratedEnv(t)
	e.create(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann","age":30}}`)
	before := e.do("GET", base, "", "").body
	const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
	tests := []struct {
		name, method, path, ctype, body string
		fields                          []string
	}{
		{"kind mismatch", "POST", base, "application/json", `{"apiVersion":"v1","kind":"Dog","metadata":{"name":"x"},"spec":{"name":"x"}}`, []string{"apiVersion", "kind"}},
		{"empty apiVersion and kind", "POST", base, "application/json", `{"apiVersion":"","kind":"","metadata":{"name":"x"},"spec":{"name":"x"}}`, []string{"apiVersion", "kind"}},
		{"missing apiVersion and kind", "POST", base, "application/json", `{"metadata":{"name":"x"},"spec":{"name":"x"}}`, []string{"apiVersion", "kind"}},
		{"update with an empty kind", "PUT", base + "/ann", "application/json", `{"apiVersion":"people.example.com/v1alpha1","kind":"","metadata":{"name":"ann","version":0},"spec":{"name":"x"}}`, []string{"kind"}},
		{"patch emptying apiVersion", "PATCH", base + "/ann", "application/merge-patch+json", `{"apiVersion":""}`, []string{"apiVersion"}},
		{"json patch emptying kind", "PATCH", base + "/ann", "application/json-patch+json", `[{"op":"replace","path":"/kind","value":""}]`, []string{"kind"}},
		{"constraint violation", "POST", base, "application/json", `{` + id + `"metadata":{"name":"x"},"spec":{"name":"x","age":151}}`, []string{"spec.age"}},
		{"integer with an exponent", "POST", base, "application/json", `{` + id + `"metadata":{"name":"x"},"spec":{"name":"x","age":1e2}}`, []string{"spec.age"}},
		{"whole floats", "POST", base, "application/json", `{` + id + `"metadata":{"name":"x","version":1.0},"spec":{"name":"x","age":1.0},"status":{"friendCount":2.0}}`, []string{"metadata.version", "spec.age", "status.friendCount"}},
		{"update with a whole float", "PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"ann","version":0.0},"spec":{"name":"x"}}`, []string{"metadata.version"}},
		{"patch to a whole float", "PATCH", base + "/ann", "application/merge-patch+json", `{"spec":{"age":3e1}}`, []string{"spec.age"}},
		// Every violation at once: the schema's, and the metadata rules.
		{"schema and name", "POST", base, "application/json", `{` + id + `"metadata":{"name":"Bad_Name"},"spec":{"name":"B","age":200,"agee":1}}`, []string{"metadata.name", "spec.age", "spec.agee"}},
		{"apiVersion, name and schema", "POST", base, "application/json", `{"apiVersion":"x/v1","kind":"Person","metadata":{"name":"Bad_Name"},"spec":{"name":"B","age":200}}`, []string{"apiVersion", "metadata.name", "spec.age"}},
		{"schema and metadata", "POST", base, "application/json", `{"metadata":{"generateName":"-x","labels":{"a b":"c","ok":"-bad"},"finalizers":["a/b/c"]},"spec":{"age":1.5}}`,
			[]string{"apiVersion", "kind", "metadata.generateName", "metadata.labels[a b]", "metadata.labels[ok]", "metadata.finalizers[0]", "spec.name", "spec.age"}},
		{"whole float and name", "POST", base, "application/json", `{` + id + `"metadata":{"name":"-x"},"spec":{"name":"x","age":1.0}}`, []string{"metadata.name", "spec.age"}},
		{"update: schema and path", "PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"bob","version":0},"spec":{"name":"x","age":200}}`, []string{"metadata.name", "spec.age"}},
		{"update: unknown field and path", "PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"bob","version":0},"spec":{"name":"x","agee":1}}`, []string{"metadata.name", "spec.agee"}},
		{"update: label and path", "PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"bob","version":0,"labels":{"a b":"c"}},"spec":{"name":"x"}}`, []string{"metadata.name", "metadata.labels[a b]"}},
		{"status: schema and path", "PUT", base + "/ann/status", "application/json", `{` + id + `"metadata":{"name":"bob","version":0},"spec":{"name":"x"},"status":{"friendCount":"two"}}`, []string{"metadata.name", "status.friendCount"}},
		{"patch: schema and label", "PATCH", base + "/ann", "application/merge-patch+json", `{"metadata":{"labels":{"a b":"c"}},"spec":{"age":500}}`, []string{"metadata.labels[a b]", "spec.age"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.ctype, tc.body)
			expectProblem(t, r, 400, tc.fields...)
			if b := string(r.body); strings.Contains(b, "Go ") || strings.Contains(b, "of type") {
				t.Errorf("the problem names Go types: %s", b)
			}
		})
	}
	if after := e.do("GET", base, "", "").body; !bytes.Equal(before, after) {
		t.Errorf("bad requests changed the stored state:\nbefore %s\nafter  %s", before, after)
	}
}

func TestUpdatePatchStatusDelete(t *testing.T) {
	e := newEnv(t)
	e.create(`{"metadata":{"name":"ann","finalizers":["example.com/keep"]},"spec":{"name":"Ann","age":30}}`)
	r := e.do("PUT", base+"/ann", "application/json", `{"metadata":{"name":"ann","version":0,"finalizers":["example.com/keep"]},"spec":{"name":"Ann","age":31}}`)
	if r.status != 200 || r.json(t)["metadata"].(map[string]any)["version"].(float64) != 1 {
		t.Fatalf("update = %d %s", r.status, r.body)
	}
	r = e.do("PATCH", base+"/ann", "application/json-patch+json", `[{"op":"replace","path":"/spec/age","value":32}]`)
	if r.status != 200 || !strings.Contains(string(r.body), `"age":32`) {
		t.Fatalf("json patch = %d %s", r.status, r.body)
	}
	r = e.do("PATCH", base+"/ann", "application/merge-patch+json; charset=utf-8", `{"metadata":{"labels":{"team":"x"}},"spec":{"age":null}}`)
	if r.status != 200 || strings.Contains(string(r.body), `"age"`) || !strings.Contains(string(r.body), `"team":"x"`) {
		t.Fatalf("merge patch = %d %s", r.status, r.body)
	}
	// ?watch=true on one object is a get (only an upgrade watches one).
	if g := e.do("GET", base+"/ann?watch=true", "", ""); g.status != 200 || !strings.Contains(string(g.body), `"name":"ann"`) {
		t.Fatalf("GET one object with ?watch=true = %d %s, want the object", g.status, g.body)
	}
	// The status subresource changes status only.
	if r := e.do("PUT", base+"/ann/status", "application/json", `{"metadata":{"name":"ann"},"status":{"friendCount":2}}`); r.status != 409 {
		t.Fatalf("status without a version = %d %s, want 409 (an update needs one)", r.status, r.body)
	}
	r = e.do("PUT", base+"/ann/status", "application/json", `{"metadata":{"name":"ann","version":3},"spec":{"name":"Ignored"},"status":{"friendCount":2}}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"friendCount":2`) || strings.Contains(string(r.body), "Ignored") {
		t.Fatalf("status = %d %s", r.status, r.body)
	}
	if r := e.do("PUT", base+"/ann/status", "application/json", `{"metadata":{"name":"ann","version":1},"status":{"friendCount":3}}`); r.status != 409 {
		t.Fatalf("status with a stale version = %d %s, want 409", r.status, r.body)
	}
	// Delete is soft while a finalizer remains.
	r = e.do("DELETE", base+"/ann", "", "")
	if r.status != 200 || r.json(t)["metadata"].(map[string]any)["deletionTimestamp"] == nil {
		t.Fatalf("delete = %d %s", r.status, r.body)
	}
	again := e.do("DELETE", base+"/ann", "", "")
	if again.status != 200 || !bytes.Equal(again.body, r.body) {
		t.Errorf("second delete = %d %s, want the same object", again.status, again.body)
	}
	if g := e.do("GET", base+"/ann", "", ""); g.status != 200 {
		t.Fatalf("object with a finalizer after delete = %d, want readable", g.status)
	}
	// Removing the last finalizer removes it for good.
	r = e.do("PATCH", base+"/ann", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`)
	if r.status != 200 {
		t.Fatalf("finalizer removal = %d %s", r.status, r.body)
	}
	expectProblem(t, e.do("GET", base+"/ann", "", ""), 404)
}

func TestDeleteCollection(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c"} {
		team := "x"
		if n == "c" {
			team = "y"
		}
		e.create(`{"metadata":{"name":"` + n + `","labels":{"team":"` + team + `"}},"spec":{"name":"x"}}`)
	}
	r := e.do("DELETE", base+"?labelSelector=team%3Dx", "", "")
	if r.status != 200 || r.json(t)["total"].(float64) != 2 {
		t.Fatalf("delete collection = %d %s", r.status, r.body)
	}
	if l := e.do("GET", base, "", "").json(t); l["total"].(float64) != 1 {
		t.Errorf("left = %v, want c only", l)
	}
}

func TestHealthAndPanics(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := e.do("GET", p, "", ""); r.status != 200 {
			t.Errorf("%s = %d %s", p, r.status, r.body)
		}
	}
	e.api.Mount("boom", func(r gin.IRouter) {
		r.GET("/boom", func(*gin.Context) { panic("kaboom") })
	})
	expectProblem(t, e.do("GET", "/boom", "", ""), 500)
	if r := e.do("GET", "/healthz", "", ""); r.status != 200 {
		t.Errorf("server after a panic = %d", r.status)
	}
	e.api.Unmount("boom")
	expectProblem(t, e.do("GET", "/boom", "", ""), 404)
}

type frame struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name    string `json:"name"`
			Version int64  `json:"version"`
		} `json:"metadata"`
	} `json:"object"`
}

func dial(t *testing.T, e *env, path string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func read(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("frame type %v, want text", typ)
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("frame %s: %v", b, err)
	}
	return f.Type + " " + f.Object.Metadata.Name
}

func TestWatch(t *testing.T) {
	e := newEnv(t)
	e.create(`{"metadata":{"name":"old","labels":{"team":"x"}},"spec":{"name":"x"}}`)
	coll := dial(t, e, base+"?watch=true&labelSelector=team%3Dx&sendInitialEvents=true")
	one := dial(t, e, base+"/ann")
	if got := read(t, coll); got != "ADDED old" {
		t.Fatalf("initial event = %s", got)
	}
	e.create(`{"metadata":{"name":"ann","labels":{"team":"x"}},"spec":{"name":"x"}}`)
	e.create(`{"metadata":{"name":"bob","labels":{"team":"y"}},"spec":{"name":"x"}}`)
	e.do("DELETE", base+"/ann", "", "")
	for _, want := range []string{"ADDED ann", "DELETED ann"} {
		if got := read(t, coll); got != want {
			t.Errorf("collection watch: %s, want %s", got, want)
		}
	}
	for _, want := range []string{"ADDED ann", "DELETED ann"} {
		if got := read(t, one); got != want {
			t.Errorf("object watch: %s, want %s", got, want)
		}
	}
	// Shutting down closes the stream with "going away".
	e.api.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := coll.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after Close: %v, want going away", err)
	}
}

// TestWatchDisconnectsAClientThatStopsReading: once the socket to a
// watcher that reads nothing is full, a write times out and the server
// closes the connection; writers never wait for it.
func TestWatchDisconnectsAClientThatStopsReading(t *testing.T) {
	obs := &watchRecorder{}
	e := newEnvWith(t, api.Options{WatchWriteTimeout: 200 * time.Millisecond, Observer: obs})
	stalled := dial(t, e, base+"?watch=true")
	stalled.SetReadLimit(1 << 20)
	// 128 KiB objects fill the socket buffers within a few dozen events.
	pad := strings.Repeat("x", 128<<10)
	start := time.Now()
	for i := range 100 {
		r := e.do("POST", base, "application/json", fmt.Sprintf(`{"metadata":{"name":"p%03d","annotations":{"pad":%q}},"spec":{"name":"x"}}`, i, pad))
		if r.status != 201 {
			t.Fatalf("create %d = %d %s", i, r.status, r.body)
		}
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("100 creates took %v with a stalled watcher", took)
	}
	// The stalled client finds a closed connection after what was buffered.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := 0
	for {
		_, _, err := stalled.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("after %d events the stream is still open: the stalled client was not disconnected", n)
			}
			if websocket.CloseStatus(err) != -1 {
				t.Fatalf("after %d events: %v; want the connection cut, not a close frame", n, err)
			}
			break
		}
		n++
	}
	if n >= 100 {
		t.Errorf("the stalled client got all %d events; want the stream cut short", n)
	}
	obs.wait(t, "unresponsive")
}

// watchRecorder is an api.Observer that keeps why watch streams ended.
type watchRecorder struct {
	mu     sync.Mutex
	open   int
	closed []string
}

func (r *watchRecorder) Request(string, string, int, time.Duration) {}
func (r *watchRecorder) WatchOpened()                               { r.mu.Lock(); r.open++; r.mu.Unlock() }
func (r *watchRecorder) WatchClosed(dropped string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open--
	r.closed = append(r.closed, dropped)
}

// wait waits until the streams that ended are exactly want (their reasons).
func (r *watchRecorder) wait(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		got := fmt.Sprintf("%q", r.closed)
		r.mu.Unlock()
		if got == fmt.Sprintf("%q", want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch streams ended with %s, want %q", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchPingsFindDeadClients: an idle stream is pinged; a client that
// answers (coder/websocket answers while a Read waits) stays connected,
// one that answers nothing is disconnected although no event was sent.
func TestWatchPingsFindDeadClients(t *testing.T) {
	obs := &watchRecorder{}
	e := newEnvWith(t, api.Options{WatchPingInterval: 50 * time.Millisecond, WatchWriteTimeout: 200 * time.Millisecond, Observer: obs})
	alive := dial(t, e, base+"?watch=true")
	dead := dial(t, e, base+"?watch=true")
	got := make(chan string, 1)
	go func() { // alive reads, and so answers pings
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, b, err := alive.Read(ctx)
		if err != nil {
			got <- err.Error()
			return
		}
		var f frame
		json.Unmarshal(b, &f)
		got <- f.Type + " " + f.Object.Metadata.Name
	}()
	time.Sleep(time.Second) // many ping intervals, several timeouts
	// dead never read, so it answered no ping: the server has cut it off.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := dead.Read(ctx); err == nil || ctx.Err() != nil {
		t.Errorf("the client that answers no ping: read = %v, want the connection closed", err)
	}
	e.create(`{"metadata":{"name":"late"},"spec":{"name":"x"}}`)
	if g := <-got; g != "ADDED late" {
		t.Errorf("the client that answers pings got %q, want ADDED late", g)
	}
	obs.wait(t, "unresponsive") // the dead one; alive is still open
	alive.Close(websocket.StatusNormalClosure, "")
	obs.wait(t, "unresponsive", "") // a client that leaves is not dropped
}

// TestDefaultsFillAbsentFields: the schema's defaults fill in what a
// create leaves out, on both decode paths (the generated schema validator
// and the plain typed decode). Updates, patches and status writes are not
// defaulted again: the stored object's empty lists read as absent, and an
// identical write must stay a no-op (docs/api.md).
func TestDefaultsFillAbsentFields(t *testing.T) {
	defaults := &model.Defaults{Props: map[string]*model.Defaults{"spec": {Props: map[string]*model.Defaults{
		"age":  {Value: json.RawMessage(`18`)},
		"tags": {Value: json.RawMessage(`["new"]`)},
	}}}}
	for name, m := range map[string]*model.Model{"generated": example.PersonModel(), "typed": storetest.PersonModel()} {
		t.Run(name, func(t *testing.T) {
			m.Defaults = defaults
			e := newEnvOf(t, m, api.Options{}, nil)
			const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
			spec := func(o map[string]any) string {
				b, _ := json.Marshal(o["spec"])
				return string(b)
			}
			version := func(o map[string]any) any { return o["metadata"].(map[string]any)["version"] }
			if got := spec(e.create(`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`)); got != `{"age":18,"name":"Ann","tags":["new"]}` {
				t.Errorf("create: spec = %s", got)
			}
			bob := e.create(`{` + id + `"metadata":{"name":"bob"},"spec":{"name":"Bob","age":40,"tags":[]}}`)
			if got := spec(bob); got != `{"age":40,"name":"Bob"}` {
				t.Errorf("create with values: spec = %s", got)
			}
			// Writing back what a GET returned changes nothing, though the
			// empty list now reads as absent.
			got := e.do("GET", base+"/bob", "", "")
			r := e.do("PUT", base+"/bob", "application/json", string(got.body))
			if r.status != 200 || spec(r.json(t)) != `{"age":40,"name":"Bob"}` || version(r.json(t)) != version(got.json(t)) {
				t.Errorf("identical update = %d %s", r.status, r.body)
			}
			r = e.do("PUT", base+"/bob/status", "application/json", `{`+id+`"metadata":{"name":"bob","version":0},"spec":{"name":"Bob","age":40},"status":{"friendCount":1}}`)
			if r.status != 200 || spec(r.json(t)) != `{"age":40,"name":"Bob"}` {
				t.Errorf("status update = %d %s", r.status, r.body)
			}
			r = e.do("PATCH", base+"/bob", "application/merge-patch+json", `{"spec":{"age":null}}`)
			if r.status != 200 || spec(r.json(t)) != `{"name":"Bob"}` {
				t.Errorf("patch removing age = %d %s", r.status, r.body)
			}
			r = e.do("PUT", base+"/ann", "application/json", `{`+id+`"metadata":{"name":"ann","version":0},"spec":{"name":"Ann","age":30}}`)
			if r.status != 200 || spec(r.json(t)) != `{"age":30,"name":"Ann"}` {
				t.Errorf("update leaving out tags = %d %s", r.status, r.body)
			}
			// Filling in defaults must not drop what follows the object.
			r = e.do("POST", base, "application/json", `{`+id+`"metadata":{"name":"cy"},"spec":{"name":"Cy"}} {"x":1}`)
			expectProblem(t, r, 400)
			if r := e.do("GET", base+"/cy", "", ""); r.status != 404 {
				t.Errorf("a body with trailing data was stored: %d", r.status)
			}
		})
	}
}

// TestJSONBodyMediaTypes: object bodies are read as JSON when declared as
// JSON, with parameters or a +json suffix, or not declared at all.
func TestJSONBodyMediaTypes(t *testing.T) {
	e := newEnv(t)
	for i, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.example+json", ""} {
		name := fmt.Sprintf("p%d", i)
		r := e.do("POST", base, ct, `{"metadata":{"name":"`+name+`"},"spec":{"name":"x"}}`)
		if r.status != http.StatusCreated {
			t.Errorf("create with Content-Type %q = %d %s", ct, r.status, r.body)
			continue
		}
		r = e.do("PUT", base+"/"+name, ct, `{"metadata":{"name":"`+name+`","version":0},"spec":{"name":"y"}}`)
		if r.status != http.StatusOK {
			t.Errorf("update with Content-Type %q = %d %s", ct, r.status, r.body)
		}
	}
}
