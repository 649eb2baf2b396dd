package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/server/servertest"
	"github.com/svcrun/svc/runtime/store/storetest"
)

const adminPassword = "plugin-test-admin"

// testPlugin serves storetest's Person model with custom routes.
type testPlugin struct {
	name     string
	files    fstest.MapFS
	gv       string // group-version of its custom route; "" declares none
	model    func() *model.Model
	startErr error
	// started counts Start calls; runs counts runnables running.
	mu      sync.Mutex
	started int
	running int
}

func (p *testPlugin) Name() string      { return p.name }
func (p *testPlugin) Extensions() fs.FS { return p.files }

func (p *testPlugin) Start(_ context.Context, h *plugin.Host) error {
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	if p.startErr != nil {
		return p.startErr
	}
	if p.model != nil {
		h.Model(p.model(), nil)
	}
	h.Routes(p.gv, func(r gin.IRouter) {
		r.GET("/hello/:who", func(c *gin.Context) { c.JSON(200, gin.H{"hello": c.Param("who"), "plugin": h.Name()}) })
	})
	h.Run(runFunc(func(ctx context.Context) error {
		p.mu.Lock()
		p.running++
		p.mu.Unlock()
		<-ctx.Done()
		p.mu.Lock()
		p.running--
		p.mu.Unlock()
		return nil
	}))
	return nil
}

func (p *testPlugin) counts() (int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started, p.running
}

type runFunc func(ctx context.Context) error

func (f runFunc) Start(ctx context.Context) error { return f(ctx) }

type env struct {
	*servertest.Server
	t    *testing.T
	url  string
	srv  *server.Server
	logs *lockedBuffer
}

func start(t *testing.T, dir, brand string, plugins ...plugin.Plugin) *env {
	t.Helper()
	logs := &lockedBuffer{}
	s := servertest.Start(t, servertest.Options{Dir: dir, Brand: brand, AdminPassword: adminPassword, Plugins: plugins, Log: logs})
	return &env{Server: s, t: t, url: s.URL, srv: s.Server, logs: logs}
}

// lockedBuffer collects the server's logs, written from its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// do sends a request as admin (or anonymously with anon) and returns the
// status and decoded body.
func (e *env) do(method, path, body string, anon bool) (int, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if !anon {
		req.SetBasicAuth("admin", adminPassword)
	}
	switch method {
	case "PATCH":
		req.Header.Set("Content-Type", "application/merge-patch+json")
	default:
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out
}

func (e *env) waitPhase(name, want string) string { return e.WaitPhase(name, want) }

func (e *env) status(method, path, body string, anon bool) int {
	e.t.Helper()
	s, _ := e.do(method, path, body, anon)
	return s
}

const roleFile = `# a comment before the first document
apiVersion: v1alpha1
kind: Role
metadata:
  name: people-role-view-persons
  labels:
    svc.run/role-template: "true"
rules:
  - apiGroups: ["people.example.com"]
    resources: ["persons"]
    verbs: ["get", "list"]
---
# a comment-only document
---
apiVersion: v1alpha1
kind: Role
metadata:
  name: people-role-public-hello
  labels:
    svc.run/role-template: "true"
    rbac.authorization.svc.run/aggregate-to-anonymous: "true"
rules:
  - apiGroups: ["hello.people.example.com"]
    resources: ["hello"]
    verbs: ["get"]`

const persons = "/apis/people.example.com/v1alpha1/persons"

func peoplePlugin() *testPlugin {
	return &testPlugin{
		name:  "people",
		gv:    "hello.people.example.com/v1alpha1",
		model: storetest.PersonModel,
		files: fstest.MapFS{
			"roles.yaml":       {Data: []byte(roleFile)},
			"comments.yml":     {Data: []byte("# nothing here\n# at all\n")},
			"README.md":        {Data: []byte("not an extension file")},
			"legacy.yml":       {Data: []byte("groupVersion: people.example.com/v1alpha1\nkind: Person\nmetadata:\n  name: from-legacy-file\nname: Legacy\nage: 40\n")},
			"nested/skip.yaml": {Data: []byte("not: read")},
		},
	}
}

func TestPluginLifecycle(t *testing.T) {
	dir := t.TempDir()
	p := peoplePlugin()
	e := start(t, dir, "svc.run", p)
	e.waitPhase("people", plugin.Started)
	if s := e.status("GET", "/readyz", "", true); s != 200 {
		t.Fatalf("readyz = %d after every plugin started", s)
	}

	// Extension objects: both roles, the legacy Person with its fields
	// moved under spec, and the plugin-name label on each.
	for _, path := range []string{"/api/v1alpha1/roles/people-role-view-persons", "/api/v1alpha1/roles/people-role-public-hello", persons + "/from-legacy-file"} {
		s, body := e.do("GET", path, "", false)
		if s != 200 {
			t.Fatalf("GET %s = %d %v", path, s, body)
		}
		md := body["metadata"].(map[string]any)
		if got := md["labels"].(map[string]any)["plugin.svc.run/plugin-name"]; got != "people" {
			t.Errorf("%s plugin-name label = %v", path, got)
		}
	}
	_, legacy := e.do("GET", persons+"/from-legacy-file", "", false)
	if spec := legacy["spec"].(map[string]any); spec["name"] != "Legacy" || spec["age"] != float64(40) {
		t.Errorf("legacy object spec = %v", spec)
	}

	// Custom route under its group-version; public through the aggregated
	// template.
	if s, body := e.do("GET", "/apis/hello.people.example.com/v1alpha1/hello/ann", "", true); s != 200 || body["hello"] != "ann" {
		t.Fatalf("anonymous custom route = %d %v", s, body)
	}
	if s := e.status("POST", persons, `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`, false); s != 201 {
		t.Fatalf("create = %d", s)
	}
	if _, running := p.counts(); running != 1 {
		t.Fatalf("runnables running = %d, want 1", running)
	}

	// Disable: routes 404, templates gone, runnable stopped, data kept.
	if s := e.status("PATCH", "/api/v1alpha1/plugins/people", `{"spec":{"enabled":false}}`, false); s != 200 {
		t.Fatalf("disable = %d", s)
	}
	e.waitPhase("people", plugin.Stopped)
	for _, path := range []string{persons + "/ann", "/apis/hello.people.example.com/v1alpha1/hello/ann", "/api/v1alpha1/roles/people-role-view-persons"} {
		if s := e.status("GET", path, "", false); s != 404 {
			t.Errorf("GET %s while stopped = %d, want 404", path, s)
		}
	}
	if _, running := p.counts(); running != 0 {
		t.Errorf("runnables running while stopped = %d", running)
	}
	if s := e.status("GET", "/readyz", "", true); s != 200 {
		t.Errorf("readyz with a disabled plugin = %d, want 200", s)
	}

	// Enable again: the data is back.
	if s := e.status("PATCH", "/api/v1alpha1/plugins/people", `{"spec":{"enabled":true}}`, false); s != 200 {
		t.Fatalf("enable = %d", s)
	}
	e.waitPhase("people", plugin.Started)
	if s, body := e.do("GET", persons+"/ann", "", false); s != 200 || body["spec"].(map[string]any)["name"] != "Ann" {
		t.Fatalf("GET ann after restart of the plugin = %d %v", s, body)
	}
	if started, _ := p.counts(); started != 2 {
		t.Errorf("Start called %d times, want 2", started)
	}

	// A restart of the server keeps the plugin's state and data.
	e.srv.Shutdown(5 * time.Second)
	e2 := start(t, dir, "svc.run", p)
	e2.waitPhase("people", plugin.Started)
	if s := e2.status("GET", persons+"/ann", "", false); s != 200 {
		t.Fatalf("GET ann after server restart = %d", s)
	}
}

func TestDisabledPluginStaysStoppedAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	p := peoplePlugin()
	e := start(t, dir, "svc.run", p)
	e.waitPhase("people", plugin.Started)
	e.status("PATCH", "/api/v1alpha1/plugins/people", `{"spec":{"enabled":false}}`, false)
	e.waitPhase("people", plugin.Stopped)
	e.srv.Shutdown(5 * time.Second)
	e2 := start(t, dir, "svc.run", p)
	e2.waitPhase("people", plugin.Stopped)
	if s := e2.status("GET", persons, "", false); s != 404 {
		t.Errorf("list of a disabled plugin's model = %d, want 404", s)
	}
}

func TestBadExtensionFileFailsOnlyThatPlugin(t *testing.T) {
	cases := []struct {
		name, file, content string
		want                []string
	}{
		{"syntax", "broken.yaml", "apiVersion: v1alpha1\nkind: Role\nmetadata: [unclosed\n", []string{"broken.yaml", "does not parse"}},
		{"unknown kind", "gadget.yaml", "apiVersion: v1alpha1\nkind: Gadget\nmetadata:\n  name: my-gadget\nspec: {}\n", []string{"gadget.yaml", "Gadget my-gadget", "unknown kind"}},
		{"invalid object", "role.yaml", "apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: Bad_Name\nrules: []\n", []string{"role.yaml", "Role Bad_Name", "metadata.name"}},
		{"no name", "role.yaml", "apiVersion: v1alpha1\nkind: Role\nmetadata:\n  generateName: x-\nrules: []\n", []string{"role.yaml", "metadata.name is required"}},
		{"reserved key", "role.yaml", "apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: bad-role-x\n  labels:\n    team: a\nrules: []\n", []string{"role.yaml", "bad-role-x", "unprefixed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			good := peoplePlugin()
			bad := &testPlugin{name: "bad", gv: "v1alpha1", files: fstest.MapFS{
				"ok.yaml": {Data: []byte("apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: bad-role-ok\nrules: []\n")},
				tc.file:   {Data: []byte(tc.content)},
			}}
			e := start(t, "", "svc.run", good, bad)
			msg := e.waitPhase("bad", plugin.Failed)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not name %q", msg, w)
				}
			}
			e.waitPhase("people", plugin.Started)
			// Nothing of the failed plugin is left behind.
			if s := e.status("GET", "/api/v1alpha1/roles/bad-role-ok", "", false); s != 404 {
				t.Errorf("the failed plugin's valid object = %d, want 404 (nothing half-loaded)", s)
			}
			if s := e.status("GET", "/apis/plugin.api.svc.run/v1alpha1/plugins/bad/hello/x", "", false); s != 404 {
				t.Errorf("the failed plugin's route = %d, want 404", s)
			}
			if s := e.status("GET", "/readyz", "", true); s != 503 {
				t.Errorf("readyz with an enabled plugin that failed = %d, want 503", s)
			}
			if s := e.status("GET", "/healthz", "", true); s != 200 {
				t.Errorf("healthz = %d", s)
			}
		})
	}
}

type panicPlugin struct{}

func (panicPlugin) Name() string                              { return "panicky" }
func (panicPlugin) Start(context.Context, *plugin.Host) error { panic("nil map somewhere") }

func TestStartStepPanicFailsOnlyThatPlugin(t *testing.T) {
	e := start(t, "", "svc.run", panicPlugin{}, peoplePlugin())
	if msg := e.waitPhase("panicky", plugin.Failed); !strings.Contains(msg, "nil map somewhere") {
		t.Errorf("message = %q", msg)
	}
	e.waitPhase("people", plugin.Started)
}

func TestStartStepErrorFails(t *testing.T) {
	p := &testPlugin{name: "broken", startErr: fmt.Errorf("no database configured")}
	e := start(t, "", "svc.run", p)
	if msg := e.waitPhase("broken", plugin.Failed); !strings.Contains(msg, "no database configured") {
		t.Errorf("message = %q", msg)
	}
	// A failed start is not retried for the same spec...
	time.Sleep(100 * time.Millisecond)
	if n, _ := p.counts(); n != 1 {
		t.Errorf("Start called %d times, want 1", n)
	}
	// ...but disabling and enabling again tries once more.
	e.status("PATCH", "/api/v1alpha1/plugins/broken", `{"spec":{"enabled":false}}`, false)
	e.waitPhase("broken", plugin.Stopped)
	e.status("PATCH", "/api/v1alpha1/plugins/broken", `{"spec":{"enabled":true}}`, false)
	e.waitPhase("broken", plugin.Failed)
	if n, _ := p.counts(); n != 2 {
		t.Errorf("Start called %d times after re-enabling, want 2", n)
	}
}

func TestVersionOnlyRoutesAndIgnoredRoutes(t *testing.T) {
	legacy := &testPlugin{name: "legacy", gv: "v1alpha1"}
	none := &testPlugin{name: "nover", gv: ""}
	e := start(t, "", "svc.run", legacy, none)
	e.waitPhase("legacy", plugin.Started)
	e.waitPhase("nover", plugin.Started)
	for _, prefix := range []string{"/apis/plugin.api.svc.run/v1alpha1/plugins/legacy", "/apis/api.plugin.svc.run/v1alpha1/plugins/legacy"} {
		if s, body := e.do("GET", prefix+"/hello/bob", "", false); s != 200 || body["plugin"] != "legacy" {
			t.Errorf("GET %s/hello/bob = %d %v", prefix, s, body)
		}
		// Super-admin only: anonymous callers are asked to sign in.
		if s := e.status("GET", prefix+"/hello/bob", "", true); s != 401 {
			t.Errorf("anonymous GET %s = %d, want 401", prefix, s)
		}
	}
	if !strings.Contains(e.logs.String(), "custom routes ignored") {
		t.Errorf("no warning for routes without a version; logs: %s", e.logs.String())
	}
}

func TestRoutesAnswer503UntilStarted(t *testing.T) {
	release := make(chan struct{})
	p := &testPlugin{name: "slow", gv: "slow.example.com/v1", model: func() *model.Model {
		m := storetest.PersonModel()
		m.Group = "slow.example.com"
		return m
	}}
	p.files = fstest.MapFS{"x.yaml": {Data: []byte("apiVersion: slow.example.com/v1alpha1\nkind: Person\nmetadata:\n  name: seed\nspec:\n  name: Seed\n")}}
	blocking := &blockingPlugin{testPlugin: p, release: release}
	e := start(t, "", "svc.run", blocking)
	e.waitPhase("slow", plugin.Starting)
	for _, path := range []string{"/apis/slow.example.com/v1/hello/x", "/readyz"} {
		if s := e.status("GET", path, "", false); s != 503 {
			t.Errorf("GET %s while starting = %d, want 503", path, s)
		}
	}
	close(release)
	e.waitPhase("slow", plugin.Started)
	if s := e.status("GET", "/apis/slow.example.com/v1/hello/x", "", false); s != 200 {
		t.Errorf("custom route after start = %d", s)
	}
	if s := e.status("GET", "/apis/slow.example.com/v1alpha1/persons/seed", "", false); s != 200 {
		t.Errorf("seed object = %d", s)
	}
}

// blockingPlugin holds its extension files until released, keeping the
// plugin in STARTING after its routes are mounted.
type blockingPlugin struct {
	*testPlugin
	release chan struct{}
}

func (b *blockingPlugin) Extensions() fs.FS { return blockingFS{b.testPlugin.files, b.release} }

type blockingFS struct {
	fs.FS
	release chan struct{}
}

func (b blockingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	<-b.release
	return fs.ReadDir(b.FS, name)
}

func TestDoNotOverwrite(t *testing.T) {
	dir := t.TempDir()
	p := &testPlugin{name: "keep", gv: "v1alpha1", files: fstest.MapFS{
		"roles.yaml": {Data: []byte("apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: keep-role-a\n  labels:\n    svc.run/role-template: \"true\"\nrules: []\n---\napiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: keep-role-b\nrules: []\n")},
	}}
	e := start(t, dir, "svc.run", p)
	e.waitPhase("keep", plugin.Started)
	// An operator edits a and marks it do-not-overwrite; edits b plainly.
	e.status("PATCH", "/api/v1alpha1/roles/keep-role-a", `{"metadata":{"labels":{"svc.run/do-not-overwrite":"true"}},"rules":[{"nonResourceURLs":["/x"],"verbs":["get"]}]}`, false)
	e.status("PATCH", "/api/v1alpha1/roles/keep-role-b", `{"rules":[{"nonResourceURLs":["/y"],"verbs":["get"]}]}`, false)
	e.srv.Shutdown(5 * time.Second)
	e2 := start(t, dir, "svc.run", p)
	e2.waitPhase("keep", plugin.Started)
	_, a := e2.do("GET", "/api/v1alpha1/roles/keep-role-a", "", false)
	_, b := e2.do("GET", "/api/v1alpha1/roles/keep-role-b", "", false)
	if rules, _ := a["rules"].([]any); len(rules) != 1 {
		t.Errorf("do-not-overwrite role was overwritten: %v", a)
	}
	if rules, _ := b["rules"].([]any); len(rules) != 0 {
		t.Errorf("plain role kept its edit, want the file's content: %v", b)
	}
	// Stopping removes b but keeps a.
	e2.status("PATCH", "/api/v1alpha1/plugins/keep", `{"spec":{"enabled":false}}`, false)
	e2.waitPhase("keep", plugin.Stopped)
	if s := e2.status("GET", "/api/v1alpha1/roles/keep-role-a", "", false); s != 200 {
		t.Errorf("do-not-overwrite role after stop = %d, want 200", s)
	}
	if s := e2.status("GET", "/api/v1alpha1/roles/keep-role-b", "", false); s != 404 {
		t.Errorf("plain role after stop = %d, want 404", s)
	}
}

// clashPlugin mounts a custom route whose wildcard clashes with the
// console's /users/:name routes; Gin refuses such a route tree.
type clashPlugin struct{}

func (clashPlugin) Name() string { return "clash" }
func (clashPlugin) Start(_ context.Context, h *plugin.Host) error {
	h.Model(storetest.PersonModel(), nil)
	h.Routes("api.console.svc.run/v1alpha1", func(r gin.IRouter) {
		r.GET("/users/:id/extra", func(c *gin.Context) { c.Status(200) })
	})
	return nil
}

func TestRouteClashFailsOnlyThatPlugin(t *testing.T) {
	e := start(t, "", "svc.run", clashPlugin{})
	if msg := e.waitPhase("clash", plugin.Failed); !strings.Contains(msg, "routes clash") {
		t.Errorf("message = %q, want the clash named", msg)
	}
	// Nothing of it stays: its model is gone, the console still works.
	if s := e.status("GET", persons, "", false); s != 404 {
		t.Errorf("the failed plugin's model = %d, want 404", s)
	}
	if s := e.status("GET", "/apis/api.console.svc.run/v1alpha1/users/-", "", false); s != 200 {
		t.Errorf("console after the clash = %d, want 200", s)
	}
}

// oldDocPlugin has the generated package function's shape as a method,
// which is not plugin.Documented.
type oldDocPlugin struct{ testPlugin }

func (*oldDocPlugin) OpenAPI() []byte { return []byte(`{}`) }

func TestWarnsOfOpenAPIWithoutBrand(t *testing.T) {
	var logs bytes.Buffer
	plugin.NewManager(plugin.Options{
		Plugins: []plugin.Plugin{&oldDocPlugin{testPlugin{name: "old"}}, &testPlugin{name: "plain"}},
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if !strings.Contains(logs.String(), "plugin=old") || strings.Contains(logs.String(), "plugin=plain") {
		t.Errorf("logs = %s", logs.String())
	}
}

// A plugin model in the empty group (/api, the service's) fails the
// plugin; one under the brand's groups starts, as Halo's own plugins in
// core.halo.run must under --brand-domain halo.run, with a warning.
func TestReservedGroups(t *testing.T) {
	p := &testPlugin{name: "squatter", gv: "v1alpha1", model: func() *model.Model {
		m := storetest.PersonModel()
		m.Group = ""
		return m
	}}
	e := start(t, "", "svc.run", p)
	msg := e.waitPhase("squatter", plugin.Failed)
	if !strings.Contains(msg, "reserved") || !strings.Contains(msg, "Person") {
		t.Errorf("message = %q", msg)
	}
	if s := e.status("GET", "/api/v1alpha1/persons", "", false); s != 404 {
		t.Errorf("GET /api/v1alpha1/persons = %d, want 404", s)
	}

	brandGroup := &testPlugin{name: "links", gv: "v1alpha1", model: func() *model.Model {
		m := storetest.PersonModel()
		m.Group = "core.svc.run"
		return m
	}}
	e = start(t, "", "svc.run", brandGroup)
	e.waitPhase("links", plugin.Started)
	if s := e.status("GET", "/apis/core.svc.run/v1alpha1/persons", "", false); s != 200 {
		t.Errorf("GET /apis/core.svc.run/v1alpha1/persons = %d, want 200", s)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "model in a group reserved for the service") || !strings.Contains(logs, "core.svc.run") {
		t.Errorf("no warning names the reserved group: %s", logs)
	}
}

type corePlugin struct{ testPlugin }

func (*corePlugin) Core() {}

func TestCorePluginMayUseReservedGroup(t *testing.T) {
	p := &corePlugin{testPlugin{name: "module", gv: "v1alpha1", model: func() *model.Model {
		m := storetest.PersonModel()
		m.Group = "people.svc.run"
		return m
	}}}
	e := start(t, "", "svc.run", p)
	e.waitPhase("module", plugin.Started)
	if s := e.status("GET", "/apis/people.svc.run/v1alpha1/persons", "", false); s != 200 {
		t.Errorf("GET = %d, want 200", s)
	}
	if strings.Contains(e.logs.String(), "group reserved for the service") {
		t.Error("a core module was warned of its reserved group")
	}
}

// An extension file is a new object described whole: the model's
// defaults fill in what it leaves out.
func TestExtensionFilesGetDefaults(t *testing.T) {
	p := &testPlugin{name: "people", gv: "v1alpha1",
		model: func() *model.Model {
			m := storetest.PersonModel()
			m.Defaults = &model.Defaults{Props: map[string]*model.Defaults{"spec": {Props: map[string]*model.Defaults{
				"age": {Value: json.RawMessage(`18`)},
			}}}}
			return m
		},
		files: fstest.MapFS{"ann.yaml": {Data: []byte("apiVersion: people.example.com/v1alpha1\nkind: Person\nmetadata:\n  name: ann\nspec:\n  name: Ann\n")}},
	}
	e := start(t, "", "svc.run", p)
	e.waitPhase("people", plugin.Started)
	status, obj := e.do("GET", "/apis/people.example.com/v1alpha1/persons/ann", "", false)
	if status != 200 {
		t.Fatalf("GET ann = %d", status)
	}
	if age := obj["spec"].(map[string]any)["age"]; age != float64(18) {
		t.Errorf("spec.age = %v, want the default 18", age)
	}
}
