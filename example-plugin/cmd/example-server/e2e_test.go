package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/server/servertest"
)

// These tests run the real example-server binary as a subprocess on a free
// loopback port, as an operator would.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "example-server-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "example-server")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build example-server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	adminPW  = "e2e-admin-password"
	persons  = "/apis/people.example.com/v1alpha1/persons"
	console  = "/apis/api.console.svc.run/v1alpha1"
	greeting = "/apis/api.people.example.com/v1alpha1/persons/%s/greeting"
	stats    = "/apis/plugin.api.svc.run/v1alpha1/plugins/example/stats"
	envelope = `"apiVersion":"people.example.com/v1alpha1","kind":"Person"`
)

// diskOnly skips a test that is about the disk backend (its data
// directory, its log, its admin reset command) on the etcd pass of the
// backend matrix.
func diskOnly(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(servertest.EtcdEnv) != "" {
		t.Skip("disk backend only: " + why)
	}
}

type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	stdout *bytes.Buffer
	done   chan struct{}
}

// syncBuffer is written by exec's copying goroutine and read by the test;
// the buffer is not embedded, so io.Copy cannot reach its ReadFrom and
// bypass the lock.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// run starts the binary on dir and waits until /readyz answers 200.
func run(t *testing.T, dir string, env ...string) *server {
	t.Helper()
	return runArgs(t, dir, nil, env...)
}

// runArgs is run with more command-line flags.
func runArgs(t *testing.T, dir string, args []string, env ...string) *server {
	t.Helper()
	addr := freeAddr(t)
	store := []string{"--data-dir", dir}
	if ep := os.Getenv(servertest.EtcdEnv); ep != "" {
		store = []string{"--etcd-endpoints", ep, "--etcd-prefix", servertest.EtcdPrefix(dir)}
	}
	cmd := exec.Command(binary, append(append([]string{"--addr", addr}, store...), args...)...)
	cmd.Env = append(os.Environ(), env...)
	out := &bytes.Buffer{}
	stdout := &syncBuffer{}
	cmd.Stdout = stdout
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, url: "http://" + addr, stdout: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(s.kill)
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(s.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server on %s not ready: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stdout.mu.Lock()
	out.Write(stdout.buf.Bytes())
	stdout.mu.Unlock()
	return s
}

func (s *server) kill() {
	select {
	case <-s.done:
	default:
		s.cmd.Process.Kill()
		<-s.done
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		s.t.Fatal("server did not stop on SIGTERM")
	}
}

type req struct {
	method, path, body, user, pw, ct string
}

func (s *server) do(r req) (int, map[string]any) {
	s.t.Helper()
	hr, err := http.NewRequest(r.method, s.url+r.path, strings.NewReader(r.body))
	if err != nil {
		s.t.Fatal(err)
	}
	if r.user != "" {
		hr.SetBasicAuth(r.user, r.pw)
	}
	ct := r.ct
	if ct == "" {
		ct = "application/json"
	}
	hr.Header.Set("Content-Type", ct)
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var v map[string]any
	_ = json.Unmarshal(b, &v)
	return res.StatusCode, v
}

func admin(r req) req { r.user, r.pw = "admin", adminPW; return r }

// eventually polls a request until it answers want (role and binding
// changes reach access control a moment after they are acknowledged).
func (s *server) eventually(r req, want int) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, body := s.do(r)
		if got == want {
			return body
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s %s as %q = %d %v, want %d", r.method, r.path, r.user, got, body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func person(name, display, friend string) string {
	f := ""
	if friend != "" {
		f = `,"friend":"` + friend + `"`
	}
	return `{` + envelope + `,"metadata":{"name":"` + name + `"},"spec":{"name":"` + display + `"` + f + `}}`
}

func TestQuickStart(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)
	if strings.Contains(s.stdout.String(), adminPW) {
		t.Errorf("the chosen admin password was printed")
	}
	// Ready means the plugin's templates apply already: the public
	// greeting answers anonymous callers (404: no such person yet).
	if st, _ := s.do(req{method: "GET", path: fmt.Sprintf(greeting, "ann")}); st != 404 {
		t.Fatalf("anonymous greeting right after ready = %d, want 404", st)
	}
	if st, _ := s.do(req{method: "GET", path: persons}); st != 401 {
		t.Fatalf("anonymous list = %d, want 401", st)
	}
	if st, body := s.do(admin(req{method: "POST", path: persons, body: person("ann", "Ann", "")})); st != 201 {
		t.Fatalf("admin create = %d %v", st, body)
	}
	// A user with no roles is signed in but refused.
	if st, body := s.do(admin(req{method: "POST", path: console + "/users", body: `{"name":"bob","displayName":"Bob","password":"bob-secret-1"}`})); st != 201 {
		t.Fatalf("create bob = %d %v", st, body)
	}
	bob := func(r req) req { r.user, r.pw = "bob", "bob-secret-1"; return r }
	if st, _ := s.do(bob(req{method: "GET", path: persons})); st != 403 {
		t.Fatalf("bob list without roles = %d, want 403", st)
	}

	// Watch as admin before anything changes.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+persons+"?watch=true", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Basic " + basic("admin", adminPW)}}})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer ws.CloseNow()

	// The view template: 200 on reads, 403 on writes.
	if st, body := s.do(admin(req{method: "POST", path: console + "/users/bob/permissions", body: `{"roles":["example-role-view-persons"]}`})); st != 200 {
		t.Fatalf("grant view = %d %v", st, body)
	}
	s.eventually(bob(req{method: "GET", path: persons}), 200)
	if st, _ := s.do(bob(req{method: "POST", path: persons, body: person("bobs", "B", "")})); st != 403 {
		t.Fatalf("bob create with view only = %d, want 403", st)
	}
	_, perms := s.do(bob(req{method: "GET", path: console + "/users/-/permissions"}))
	if ui, _ := json.Marshal(perms["uiPermissions"]); string(ui) != `["plugin:example:person:view"]` {
		t.Errorf("bob's uiPermissions = %s", ui)
	}
	// The manage template brings view along (dependency).
	s.do(admin(req{method: "POST", path: console + "/users/bob/permissions", body: `{"roles":["example-role-manage-persons"]}`}))
	s.eventually(bob(req{method: "POST", path: persons, body: person("carl", "Carl", "ann")}), 201)
	if st, _ := s.do(bob(req{method: "GET", path: persons + "/carl"})); st != 200 {
		t.Errorf("bob get with manage (depends on view) = %d", st)
	}

	// The watch saw carl created.
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("watch read: %v", err)
		}
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"object"`
		}
		json.Unmarshal(msg, &ev)
		if ev.Type == "ADDED" && ev.Object.Metadata.Name == "carl" {
			break
		}
	}

	// Custom APIs: the greeting is public (aggregated into anonymous),
	// the legacy stats route is for the super administrator only.
	if st, body := s.do(req{method: "GET", path: fmt.Sprintf(greeting, "ann")}); st != 200 || body["greeting"] != "Hello, Ann!" {
		t.Errorf("anonymous greeting = %d %v", st, body)
	}
	if st, body := s.do(req{method: "GET", path: fmt.Sprintf(greeting, "nobody")}); st != 404 || body["status"] != float64(404) {
		t.Errorf("greeting of an unknown person = %d %v", st, body)
	}
	if st, _ := s.do(req{method: "GET", path: stats}); st != 401 {
		t.Errorf("anonymous stats = %d, want 401", st)
	}
	if st, _ := s.do(bob(req{method: "GET", path: stats})); st != 403 {
		t.Errorf("bob stats = %d, want 403", st)
	}
	if st, body := s.do(admin(req{method: "GET", path: stats})); st != 200 || body["persons"] != float64(2) {
		t.Errorf("admin stats = %d %v", st, body)
	}
	// The controller counted carl's friendship.
	s.eventuallyFriendCount("ann", 1)

	// Documentation is public.
	for _, p := range []string{"/openapi.json", "/swagger-ui/", "/healthz", "/readyz"} {
		if st, _ := s.do(req{method: "GET", path: p}); st != 200 {
			t.Errorf("anonymous GET %s = %d", p, st)
		}
	}
	res, err := http.Get(s.url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	loader := openapi3.NewLoader()
	if parsed, err := loader.LoadFromData(raw); err != nil {
		t.Errorf("/openapi.json does not load: %v", err)
	} else if err := parsed.Validate(loader.Context); err != nil {
		t.Errorf("/openapi.json is not a valid OpenAPI 3 document: %v", err)
	}
	_, doc := s.do(req{method: "GET", path: "/openapi.json"})
	paths, _ := doc["paths"].(map[string]any)
	for _, p := range []string{persons, persons + "/{name}", "/apis/api.people.example.com/v1alpha1/persons/{name}/greeting", stats, "/api/v1alpha1/roles",
		"/apis/content.svc.run/v1alpha1/posts", "/apis/uc.api.content.svc.run/v1alpha1/posts/{name}/publish",
		// The console API, and the version-only route's mount under the group Halo uses.
		console + "/users", console + "/users/{name}/permissions", console + "/users/{name}/personalaccesstokens/{token}/revocation",
		strings.Replace(stats, "/plugin.api.", "/api.plugin.", 1)} {
		if _, ok := paths[p]; !ok {
			t.Errorf("/openapi.json lacks %s", p)
		}
	}
}

func basic(user, pw string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))
}

func (s *server) eventuallyFriendCount(name string, want float64) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := s.do(admin(req{method: "GET", path: persons + "/" + name}))
		st, _ := body["status"].(map[string]any)
		if st["friendCount"] == want {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s friendCount = %v, want %v", name, st["friendCount"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPluginStopAndStartKeepsData(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)
	s.do(admin(req{method: "POST", path: persons, body: person("ann", "Ann", "")}))
	if st, body := s.do(admin(req{method: "PATCH", path: "/api/v1alpha1/plugins/example", body: `{"spec":{"enabled":false}}`, ct: "application/merge-patch+json"})); st != 200 {
		t.Fatalf("disable = %d %v", st, body)
	}
	s.eventually(admin(req{method: "GET", path: persons + "/ann"}), 404)
	for _, p := range []string{fmt.Sprintf(greeting, "ann"), stats, "/api/v1alpha1/roles/example-role-view-persons"} {
		s.eventually(admin(req{method: "GET", path: p}), 404)
	}
	// The phase is recorded after the routes go, so it may lag them briefly.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, plug := s.do(admin(req{method: "GET", path: "/api/v1alpha1/plugins/example"}))
		st, _ := plug["status"].(map[string]any)
		if st["phase"] == "STOPPED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("phase = %v, want STOPPED", st["phase"])
		}
	}
	s.do(admin(req{method: "PATCH", path: "/api/v1alpha1/plugins/example", body: `{"spec":{"enabled":true}}`, ct: "application/merge-patch+json"}))
	body := s.eventually(admin(req{method: "GET", path: persons + "/ann"}), 200)
	if body["spec"].(map[string]any)["name"] != "Ann" {
		t.Errorf("ann after the plugin restarted = %v", body)
	}
	s.eventually(req{method: "GET", path: fmt.Sprintf(greeting, "ann")}, 200)
}

func TestFriendCountUnderConcurrentEdits(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)
	const n = 12
	name := func(i int) string { return fmt.Sprintf("p%02d", i) }
	for i := range n {
		friend := ""
		if i < 2 {
			friend = "late"
		}
		if st, body := s.do(admin(req{method: "POST", path: persons, body: person(name(i), "P", friend)})); st != 201 {
			t.Fatalf("create = %d %v", st, body)
		}
	}
	// A Person named before it exists is created with its count.
	st, body := s.do(admin(req{method: "POST", path: persons, body: person("late", "L", "")}))
	if status, _ := body["status"].(map[string]any); st != 201 || status["friendCount"] != 2.0 {
		t.Fatalf("create late = %d %v, want 201 with status.friendCount 2", st, body)
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range 25 {
				who, friend := name(rng.IntN(n)), name(rng.IntN(n))
				patch := `{"spec":{"friend":"` + friend + `"}}`
				if rng.IntN(5) == 0 {
					patch = `{"spec":{"friend":null}}`
				}
				// A merge patch retries version conflicts server-side.
				s.do(admin(req{method: "PATCH", path: persons + "/" + who, body: patch, ct: "application/merge-patch+json"}))
			}
		}()
	}
	wg.Wait()
	// Recount by brute force and wait for the controller to agree.
	_, list := s.do(admin(req{method: "GET", path: persons}))
	want := map[string]float64{}
	for _, it := range list["items"].([]any) {
		spec := it.(map[string]any)["spec"].(map[string]any)
		if f, ok := spec["friend"].(string); ok {
			want[f]++
		}
	}
	for i := range n {
		s.eventuallyFriendCount(name(i), want[name(i)])
	}
}

func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	dir := t.TempDir()
	s := run(t, dir, "SVC_ADMIN_PASSWORD="+adminPW)
	var acked []string
	for i := range 40 {
		n := fmt.Sprintf("k%02d", i)
		if st, _ := s.do(admin(req{method: "POST", path: persons, body: person(n, "K", "")})); st == 201 {
			acked = append(acked, n)
		}
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s2 := run(t, dir, "SVC_ADMIN_PASSWORD=ignored-after-first-start")
	for _, n := range acked {
		if st, _ := s2.do(admin(req{method: "GET", path: persons + "/" + n})); st != 200 {
			t.Errorf("acknowledged %s after kill -9 = %d", n, st)
		}
	}
	s2.stop()
}

func TestGeneratedAdminPasswordIsPrintedOnce(t *testing.T) {
	dir := t.TempDir()
	s := run(t, dir, "SVC_ADMIN_PASSWORD=")
	out := s.stdout.String()
	i := strings.Index(out, "with password ")
	if i < 0 {
		t.Fatalf("first start printed no password: %q", out)
	}
	pw := strings.Fields(out[i+len("with password "):])[0]
	if st, _ := s.do(req{method: "GET", path: persons, user: "admin", pw: pw}); st != 200 {
		t.Fatalf("printed password does not work: %d", st)
	}
	s.stop()
	s2 := run(t, dir, "SVC_ADMIN_PASSWORD=")
	if strings.Contains(s2.stdout.String(), pw) || strings.Contains(s2.stdout.String(), "password") {
		t.Errorf("second start printed a password: %q", s2.stdout.String())
	}
}

// TestHaloBrand runs the binary under --brand-domain halo.run (through
// SVC_BRAND_DOMAIN): every brand-bearing label, group and path follows.
func TestHaloBrand(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW, "SVC_BRAND_DOMAIN=halo.run")
	_, role := s.do(admin(req{method: "GET", path: "/api/v1alpha1/roles/example-role-public-greeting"}))
	labels, _ := role["metadata"].(map[string]any)["labels"].(map[string]any)
	for _, k := range []string{"halo.run/role-template", "rbac.authorization.halo.run/aggregate-to-anonymous", "plugin.halo.run/plugin-name"} {
		if labels[k] == nil {
			t.Errorf("the example's public template lacks %s: %v", k, labels)
		}
	}
	for _, p := range []string{
		"/apis/api.console.halo.run/v1alpha1/users/-",
		"/apis/plugin.api.halo.run/v1alpha1/plugins/example/stats",
		"/apis/api.plugin.halo.run/v1alpha1/plugins/example/stats",
		"/apis/content.halo.run/v1alpha1/posts",
		"/apis/uc.api.content.halo.run/v1alpha1/posts",
	} {
		if st, body := s.do(admin(req{method: "GET", path: p})); st != 200 {
			t.Errorf("GET %s under halo.run = %d %v", p, st, body)
		}
	}
	// The aggregation label under the configured brand makes the greeting public.
	if st, _ := s.do(req{method: "GET", path: fmt.Sprintf(greeting, "nobody")}); st != 404 {
		t.Errorf("anonymous greeting under halo.run = %d, want 404", st)
	}
	if st, _ := s.do(admin(req{method: "GET", path: "/apis/api.console.svc.run/v1alpha1/users/-"})); st != 404 {
		t.Errorf("the svc.run console path under halo.run = %d, want 404", st)
	}
}

// TestHelpAndBadFlags: --help prints the flags and exits 0; an unknown
// flag exits 1 with the usage.
func TestHelpAndBadFlags(t *testing.T) {
	out, err := exec.Command(binary, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-addr") || !strings.Contains(string(out), "-data-dir") {
		t.Errorf("--help: %v\n%s", err, out)
	}
	out, err = exec.Command(binary, "--no-such-flag").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "-addr") {
		t.Errorf("unknown flag: %v\n%s", err, out)
	}
}
