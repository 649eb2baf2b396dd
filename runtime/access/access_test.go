package access_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/access"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

const (
	persons = "/apis/people.example.com/v1alpha1/persons"
	console = "/apis/api.console.svc.run/v1alpha1"
)

type env struct {
	t   *testing.T
	url string
	out bytes.Buffer
}

func newEnv(t *testing.T, adminPassword string) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	person := storetest.PersonModel()
	st := storetest.New(t, person)
	e := &env{t: t}
	acc, _ := start(t, ctx, st, access.Options{Brand: "svc.run", AdminPassword: adminPassword, Out: &e.out})
	reg := model.NewRegistry()
	for _, m := range append(acc.Models, person) {
		if err := reg.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	a := api.New(api.Options{Store: st, Registry: reg, Guard: acc.Guard.Check})
	acc.Console.Fail = a.Fail
	for m, f := range acc.Routes {
		a.UseRoutes(m, f)
	}
	a.Mount("console", acc.Console.Routes)
	srv := httptest.NewServer(a)
	t.Cleanup(func() { a.Close(); srv.Close() })
	e.url = srv.URL
	return e
}

// start builds access control on st and runs it, as the server's
// access-control step does: New, then Start until the test ends (or stop),
// and on once the resolver has caught up.
func start(t *testing.T, ctx context.Context, st *store.Store, opts access.Options) (acc *access.Access, stop func()) {
	t.Helper()
	acc, err := access.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- acc.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("access control stopped: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	if err := acc.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return acc, stop
}

type call struct {
	method, path, body string
	user, password     string
	bearer             string
	contentType        string
}

func (e *env) do(c call) (int, http.Header, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(c.method, e.url+c.path, strings.NewReader(c.body))
	if err != nil {
		e.t.Fatal(err)
	}
	if c.body != "" {
		ct := c.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var v map[string]any
	_ = json.Unmarshal(b, &v)
	if strings.Contains(string(b), "$2a$") || strings.Contains(string(b), `"password"`) {
		e.t.Errorf("%s %s returned a password: %s", c.method, c.path, b)
	}
	return res.StatusCode, res.Header, v
}

// eventually retries a check until it passes: role changes reach the
// resolver through a watch, a moment after the write is acknowledged.
func (e *env) eventually(what string, c call, status int) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _, body := e.do(c)
		if got == status {
			return body
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: %s %s = %d %v, want %d", what, c.method, c.path, got, body, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const admin, adminPW = "admin", "admin-password-1"

func TestAuthenticationAndAuthorization(t *testing.T) {
	e := newEnv(t, adminPW)
	if e.out.Len() != 0 {
		t.Errorf("a chosen admin password was printed: %q", e.out.String())
	}
	// Public paths and closed ones.
	if st, _, _ := e.do(call{method: "GET", path: "/healthz"}); st != 200 {
		t.Fatalf("anonymous /healthz = %d", st)
	}
	st, h, body := e.do(call{method: "GET", path: persons})
	if st != 401 || h.Get("WWW-Authenticate") != `Basic realm="svc"` || body["status"] != float64(401) {
		t.Fatalf("anonymous list = %d %v %v", st, h, body)
	}
	if st, _, _ := e.do(call{method: "GET", path: "/no/such/path"}); st != 401 {
		t.Fatalf("anonymous unknown path = %d, want 401 (nothing is revealed)", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: persons, user: admin, password: "wrong"}); st != 401 {
		t.Fatalf("bad password = %d", st)
	}
	// Public paths need no credentials, so bad ones do not close them.
	if st, _, _ := e.do(call{method: "GET", path: "/healthz", user: admin, password: "wrong"}); st != 200 {
		t.Fatalf("/healthz with a bad password = %d, want 200 (public)", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: "/no/such/path", user: admin, password: "wrong"}); st != 401 {
		t.Fatalf("unknown path with a bad password = %d, want 401", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: persons, user: admin, password: adminPW}); st != 200 {
		t.Fatalf("admin list = %d", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: "/no/such/path", user: admin, password: adminPW}); st != 404 {
		t.Fatalf("admin unknown path = %d, want 404", st)
	}

	// A console body declared as anything but JSON is refused.
	if st, _, body := e.do(call{method: "POST", path: console + "/users", user: admin, password: adminPW, contentType: "text/plain",
		body: `{"name":"alice","displayName":"Alice","email":"alice@example.com","password":"alice-pw-1"}`}); st != 415 || body["status"] != 415.0 {
		t.Fatalf("create user as text = %d %v, want a 415 problem", st, body)
	}

	// The admin creates a user; nobody sees a password.
	st, h, body = e.do(call{method: "POST", path: console + "/users", user: admin, password: adminPW,
		body: `{"name":"alice","displayName":"Alice","email":"alice@example.com","password":"alice-pw-1"}`})
	if st != 201 || h.Get("Location") == "" {
		t.Fatalf("create user = %d %v", st, body)
	}
	if st, _, _ := e.do(call{method: "GET", path: "/api/v1alpha1/users/alice", user: admin, password: adminPW}); st != 200 {
		t.Fatalf("get user = %d", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: "/api/v1alpha1/users", user: admin, password: adminPW}); st != 200 {
		t.Fatalf("list users = %d", st)
	}
	alice := call{user: "alice", password: "alice-pw-1"}

	// Signed in but granted nothing: 403 on plugin APIs, own account works.
	st, _, body = e.do(call{method: "GET", path: persons, user: alice.user, password: alice.password})
	if st != 403 || body["status"] != float64(403) {
		t.Fatalf("alice list = %d %v", st, body)
	}
	st, _, body = e.do(call{method: "GET", path: console + "/users/-", user: alice.user, password: alice.password})
	if st != 200 || body["user"].(map[string]any)["metadata"].(map[string]any)["name"] != "alice" {
		t.Fatalf("users/- = %d %v", st, body)
	}

	// A role template, granted through the console.
	role := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"view-persons","labels":{"svc.run/role-template":"true"},
		"annotations":{"rbac.authorization.svc.run/ui-permissions":"[\"plugin:example:person:view\"]"}},
		"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get","list"]}]}`
	if st, _, body := e.do(call{method: "POST", path: "/api/v1alpha1/roles", body: role, user: admin, password: adminPW}); st != 201 {
		t.Fatalf("create role = %d %v", st, body)
	}
	if st, _, body := e.do(call{method: "POST", path: console + "/users/alice/permissions", body: `{"roles":["view-persons"]}`, user: admin, password: adminPW}); st != 200 {
		t.Fatalf("grant = %d %v", st, body)
	}
	e.eventually("granted list", call{method: "GET", path: persons, user: alice.user, password: alice.password}, 200)
	if st, _, _ := e.do(call{method: "POST", path: persons, body: `{"metadata":{"name":"x"},"spec":{"name":"X"}}`, user: alice.user, password: alice.password}); st != 403 {
		t.Fatalf("alice create = %d, want 403", st)
	}
	st, _, body = e.do(call{method: "GET", path: console + "/users/-/permissions", user: alice.user, password: alice.password})
	if st != 200 {
		t.Fatalf("permissions = %d %v", st, body)
	}
	if ui, _ := json.Marshal(body["uiPermissions"]); string(ui) != `["plugin:example:person:view"]` {
		t.Errorf("uiPermissions = %s", ui)
	}
	if rs, _ := json.Marshal(body["roles"]); !strings.Contains(string(rs), `"view-persons"`) {
		t.Errorf("roles = %s", rs)
	}

	// No privilege escalation.
	if st, _, _ := e.do(call{method: "POST", path: console + "/users/alice/permissions", body: `{"roles":["super-role"]}`, user: alice.user, password: alice.password}); st != 403 {
		t.Fatalf("self-escalation = %d, want 403", st)
	}

	// Password change: the old one stops working at once.
	if st, _, body := e.do(call{method: "PUT", path: console + "/users/-/password", body: `{"oldPassword":"nope","password":"alice-pw-2"}`, user: alice.user, password: alice.password}); st != 400 {
		t.Fatalf("wrong old password = %d %v", st, body)
	}
	if st, _, body := e.do(call{method: "PUT", path: console + "/users/-/password", body: `{"oldPassword":"alice-pw-1","password":"alice-pw-2"}`, user: alice.user, password: alice.password}); st != 200 {
		t.Fatalf("change password = %d %v", st, body)
	}
	if st, _, _ := e.do(call{method: "GET", path: persons, user: "alice", password: "alice-pw-1"}); st != 401 {
		t.Fatalf("old password = %d, want 401", st)
	}
	alice.password = "alice-pw-2"

	// Personal access tokens carry at most the owner's roles.
	if st, _, _ := e.do(call{method: "POST", path: console + "/users/-/personalaccesstokens", body: `{"spec":{"roles":["super-role"]}}`, user: alice.user, password: alice.password}); st != 400 {
		t.Fatalf("token with a role not held = %d, want 400", st)
	}
	st, _, body = e.do(call{method: "POST", path: console + "/users/-/personalaccesstokens", body: `{"metadata":{"name":"alice-ci"},"spec":{"roles":["view-persons"]}}`, user: alice.user, password: alice.password})
	if st != 201 {
		t.Fatalf("create token = %d %v", st, body)
	}
	token, _ := body["metadata"].(map[string]any)["annotations"].(map[string]any)["security.svc.run/access-token"].(string)
	if !strings.HasPrefix(token, "pat_") {
		t.Fatalf("token = %q", token)
	}
	if st, _, _ := e.do(call{method: "GET", path: persons, bearer: token}); st != 200 {
		t.Fatalf("bearer list = %d", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: console + "/users/-/personalaccesstokens/alice-ci", user: admin, password: adminPW}); st != 404 {
		t.Fatalf("someone else's token = %d, want 404", st)
	}
	if st, _, _ := e.do(call{method: "PUT", path: console + "/users/-/personalaccesstokens/alice-ci/revocation", user: alice.user, password: alice.password}); st != 200 {
		t.Fatalf("revoke = %d", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: persons, bearer: token}); st != 401 {
		t.Fatalf("revoked token = %d, want 401", st)
	}

	// Deleting the role takes the permission away.
	if st, _, _ := e.do(call{method: "DELETE", path: "/api/v1alpha1/roles/view-persons", user: admin, password: adminPW}); st != 200 {
		t.Fatalf("delete role = %d", st)
	}
	e.eventually("role deleted", call{method: "GET", path: persons, user: alice.user, password: alice.password}, 403)
}

func TestRandomAdminPasswordIsPrintedOnce(t *testing.T) {
	e := newEnv(t, "")
	out := e.out.String()
	i := strings.Index(out, "with password ")
	if i < 0 {
		t.Fatalf("no password printed: %q", out)
	}
	pw := strings.Fields(out[i+len("with password "):])[0]
	if st, _, _ := e.do(call{method: "GET", path: persons, user: admin, password: pw}); st != 200 {
		t.Fatalf("printed password does not work: %d", st)
	}
}

// TestNewStartsNothing: New builds access control without following roles
// (the resolver is not ready until Start runs), and Start ends, with nil,
// when its context does.
func TestNewStartsNothing(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	acc, err := access.New(ctx, st, access.Options{Brand: "svc.run", AdminPassword: adminPW, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if err := acc.WaitReady(short); err != context.DeadlineExceeded {
		t.Fatalf("WaitReady before Start = %v, want the deadline", err)
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- acc.Start(run) }()
	if err := acc.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady after Start = %v", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Start = %v after its context ended, want nil", err)
	}
	if err := acc.Start(ctx); err == nil {
		t.Error("a second Start ran")
	}
}
