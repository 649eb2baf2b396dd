package content_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/content"
	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/server/servertest"
)

const adminPassword = "content-test-admin"

// env is a real server with the content module, driven over HTTP.
type env struct {
	t     *testing.T
	url   string
	brand string
}

func start(t *testing.T, brand string) *env {
	t.Helper()
	s := servertest.Start(t, servertest.Options{Brand: brand, AdminPassword: adminPassword, Plugins: []plugin.Plugin{content.Plugin{}}})
	s.WaitPhase(content.Name, plugin.Started)
	return &env{t: t, url: s.URL, brand: brand}
}

// uc and posts are the user-centre and generic collection paths.
func (e *env) uc() string    { return "/apis/uc.api.content." + e.brand + "/v1alpha1/posts" }
func (e *env) posts() string { return "/apis/content." + e.brand + "/v1alpha1/posts" }

func (e *env) apiVersion() string { return "content." + e.brand + "/v1alpha1" }

type resp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// do sends a request as user ("" for anonymous); every user's password is
// its name with a suffix, the admin's adminPassword.
func (e *env) do(user, method, path, body string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	switch user {
	case "":
	case "admin":
		req.SetBasicAuth(user, adminPassword)
	default:
		req.SetBasicAuth(user, user+"-password")
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, header: res.Header, raw: string(b)}
	_ = json.Unmarshal(b, &r.body)
	return r
}

// must fails the test unless the request answers want.
func (e *env) must(want int, user, method, path, body string) resp {
	e.t.Helper()
	r := e.do(user, method, path, body)
	if r.status != want {
		e.t.Fatalf("%s %s %s = %d, want %d: %s", user, method, path, r.status, want, r.raw)
	}
	return r
}

func (e *env) user(name string, roles ...string) {
	e.t.Helper()
	rs, _ := json.Marshal(roles)
	e.must(201, "admin", "POST", "/apis/api.console."+e.brand+"/v1alpha1/users",
		fmt.Sprintf(`{"name":%q,"displayName":%q,"password":%q,"roles":%s}`, name, name, name+"-password", rs))
}

// post is a Post body; extra is spliced into spec.
func (e *env) post(name, title, slug, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"apiVersion":%q,"kind":"Post","metadata":{"name":%q},"spec":{"title":%q,"slug":%q%s}}`,
		e.apiVersion(), name, title, slug, extra)
}

// withVersion is a Post body for an update at version v.
func (e *env) withVersion(name, title, slug string, v any, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"apiVersion":%q,"kind":"Post","metadata":{"name":%q,"version":%v},"spec":{"title":%q,"slug":%q%s}}`,
		e.apiVersion(), name, v, title, slug, extra)
}

func spec(r resp) map[string]any   { m, _ := r.body["spec"].(map[string]any); return m }
func status(r resp) map[string]any { m, _ := r.body["status"].(map[string]any); return m }
func version(r resp) any           { return r.body["metadata"].(map[string]any)["version"] }

// names are the metadata.names of a list's items.
func names(r resp) []string {
	var out []string
	items, _ := r.body["items"].([]any)
	for _, it := range items {
		out = append(out, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
	}
	return out
}

func fieldErrors(r resp) []string {
	var out []string
	errs, _ := r.body["errors"].([]any)
	for _, fe := range errs {
		out = append(out, fe.(map[string]any)["field"].(string))
	}
	return out
}

func TestContentModule(t *testing.T) {
	e := start(t, "svc.run")
	e.user("carol", "post-contributor")
	e.user("alice", "post-author")
	e.user("ed", "post-editor")
	e.user("nobody")

	t.Run("contributor", func(t *testing.T) {
		e.t = t
		// Owner, publish state and status in the body are overridden.
		r := e.must(201, "carol", "POST", e.uc(),
			strings.Replace(e.post("c1", "Carol's first", "carol-first", `"owner":"alice","publish":true`), `}}`, `},"status":{"phase":"PUBLISHED"}}`, 1))
		if got := r.header.Get("Location"); got != e.uc()+"/c1" {
			t.Errorf("Location = %q", got)
		}
		if s := spec(r); s["owner"] != "carol" || s["publish"] != false {
			t.Errorf("created spec = %v", s)
		}
		if st := status(r); st["phase"] != "DRAFT" || st["publishTime"] != nil {
			t.Errorf("created status = %v", st)
		}
		// generateName works.
		r = e.must(201, "carol", "POST", e.uc(),
			fmt.Sprintf(`{"apiVersion":%q,"kind":"Post","metadata":{"generateName":"draft-"},"spec":{"title":"Generated","slug":"generated"}}`, e.apiVersion()))
		gen := r.body["metadata"].(map[string]any)["name"].(string)
		if !strings.HasPrefix(gen, "draft-") || len(gen) != len("draft-")+8 || r.header.Get("Location") != e.uc()+"/"+gen {
			t.Errorf("generated name %q, Location %q", gen, r.header.Get("Location"))
		}
		e.must(201, "alice", "POST", e.uc(), e.post("a1", "Alice's", "alice-first", ""))

		// Lists hold only the caller's posts, with the generic list shape
		// and parameters.
		r = e.must(200, "carol", "GET", e.uc(), "")
		if got := names(r); len(got) != 2 || r.body["total"] != float64(2) {
			t.Errorf("carol's list = %v (total %v)", got, r.body["total"])
		}
		r = e.must(200, "carol", "GET", e.uc()+"?size=1&sort=spec.slug,asc", "")
		if got := names(r); len(got) != 1 || got[0] != "c1" || r.body["totalPages"] != float64(2) || r.body["hasNext"] != true {
			t.Errorf("carol's first page = %v", r.raw)
		}
		if len(r.body) != 9 {
			t.Errorf("list has %d fields, want 9: %s", len(r.body), r.raw)
		}
		r = e.must(200, "carol", "GET", e.uc()+"?fieldSelector=spec.owner=alice", "")
		if got := names(r); len(got) != 0 {
			t.Errorf("carol selecting alice's posts got %v", got)
		}
		e.must(400, "carol", "GET", e.uc()+"?sort=spec.title", "")

		// Others' posts do not exist for her.
		e.must(404, "carol", "GET", e.uc()+"/a1", "")
		e.must(404, "carol", "PUT", e.uc()+"/a1", e.withVersion("a1", "Mine now", "alice-first", 0, ""))
		e.must(404, "carol", "DELETE", e.uc()+"/a1", "")
		e.must(200, "alice", "GET", e.uc()+"/a1", "")

		// No publishing, and no generic API.
		e.must(403, "carol", "PUT", e.uc()+"/c1/publish", "")
		e.must(403, "carol", "PUT", e.uc()+"/c1/unpublish", "")
		e.must(403, "carol", "GET", e.posts(), "")
		e.must(403, "carol", "GET", e.posts()+"/c1", "")
		e.must(403, "carol", "POST", e.posts(), e.post("c9", "Direct", "direct", ""))

		// Updates keep owner and publish state whatever the body says.
		r = e.must(200, "carol", "PUT", e.uc()+"/c1", e.withVersion("c1", "Carol's first, edited", "carol-first", 0, `"owner":"alice","publish":true`))
		if s := spec(r); s["title"] != "Carol's first, edited" || s["owner"] != "carol" || s["publish"] != false || version(r) != float64(1) {
			t.Errorf("updated = %s", r.raw)
		}
		if st := status(r); st["phase"] != "DRAFT" {
			t.Errorf("updated status = %v", st)
		}
		e.must(409, "carol", "PUT", e.uc()+"/c1", e.withVersion("c1", "Stale", "carol-first", 0, ""))
		e.must(409, "carol", "PUT", e.uc()+"/c1", e.post("c1", "No version", "carol-first", ""))
		r = e.must(400, "carol", "PUT", e.uc()+"/c1", e.withVersion("other", "Mismatch", "carol-first", 1, ""))
		if got := fieldErrors(r); len(got) != 1 || got[0] != "metadata.name" {
			t.Errorf("name mismatch errors = %v", got)
		}

		// Once an editor publishes her post, she may no longer change it.
		r = e.must(200, "ed", "GET", e.posts()+"/c1", "")
		pub := strings.Replace(r.raw, `"publish":false`, `"publish":true`, 1)
		e.must(200, "ed", "PUT", e.posts()+"/c1", pub)
		r = e.must(403, "carol", "PUT", e.uc()+"/c1", e.withVersion("c1", "Sneaky edit", "carol-first", 2, ""))
		if !strings.Contains(r.raw, "published") {
			t.Errorf("403 detail = %s", r.raw)
		}
		if s := spec(e.must(200, "carol", "GET", e.uc()+"/c1", "")); s["title"] != "Carol's first, edited" {
			t.Errorf("published post changed: %v", s)
		}

		// Deleting her own post.
		r = e.must(200, "carol", "DELETE", e.uc()+"/"+gen, "")
		if r.body["metadata"].(map[string]any)["deletionTimestamp"] == nil {
			t.Errorf("deleted post has no deletionTimestamp: %s", r.raw)
		}
		e.must(404, "carol", "GET", e.uc()+"/"+gen, "")
	})

	t.Run("author", func(t *testing.T) {
		e.t = t
		e.must(201, "alice", "POST", e.uc(), e.post("a2", "Alice's second", "alice-second", ""))
		r := e.must(200, "alice", "PUT", e.uc()+"/a2/publish", "")
		if s, st := spec(r), status(r); s["publish"] != true || st["phase"] != "PUBLISHED" || st["publishTime"] == nil || s["owner"] != "alice" {
			t.Fatalf("published = %s", r.raw)
		}
		published := status(r)["publishTime"]
		v := version(r)
		// Publishing again changes nothing.
		if r := e.must(200, "alice", "PUT", e.uc()+"/a2/publish", ""); version(r) != v {
			t.Errorf("second publish moved the version from %v to %v", v, version(r))
		}
		// Authors may change their published posts; they stay published.
		r = e.must(200, "alice", "PUT", e.uc()+"/a2", e.withVersion("a2", "Alice's second, revised", "alice-second", v, `"publish":false`))
		if s := spec(r); s["publish"] != true || s["title"] != "Alice's second, revised" {
			t.Errorf("revised = %s", r.raw)
		}
		r = e.must(200, "alice", "PUT", e.uc()+"/a2/unpublish", "")
		if s, st := spec(r), status(r); s["publish"] != false || st["phase"] != "DRAFT" || st["publishTime"] != published {
			t.Errorf("unpublished = %s", r.raw)
		}
		// Not others' posts, and not the generic API.
		e.must(404, "alice", "PUT", e.uc()+"/c1/publish", "")
		e.must(404, "alice", "PUT", e.uc()+"/c1/unpublish", "")
		e.must(404, "alice", "GET", e.uc()+"/c1", "")
		e.must(403, "alice", "GET", e.posts(), "")
		if got := names(e.must(200, "alice", "GET", e.uc(), "")); len(got) != 2 {
			t.Errorf("alice's list = %v", got)
		}
	})

	t.Run("editor", func(t *testing.T) {
		e.t = t
		r := e.must(200, "ed", "GET", e.posts(), "")
		if r.body["total"] != float64(3) {
			t.Errorf("editor sees %v posts: %s", r.body["total"], r.raw)
		}
		r = e.must(200, "ed", "GET", e.posts()+"?fieldSelector=spec.owner=alice", "")
		if got := names(r); len(got) != 2 {
			t.Errorf("alice's posts by selector = %v", got)
		}
		r = e.must(200, "ed", "GET", e.posts()+"/a1", "")
		r = e.must(200, "ed", "PUT", e.posts()+"/a1", strings.Replace(r.raw, `"title":"Alice's"`, `"title":"Edited by ed"`, 1))
		e.must(200, "ed", "PUT", e.posts()+"/a1/status",
			fmt.Sprintf(`{"apiVersion":%q,"kind":"Post","metadata":{"name":"a1","version":%v},"spec":{"title":"x","slug":"x"},"status":{"phase":"PUBLISHED"}}`,
				e.apiVersion(), r.body["metadata"].(map[string]any)["version"]))
		e.must(201, "ed", "POST", e.posts(), e.post("e1", "For carol", "for-carol", `"owner":"carol"`))
		if got := names(e.must(200, "carol", "GET", e.uc()+"?fieldSelector=name=e1", "")); len(got) != 1 {
			t.Errorf("post an editor made for carol: %v", got)
		}
		e.must(200, "ed", "DELETE", e.posts()+"/e1", "")
		// The user-centre API is still only their own.
		if got := names(e.must(200, "ed", "GET", e.uc(), "")); len(got) != 0 {
			t.Errorf("ed's own posts = %v", got)
		}
	})

	t.Run("no role and anonymous", func(t *testing.T) {
		e.t = t
		e.must(403, "nobody", "GET", e.uc(), "")
		e.must(403, "nobody", "POST", e.uc(), e.post("n1", "No", "no", ""))
		e.must(403, "nobody", "GET", e.uc()+"/c1", "")
		e.must(403, "nobody", "GET", e.posts(), "")
		r := e.must(401, "", "GET", e.uc(), "")
		if r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("401 without WWW-Authenticate")
		}
		e.must(401, "", "PUT", e.uc()+"/c1/publish", "")
		e.must(401, "", "GET", e.posts(), "")
		// Even a role that opens the API to everyone gives an anonymous
		// caller no posts of "their own".
		e.must(201, "admin", "POST", "/api/v1alpha1/roles", `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"public-uc-posts",`+
			`"labels":{"rbac.authorization.svc.run/aggregate-to-anonymous":"true"}},"rules":[{"apiGroups":["uc.api.content.svc.run"],"resources":["posts"],"verbs":["list"]}]}`)
		r = e.must(401, "", "GET", e.uc(), "")
		if !strings.Contains(r.raw, "own posts") || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("anonymous list with a public role = %s", r.raw)
		}
		e.must(200, "admin", "DELETE", "/api/v1alpha1/roles/public-uc-posts", "")
	})

	t.Run("errors", func(t *testing.T) {
		e.t = t
		// Slug clash: 409 that does not name the other user's post.
		r := e.must(409, "alice", "POST", e.uc(), e.post("a3", "Same slug", "carol-first", ""))
		// (The request id is random hex: only the problem's own words count.)
		if detail, _ := r.body["detail"].(string); strings.Contains(detail, "c1") || strings.Contains(fmt.Sprint(r.body["errors"]), "c1") ||
			r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("slug clash = %s (%s)", r.raw, r.header.Get("Content-Type"))
		}
		e.must(409, "ed", "POST", e.posts(), e.post("e2", "Same slug", "carol-first", ""))
		e.must(409, "alice", "POST", e.uc(), e.post("a1", "Taken name", "taken-name", ""))

		r = e.must(400, "carol", "POST", e.uc(), e.post("c2", "", "carol-second", ""))
		if got := fieldErrors(r); len(got) != 1 || got[0] != "spec.title" {
			t.Errorf("empty title errors = %v", got)
		}
		r = e.must(400, "carol", "POST", e.uc(), e.post("c2", strings.Repeat("t", 256), "Not A Slug", ""))
		if got := strings.Join(fieldErrors(r), ","); !strings.Contains(got, "spec.title") || !strings.Contains(got, "spec.slug") {
			t.Errorf("long title and bad slug errors = %v", got)
		}
		r = e.must(400, "carol", "POST", e.uc(), e.post("c2", "Unknown", "unknown", `"colour":"red"`))
		if got := fieldErrors(r); len(got) != 1 || got[0] != "spec.colour" {
			t.Errorf("unknown field errors = %v", got)
		}
		e.must(400, "carol", "POST", e.uc(), e.post("c2", "Bad visibility", "bad-visibility", `"visibility":"SECRET"`))
		e.must(400, "carol", "POST", e.uc(), `{"apiVersion":`)
		e.must(400, "carol", "POST", e.uc(), "")
		r = e.must(400, "carol", "POST", e.uc(), strings.Replace(e.post("c2", "Wrong group", "wrong-group", ""), e.apiVersion(), "content.halo.run/v1alpha1", 1))
		if got := fieldErrors(r); len(got) != 1 || got[0] != "apiVersion" {
			t.Errorf("apiVersion mismatch errors = %v", got)
		}
		r = e.must(400, "carol", "POST", e.uc(), strings.Replace(e.post("c2", "Wrong kind", "wrong-kind", ""), `"kind":"Post"`, `"kind":"Page"`, 1))
		if got := fieldErrors(r); len(got) != 1 || got[0] != "kind" {
			t.Errorf("kind mismatch errors = %v", got)
		}
		e.must(400, "carol", "POST", e.uc(), e.post("Bad_Name", "Bad name", "bad-name", ""))
		e.must(201, "carol", "POST", e.uc(), e.post("c2", "Visible", "carol-second", `"visibility":"PRIVATE","content":"body"`))
		// The last check: an update clashing with another post's slug.
		r = e.must(200, "carol", "GET", e.uc()+"/c2", "")
		e.must(409, "carol", "PUT", e.uc()+"/c2", e.withVersion("c2", "Clash", "alice-first", version(r), ""))
		e.must(404, "alice", "PUT", e.uc()+"/missing/publish", "")
	})
}

// TestHaloBrand checks that the module follows the brand: its groups and
// the roles that name them.
func TestHaloBrand(t *testing.T) {
	e := start(t, "halo.run")
	e.user("alice", "post-author")
	r := e.must(201, "alice", "POST", e.uc(), e.post("hello", "Hello", "hello", ""))
	if r.body["apiVersion"] != "content.halo.run/v1alpha1" || r.header.Get("Location") != "/apis/uc.api.content.halo.run/v1alpha1/posts/hello" {
		t.Errorf("created = %s (Location %q)", r.raw, r.header.Get("Location"))
	}
	e.must(200, "alice", "PUT", e.uc()+"/hello/publish", "")
	r = e.must(200, "admin", "GET", e.posts(), "")
	if got := names(r); len(got) != 1 || got[0] != "hello" {
		t.Errorf("generic list = %s", r.raw)
	}
	e.must(200, "admin", "GET", "/apis/content.halo.run/v1alpha1/posts/hello", "")
	e.must(404, "admin", "GET", "/apis/content.svc.run/v1alpha1/posts", "")
	e.must(404, "admin", "GET", "/apis/uc.api.content.svc.run/v1alpha1/posts", "")
	e.must(403, "alice", "GET", e.posts(), "")
	// The served document names the brand's group only.
	r = e.must(200, "", "GET", "/openapi.json", "")
	if !strings.Contains(r.raw, `"/apis/content.halo.run/v1alpha1/posts"`) || strings.Contains(r.raw, "content.svc.run") {
		t.Errorf("/openapi.json does not describe posts under content.halo.run only")
	}
}
