package console

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// These tests drive the console in headless Chromium against the example
// server, built and started here as an operator would: one server and one
// browser for the package, a new tab per scenario.

const adminPW = "console-admin-password"

var (
	binary   string // the example server, built once
	chromium string // the browser, or "" to skip
)

func TestMain(m *testing.M) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		fmt.Println("console browser tests skipped: chromium not found on PATH (apt-get install chromium)")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "console-browser")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "example-server")
	build := exec.Command("go", "build", "-o", binary, "./example-plugin/cmd/example-server")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build example-server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func needBrowser(t *testing.T) {
	t.Helper()
	if chromium == "" {
		t.Skip("console browser tests skipped: chromium not found on PATH (apt-get install chromium)")
	}
}

type server struct {
	url string
}

func startServer(t *testing.T, env ...string) *server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(binary, "--addr", addr, "--data-dir", t.TempDir())
	cmd.Env = append(append(os.Environ(), "SVC_ADMIN_PASSWORD="+adminPW), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := &server{url: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(s.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server on %s not ready: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// do calls the API; auth is "user:password" (Basic) or "Bearer …".
func (s *server) do(t *testing.T, method, path, auth string, body any, hdr ...string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if strings.HasPrefix(auth, "Bearer ") {
		req.Header.Set("Authorization", auth)
	} else if auth != "" {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(auth)))
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, res.Header
}

func (s *server) must(t *testing.T, method, path string, body any, want int) map[string]any {
	t.Helper()
	code, out, _ := s.do(t, method, path, "admin:"+adminPW, body)
	if code != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, code, out, want)
	}
	return out
}

const persons = "/apis/people.example.com/v1alpha1/persons"

func person(name string, age int, labels map[string]string) map[string]any {
	return map[string]any{"apiVersion": "people.example.com/v1alpha1", "kind": "Person",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     map[string]any{"name": strings.ToUpper(name), "age": age}}
}

// browser starts one headless Chromium for the test; tab opens a new tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 860),
	}
	// Chromium now and then exits before it serves DevTools when started
	// right after another one closed (seen once in CI: "chrome failed to
	// start", the same test passing alone): that is the browser's start,
	// not the console under test, so it gets three tries.
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		actx, cancel := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(t.TempDir()))...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err = chromedp.Do(bctx); err == nil {
			t.Cleanup(cancel)
			t.Cleanup(bcancel)
			return bctx
		}
		bcancel()
		cancel()
		t.Logf("start chromium, attempt %d: %v", attempt, err)
		time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
	}
	t.Fatalf("start chromium: %v", err)
	return nil
}

func tab(t *testing.T, bctx context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	// Open the tab on a context without a deadline: the tab lives as long
	// as its first call's context, and each step has its own deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

func tid(id string) string { return `[data-testid="` + id + `"]` }

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(step, actions...); err != nil {
		fatal(t, ctx, err)
	}
}

// val runs one action and returns its value.
func val[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(step, a)
	if err != nil {
		fatal(t, ctx, err)
	}
	return v
}

// stepTimeout bounds one call, so a missing element fails that scenario
// quickly and the page's text can still be read.
const stepTimeout = 30 * time.Second

func fatal(t *testing.T, ctx context.Context, err error) {
	t.Helper()
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
	t.Fatalf("browser: %v\npage text: %.2000s", err, page)
}

// eval runs a script for its effect.
func eval(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](expr)(ctx, tg)
		return chromedp.Void{}, err
	}
}

func signIn(t *testing.T, ctx context.Context, s *server, user, pw string) {
	t.Helper()
	run(t, ctx, chromedp.Navigate(s.url+"/console/"),
		chromedp.WaitVisible(tid("username")),
		chromedp.SendKeys(tid("username"), user), chromedp.SendKeys(tid("password"), pw),
		chromedp.Click(tid("signin-submit")), chromedp.WaitVisible(tid("whoami")))
}

func goTo(t *testing.T, ctx context.Context, hash string, wait string) {
	t.Helper()
	run(t, ctx, eval(`location.hash = `+js(hash)), chromedp.WaitVisible(wait))
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// setSelect picks a value in the n-th select of a test id and tells Preact.
func setSelect(id string, n int, value string) chromedp.Action[chromedp.Void] {
	return eval(fmt.Sprintf(`(() => { const e = document.querySelectorAll(%s)[%d]; e.value = %s; e.dispatchEvent(new Event('change', {bubbles: true})); })()`,
		js(tid(id)), n, js(value)))
}

// rows returns the names in the list, polling until want holds.
func waitRows(t *testing.T, ctx context.Context, want []string) {
	t.Helper()
	var got []string
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		got = val(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="row"]')].map(r => r.dataset.name)`))
		if slices.Equal(got, want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("rows %v, want %v", got, want)
}

func visible(t *testing.T, ctx context.Context, id string) bool {
	t.Helper()
	return val(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+js(tid(id))+`).length`)) > 0
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png := val(t, ctx, chromedp.FullScreenshot(100))
	for _, d := range []string{dir, os.Getenv("CONSOLE_SCREENSHOTS")} {
		if d == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return val(t, ctx, chromedp.Text(sel))
}

func TestConsole(t *testing.T) {
	needBrowser(t)
	s := startServer(t)
	bctx := browser(t)
	shots := t.TempDir()
	t.Logf("screenshots in %s", shots)
	s.must(t, "POST", persons, person("p-a", 30, map[string]string{"team": "blue"}), 201)
	s.must(t, "POST", persons, person("p-b", 20, map[string]string{"team": "blue"}), 201)
	s.must(t, "POST", persons, person("p-c", 40, map[string]string{"team": "red"}), 201)

	t.Run("first screen renders fast and bad credentials show the problem", func(t *testing.T) {
		ctx := tab(t, bctx)
		run(t, ctx, chromedp.Navigate(s.url+"/console/"), chromedp.WaitVisible(tid("signin")))
		ms := val(t, ctx, chromedp.Evaluate[float64](`window.__consoleRendered`))
		t.Logf("first screen rendered %.0f ms after navigation start", ms)
		if ms <= 0 || ms > 1000 {
			t.Errorf("first screen took %.0f ms, want under 1000", ms)
		}
		screenshot(t, ctx, shots, "signin")
		run(t, ctx, chromedp.SendKeys(tid("username"), "admin"), chromedp.SendKeys(tid("password"), "wrong"),
			chromedp.Click(tid("signin-submit")), chromedp.WaitVisible(tid("problem")))
		if got := text(t, ctx, tid("problem")); !strings.Contains(got, "credentials are not valid") {
			t.Errorf("problem shown %q", got)
		}
		// The page's requests get no Basic challenge, so the browser shows
		// no dialog of its own; other clients still get it.
		code, _, h := s.do(t, "GET", "/apis/api.console.svc.run/v1alpha1/users/-", "admin:wrong", nil, "X-Requested-With", "XMLHttpRequest")
		if code != 401 || h.Get("WWW-Authenticate") != "" {
			t.Errorf("script request: %d, WWW-Authenticate %q", code, h.Get("WWW-Authenticate"))
		}
		if code, _, h := s.do(t, "GET", "/apis/api.console.svc.run/v1alpha1/users/-", "admin:wrong", nil); code != 401 || h.Get("WWW-Authenticate") == "" {
			t.Errorf("plain request: %d, WWW-Authenticate %q", code, h.Get("WWW-Authenticate"))
		}
	})

	admin := tab(t, bctx)
	signIn(t, admin, s, "admin", adminPW)
	if got := text(t, admin, tid("whoami")); !strings.Contains(got, "admin") {
		t.Fatalf("whoami %q", got)
	}
	screenshot(t, admin, shots, "home")
	const list = "#/m/people.example.com/v1alpha1/persons"

	t.Run("list persons with a label selector and a sort, live through the watch", func(t *testing.T) {
		goTo(t, admin, list, tid("list"))
		waitRows(t, admin, []string{"p-c", "p-b", "p-a"}) // newest first
		run(t, admin, chromedp.SendKeys(tid("label-selector"), "team=blue"),
			setSelect("sort", 0, "spec.age"), setSelect("sort-dir", 0, "asc"), chromedp.Click(tid("apply")))
		waitRows(t, admin, []string{"p-b", "p-a"})
		if got := text(t, admin, tid("paging")); !strings.Contains(got, "2 total") {
			t.Errorf("paging %q", got)
		}
		run(t, admin, chromedp.WaitVisible(tid("live")))
		s.must(t, "POST", persons, person("p-d", 25, map[string]string{"team": "blue"}), 201)
		waitRows(t, admin, []string{"p-b", "p-d", "p-a"})
		s.must(t, "DELETE", persons+"/p-b", nil, 200)
		waitRows(t, admin, []string{"p-d", "p-a"})
		screenshot(t, admin, shots, "list")
		// A field term from the index dropdowns narrows it further.
		run(t, admin, chromedp.Click(tid("add-field")), chromedp.WaitVisible(tid("field-value")),
			setSelect("field-name", 0, "spec.age"), setSelect("field-op", 0, ">="), chromedp.SendKeys(tid("field-value"), "26"),
			chromedp.Click(tid("apply")))
		waitRows(t, admin, []string{"p-a"})
	})

	t.Run("create a person through the form", func(t *testing.T) {
		goTo(t, admin, list+"/-new", tid("f-metadata.name"))
		run(t, admin, chromedp.Click(tid("tab-json")), chromedp.WaitVisible(tid("raw")))
		raw := val(t, admin, chromedp.Value(tid("raw")))
		run(t, admin, chromedp.Click(tid("tab-form")), chromedp.WaitVisible(tid("f-spec.name")))
		if !strings.Contains(raw, `"apiVersion": "people.example.com/v1alpha1"`) || !strings.Contains(raw, `"kind": "Person"`) {
			t.Errorf("new object not pre-filled: %s", raw)
		}
		run(t, admin, chromedp.SendKeys(tid("f-metadata.name"), "p-form"), chromedp.SendKeys(tid("f-spec.name"), "Form Person"),
			chromedp.SendKeys(tid("f-spec.age"), "33"), setSelect("f-spec.gender", 0, "FEMALE"),
			chromedp.SendKeys(tid("f-spec.friend"), "p-a"), chromedp.SendKeys(tid("f-metadata.labels"), "team=green"))
		screenshot(t, admin, shots, "create")
		run(t, admin, chromedp.Click(tid("save")), chromedp.WaitVisible(tid("delete")))
		// The friend field is indexed and names a Person: a link to it.
		if href := val(t, admin, chromedp.Evaluate[string](`document.querySelector('[data-testid="ref-spec.friend"]').getAttribute('href')`)); href != list+"/p-a" {
			t.Errorf("friend link %q", href)
		}
		got := s.must(t, "GET", persons+"/p-form", nil, 200)
		spec := got["spec"].(map[string]any)
		if spec["age"] != float64(33) || spec["gender"] != "FEMALE" || spec["name"] != "Form Person" ||
			got["metadata"].(map[string]any)["labels"].(map[string]any)["team"] != "green" {
			t.Errorf("created %v", got)
		}
	})

	t.Run("a bad value shows the field's error", func(t *testing.T) {
		goTo(t, admin, list+"/-new", tid("f-metadata.name"))
		run(t, admin, chromedp.SendKeys(tid("f-metadata.name"), "p-bad"), chromedp.SendKeys(tid("f-spec.name"), "Bad"),
			chromedp.SendKeys(tid("f-spec.age"), "200"), chromedp.Click(tid("save")), chromedp.WaitVisible(tid("err-spec.age")))
		if got := text(t, admin, tid("err-spec.age")); !strings.Contains(got, "150") {
			t.Errorf("field error %q", got)
		}
		screenshot(t, admin, shots, "field-error")
	})

	t.Run("edit with a stale version shows the conflict", func(t *testing.T) {
		goTo(t, admin, list+"/p-a", tid("f-spec.age"))
		p := s.must(t, "GET", persons+"/p-a", nil, 200)
		p["spec"].(map[string]any)["age"] = 31
		s.must(t, "PUT", persons+"/p-a", p, 200)
		run(t, admin, chromedp.SetValue(tid("f-spec.age"), ""), chromedp.SendKeys(tid("f-spec.age"), "5"), chromedp.Click(tid("save")), chromedp.WaitVisible(tid("conflict")))
		screenshot(t, admin, shots, "conflict")
		run(t, admin, chromedp.Click(tid("reload")), chromedp.WaitNotPresent(tid("conflict")), chromedp.WaitVisible(tid("f-spec.age")))
		age := val(t, admin, chromedp.Value(tid("f-spec.age")))
		if age != "31" {
			t.Errorf("after reload age %q, want 31", age)
		}
		run(t, admin, chromedp.SetValue(tid("f-spec.age"), ""), chromedp.SendKeys(tid("f-spec.age"), "32"),
			chromedp.Click(tid("save")), chromedp.WaitVisible(tid("saved")))
		if got := s.must(t, "GET", persons+"/p-a", nil, 200); got["spec"].(map[string]any)["age"] != float64(32) {
			t.Errorf("saved %v", got["spec"])
		}
	})

	t.Run("save through the raw JSON editor", func(t *testing.T) {
		goTo(t, admin, list+"/p-d", tid("tab-json"))
		run(t, admin, chromedp.Click(tid("tab-json")), chromedp.WaitVisible(tid("raw")),
			eval(`(() => { const e = document.querySelector('[data-testid="raw"]'); const o = JSON.parse(e.value);
				o.spec.name = 'Edited as JSON'; o.metadata.annotations = {note: 'raw'};
				e.value = JSON.stringify(o); e.dispatchEvent(new Event('input', {bubbles: true})); })()`),
			chromedp.Click(tid("save")), chromedp.WaitVisible(tid("saved")))
		got := s.must(t, "GET", persons+"/p-d", nil, 200)
		if got["spec"].(map[string]any)["name"] != "Edited as JSON" || got["metadata"].(map[string]any)["annotations"].(map[string]any)["note"] != "raw" {
			t.Errorf("saved %v", got)
		}
	})

	t.Run("a viewer sees no create, edit or delete controls and cannot reach them", func(t *testing.T) {
		s.must(t, "POST", "/apis/api.console.svc.run/v1alpha1/users",
			map[string]any{"name": "viewer", "password": "viewer-password-1", "roles": []string{"example-role-view-persons"}}, 201)
		ctx := tab(t, bctx)
		signIn(t, ctx, s, "viewer", "viewer-password-1")
		run(t, ctx, chromedp.WaitVisible(tid("nav-persons")))
		if visible(t, ctx, "nav-access") || visible(t, ctx, "nav-plugins") {
			t.Error("viewer sees access or plugins")
		}
		goTo(t, ctx, list, tid("list"))
		waitRows(t, ctx, []string{"p-form", "p-d", "p-c", "p-a"})
		if visible(t, ctx, "create") {
			t.Error("viewer sees create")
		}
		goTo(t, ctx, list+"/p-a", tid("read-only"))
		if visible(t, ctx, "save") || visible(t, ctx, "delete") {
			t.Error("viewer sees save or delete")
		}
		goTo(t, ctx, list+"/-new", tid("not-allowed"))
		screenshot(t, ctx, shots, "viewer-not-allowed")
	})

	t.Run("delete asks for a confirmation", func(t *testing.T) {
		goTo(t, admin, list+"/p-form", tid("delete"))
		run(t, admin, chromedp.Click(tid("delete")), chromedp.WaitVisible(tid("confirm-delete")))
		s.must(t, "GET", persons+"/p-form", nil, 200) // not before the confirmation
		run(t, admin, chromedp.Click(tid("confirm-delete")), chromedp.WaitVisible(tid("list")))
		s.must(t, "GET", persons+"/p-form", nil, 404)
	})

	t.Run("grant a template in the console and the user's console shows the model", func(t *testing.T) {
		s.must(t, "POST", "/apis/api.console.svc.run/v1alpha1/users",
			map[string]any{"name": "newbie", "password": "newbie-password-1", "roles": []string{}}, 201)
		ctx := tab(t, bctx)
		signIn(t, ctx, s, "newbie", "newbie-password-1")
		run(t, ctx, chromedp.WaitVisible(tid("no-roles")))
		if visible(t, ctx, "nav-persons") {
			t.Fatal("newbie sees persons before the grant")
		}
		goTo(t, admin, "#/access", tid("users"))
		run(t, admin, chromedp.Click(`[data-testid="user-row"][data-name="newbie"] `+tid("user-roles")),
			chromedp.WaitVisible(tid("grant-example-role-view-persons")), chromedp.Click(tid("grant-example-role-view-persons")))
		screenshot(t, admin, shots, "access")
		run(t, admin, chromedp.Click(tid("grant-save")), chromedp.WaitNotPresent(tid("grant")))
		ctx = tab(t, bctx)
		signIn(t, ctx, s, "newbie", "newbie-password-1")
		run(t, ctx, chromedp.WaitVisible(tid("nav-persons")))
	})

	t.Run("create a user, set its password and delete it", func(t *testing.T) {
		goTo(t, admin, "#/access", tid("new-user"))
		run(t, admin, chromedp.SendKeys(tid("new-user-name"), "carol"), chromedp.SendKeys(tid("new-user-password"), "carol-password-1"),
			chromedp.Click(tid("new-user-submit")), chromedp.WaitVisible(`[data-testid="user-row"][data-name="carol"]`))
		if code, _, _ := s.do(t, "GET", "/apis/api.console.svc.run/v1alpha1/users/-", "carol:carol-password-1", nil); code != 200 {
			t.Fatalf("carol signs in: %d", code)
		}
		row := `[data-testid="user-row"][data-name="carol"] `
		run(t, admin, chromedp.SendKeys(row+`input[type="password"]`, "carol-password-2"), chromedp.Click(row+tid("set-password")))
		deadline := time.Now().Add(10 * time.Second)
		for {
			code, _, _ := s.do(t, "GET", "/apis/api.console.svc.run/v1alpha1/users/-", "carol:carol-password-2", nil)
			if code == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("new password: %d", code)
			}
			time.Sleep(100 * time.Millisecond)
		}
		run(t, admin, chromedp.Click(row+tid("delete-user")), chromedp.WaitNotPresent(`[data-testid="user-row"][data-name="carol"]`))
		s.must(t, "GET", "/api/v1alpha1/users/carol", nil, 404)
	})

	t.Run("create and revoke a token", func(t *testing.T) {
		goTo(t, admin, "#/tokens", tid("token-name"))
		run(t, admin, chromedp.SendKeys(tid("token-name"), "t-ui"), chromedp.Click(tid("token-create")),
			chromedp.WaitVisible(tid("new-token")))
		token := val(t, admin, chromedp.Text(tid("new-token")))
		if code, _, _ := s.do(t, "GET", "/apis/api.console.svc.run/v1alpha1/users/-", "Bearer "+token, nil); code != 200 {
			t.Fatalf("new token: %d", code)
		}
		screenshot(t, admin, shots, "tokens")
		row := `[data-testid="token-row"][data-name="t-ui"] `
		run(t, admin, chromedp.Click(row+tid("revoke")), chromedp.WaitNotPresent(row+tid("revoke")))
		if got := text(t, admin, row+tid("token-state")); got != "revoked" {
			t.Errorf("state %q", got)
		}
		if code, _, _ := s.do(t, "GET", "/apis/api.console.svc.run/v1alpha1/users/-", "Bearer "+token, nil); code != 401 {
			t.Errorf("revoked token: %d, want 401", code)
		}
		run(t, admin, chromedp.Click(row+tid("delete-token")), chromedp.WaitNotPresent(row))
	})

	t.Run("stop and start the example plugin", func(t *testing.T) {
		goTo(t, admin, "#/plugins", tid("matrix"))
		row := `[data-testid="plugin-row"][data-name="example"] `
		waitText(t, admin, row+tid("plugin-phase"), "STARTED")
		screenshot(t, admin, shots, "plugins")
		run(t, admin, chromedp.Click(row+tid("plugin-stop")))
		waitText(t, admin, row+tid("plugin-phase"), "STOPPED")
		run(t, admin, chromedp.Click(row+tid("plugin-start")))
		waitText(t, admin, row+tid("plugin-phase"), "STARTED")
		s.must(t, "GET", persons+"/p-a", nil, 200)
	})

	// The page's pure helpers, in the browser that runs them: schema
	// defaults for a new object, and what permissions show.
	t.Run("schema defaults and permission checks", func(t *testing.T) {
		got := val(t, admin, chromedp.Evaluate[map[string]any](`import('/console/schema.js').then(m => {
			const doc = {components: {schemas: {Inner: {type: 'object', properties: {b: {type: 'integer', default: 3}}}}}};
			const schema = {type: 'object', properties: {a: {type: 'string', default: 'x'}, n: {$ref: '#/components/schemas/Inner'},
				t: {type: 'array', items: {type: 'string'}, default: ['p']}, c: {type: 'string'}}};
			const tpl = (ui) => ({permissions: [{metadata: {labels: {'plugin.svc.run/plugin-name': 'example'}},
				rules: [{apiGroups: ['people.example.com'], resources: ['persons'], verbs: ['get', 'list']},
					{apiGroups: ['people.example.com'], resources: ['persons'], resourceNames: ['p-a'], verbs: ['update']}]}], uiPermissions: ui});
			const p = tpl([]);
			return {
				defaults: m.defaults(doc, schema),
				list: m.can(p, 'list', 'people.example.com', 'persons'),
				create: m.can(p, 'create', 'people.example.com', 'persons'),
				updateNamed: m.can(p, 'update', 'people.example.com', 'persons', 'p-a'),
				updateOther: m.can(p, 'update', 'people.example.com', 'persons', 'p-b'),
				uiNone: m.uiAllows(p, 'people.example.com', 'plugin.svc.run/plugin-name'),
				uiPlugin: m.uiAllows(tpl(['plugin:example:person:view']), 'people.example.com', 'plugin.svc.run/plugin-name'),
				uiStar: m.uiAllows(tpl(['*']), 'people.example.com', 'plugin.svc.run/plugin-name'),
				uiOtherGroup: m.uiAllows(p, 'content.svc.run', 'plugin.svc.run/plugin-name'),
			};
		})`, chromedp.EvalAwaitPromise))
		want := map[string]any{
			"defaults": map[string]any{"a": "x", "n": map[string]any{"b": float64(3)}, "t": []any{"p"}},
			"list":     true, "create": false, "updateNamed": true, "updateOther": false,
			"uiNone": false, "uiPlugin": true, "uiStar": true, "uiOtherGroup": true,
		}
		if js(got) != js(want) {
			t.Errorf("got  %s\nwant %s", js(got), js(want))
		}
	})

	t.Run("sign out forgets the credentials", func(t *testing.T) {
		run(t, admin, chromedp.Click(tid("signout")), chromedp.WaitVisible(tid("signin")))
		stored := val(t, admin, chromedp.Evaluate[int](`localStorage.length + sessionStorage.length + document.cookie.length`))
		if stored != 0 {
			t.Errorf("browser storage holds %d entries", stored)
		}
	})
}

func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		got = val(t, ctx, chromedp.Evaluate[string](`(document.querySelector(`+js(sel)+`) || {}).textContent || ''`))
		if got == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %q, want %q", sel, got, want)
}

// The console builds every path from the server's brand domain.
func TestConsoleBrand(t *testing.T) {
	needBrowser(t)
	s := startServer(t, "SVC_BRAND_DOMAIN=halo.run")
	s.must(t, "POST", persons, person("h-a", 30, map[string]string{"brand": "halo"}), 201)
	ctx := tab(t, browser(t))
	signIn(t, ctx, s, "admin", adminPW)
	goTo(t, ctx, "#/m/people.example.com/v1alpha1/persons", tid("list"))
	waitRows(t, ctx, []string{"h-a"})
	goTo(t, ctx, "#/tokens", tid("token-name"))
	if visible(t, ctx, "problem") {
		t.Errorf("tokens page shows a problem: %s", text(t, ctx, tid("problem")))
	}
}

// A list of many objects pages without loading them all: opt in with
// CONSOLE_LIST_OBJECTS=100000 (it preloads that many persons first).
func TestConsoleLargeList(t *testing.T) {
	needBrowser(t)
	n, _ := strconv.Atoi(os.Getenv("CONSOLE_LIST_OBJECTS"))
	if n <= 0 {
		t.Skip("set CONSOLE_LIST_OBJECTS=100000 to measure the console on a large list")
	}
	s := startServer(t)
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				s.must(t, "POST", persons, person(fmt.Sprintf("big-%06d", i), i%150, map[string]string{"team": "big"}), 201)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("preloaded %d persons in %s", n, time.Since(start).Round(time.Millisecond))
	ctx := tab(t, browser(t))
	signIn(t, ctx, s, "admin", adminPW)
	t0 := time.Now()
	goTo(t, ctx, "#/m/people.example.com/v1alpha1/persons", tid("row"))
	waitText(t, ctx, tid("paging"), fmt.Sprintf("page 1 of %d · %d total", (n+19)/20, n))
	first := time.Since(t0)
	t0 = time.Now()
	run(t, ctx, chromedp.Click(tid("next")))
	waitText(t, ctx, tid("paging"), fmt.Sprintf("page 2 of %d · %d total", (n+19)/20, n))
	second := time.Since(t0)
	t0 = time.Now()
	run(t, ctx, setSelect("sort", 0, "spec.age"), setSelect("sort-dir", 0, "desc"), chromedp.Click(tid("apply")))
	waitText(t, ctx, tid("paging"), fmt.Sprintf("page 1 of %d · %d total", (n+19)/20, n))
	sorted := time.Since(t0)
	t.Logf("%d persons: first page shown in %s, next page in %s, sorted by spec.age in %s",
		n, first.Round(time.Millisecond), second.Round(time.Millisecond), sorted.Round(time.Millisecond))
}
