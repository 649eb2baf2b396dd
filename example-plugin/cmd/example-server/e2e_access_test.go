package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/store"
)

// TestRoleManagerCannotOpenRBACToEveryone reproduces issue #30's report: a
// user holding the rules for roles and rolebindings labels her own role
// aggregate-to-anonymous; that is an edit of anonymous, which only a
// holder of super-role may make, so it is refused and anonymous stays shut.
func TestRoleManagerCannotOpenRBACToEveryone(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)
	mgrRole := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"role-manager"},"rules":[
		{"apiGroups":[""],"resources":["roles","rolebindings"],"verbs":["*"]}]}`
	if st, body := s.do(admin(req{method: "POST", path: "/api/v1alpha1/roles", body: mgrRole})); st != 201 {
		t.Fatalf("create role-manager = %d %v", st, body)
	}
	if st, body := s.do(admin(req{method: "POST", path: console + "/users", body: `{"name":"mia","displayName":"Mia","password":"mia-secret-1","roles":["role-manager"]}`})); st != 201 {
		t.Fatalf("create mia = %d %v", st, body)
	}
	mia := func(r req) req { r.user, r.pw = "mia", "mia-secret-1"; return r }
	s.eventually(mia(req{method: "GET", path: "/api/v1alpha1/roles"}), 200)
	label := `{"metadata":{"labels":{"rbac.authorization.svc.run/aggregate-to-anonymous":"true"}}}`
	st, body := s.do(mia(req{method: "PATCH", path: "/api/v1alpha1/roles/role-manager", body: label, ct: "application/merge-patch+json"}))
	if st != 403 {
		t.Fatalf("mia labels her role aggregate-to-anonymous = %d %v, want 403", st, body)
	}
	if d, _ := body["detail"].(string); d == "" {
		t.Errorf("the refusal has no detail: %v", body)
	}
	withLabel := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"for-all","labels":{"rbac.authorization.svc.run/aggregate-to-authenticated":"true"}},"rules":[]}`
	if st, body := s.do(mia(req{method: "POST", path: "/api/v1alpha1/roles", body: withLabel})); st != 403 {
		t.Fatalf("mia creates a role aggregated into authenticated = %d %v, want 403", st, body)
	}
	anon := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"by-anyone"},"rules":[]}`
	if st, body := s.do(req{method: "POST", path: "/api/v1alpha1/roles", body: anon}); st != 401 {
		t.Fatalf("anonymous creates a role = %d %v, want 401", st, body)
	}
}

// adminReset runs `example-server admin reset` with args and the given
// environment (SVC_ADMIN_PASSWORD is never inherited), returning its
// output and error.
func adminReset(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"admin", "reset"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SVC_ADMIN_PASSWORD=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestLastSuperAdministratorAndAdminReset: the server refuses to lose its
// last super administrator; a store locked out anyway (here by an offline
// edit) is recovered with `admin reset`, which refuses to run beside a
// server.
func TestLastSuperAdministratorAndAdminReset(t *testing.T) {
	diskOnly(t, "admin reset refuses a data directory a server holds")
	dir := t.TempDir()
	s := run(t, dir, "SVC_ADMIN_PASSWORD="+adminPW)
	const binding = "/api/v1alpha1/rolebindings/admin-super-role-binding"
	st, body := s.do(admin(req{method: "DELETE", path: binding}))
	if st != 409 || !strings.Contains(body["detail"].(string), "super-role") {
		t.Fatalf("deleting the last super administrator's binding = %d %v, want 409 naming super-role", st, body)
	}
	if st, body := s.do(admin(req{method: "PATCH", path: "/api/v1alpha1/users/admin", body: `{"spec":{"disabled":true}}`, ct: "application/merge-patch+json"})); st != 409 {
		t.Fatalf("disabling the last super administrator = %d %v, want 409", st, body)
	}
	if st, body := s.do(admin(req{method: "POST", path: persons, body: person("kept", "Kept", "")})); st != 201 {
		t.Fatalf("create a person = %d %v", st, body)
	}
	if out, err := adminReset(t, []string{"SVC_ADMIN_PASSWORD=x-new-password"}, "--data-dir", dir); err == nil || !strings.Contains(out, "stop it first") {
		t.Fatalf("admin reset beside a running server = %v %q, want a refusal", err, out)
	}
	s.stop()

	// Locked out: the binding deleted behind the server's back.
	ctx := context.Background()
	db, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	bm := core.RoleBindingModel()
	if err := db.Register(ctx, bm); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Delete(ctx, bm, "admin-super-role-binding"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = run(t, dir)
	if st, _ := s.do(admin(req{method: "GET", path: "/api/v1alpha1/users"})); st != 403 {
		t.Fatalf("admin of a locked-out store lists users = %d, want 403", st)
	}
	s.stop()

	if out, err := adminReset(t, nil, "--data-dir", filepath.Join(dir, "typo")); err == nil {
		t.Fatalf("admin reset of a directory that does not exist = %q, want an error", out)
	}
	const newPW = "e2e-recovered-password"
	out, err := adminReset(t, []string{"SVC_ADMIN_PASSWORD=" + newPW}, "--data-dir", dir)
	if err != nil || strings.Contains(out, newPW) {
		t.Fatalf("admin reset = %v %q", err, out)
	}
	// A second, generated one, for a user that did not exist.
	out, err = adminReset(t, nil, "--data-dir", dir, "--user", "rescue")
	if err != nil {
		t.Fatalf("admin reset --user rescue = %v %q", err, out)
	}
	m := regexp.MustCompile(`with password (\S+) \(shown once`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("admin reset printed no password: %q", out)
	}

	s = run(t, dir)
	for _, who := range []req{{user: "admin", pw: newPW}, {user: "rescue", pw: m[1]}} {
		r := req{method: "POST", path: persons, body: person("by-"+who.user, "P", ""), user: who.user, pw: who.pw}
		if st, body := s.do(r); st != 201 {
			t.Errorf("%s creates a person after the reset = %d %v, want 201", who.user, st, body)
		}
		if st, body := s.do(req{method: "DELETE", path: "/api/v1alpha1/roles/nothing", user: who.user, pw: who.pw}); st != 404 {
			t.Errorf("%s deletes a role that does not exist = %d %v, want 404 (a super administrator)", who.user, st, body)
		}
	}
	if st, _ := s.do(admin(req{method: "GET", path: "/api/v1alpha1/users"})); st != 401 {
		t.Errorf("the old admin password after the reset = %d, want 401", st)
	}
	// The reset touched only users and bindings: other data is all there.
	if st, body := s.do(req{method: "GET", path: persons + "/kept", user: "admin", pw: newPW}); st != 200 || body["spec"].(map[string]any)["name"] != "Kept" {
		t.Errorf("a person written before the reset = %d %v", st, body)
	}
	if st, body := s.do(req{method: "GET", path: "/api/v1alpha1/plugins/example", user: "admin", pw: newPW}); st != 200 || body["status"].(map[string]any)["phase"] != "STARTED" {
		t.Errorf("the example plugin after the reset = %d %v", st, body)
	}
}

// TestPluginObjectsAreTheServers: a Plugin object for a plugin the binary
// lacks is refused, naming the ones it has; a client cannot set the
// status of a Plugin object.
func TestPluginObjectsAreTheServers(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)
	ghost := `{"apiVersion":"v1alpha1","kind":"Plugin","metadata":{"name":"ghost"},"spec":{"enabled":true},"status":{"phase":"STARTED"}}`
	st, body := s.do(admin(req{method: "POST", path: "/api/v1alpha1/plugins", body: ghost}))
	if st != 400 || !strings.Contains(body["detail"].(string), "ghost") || !strings.Contains(fmt.Sprint(body["errors"]), "example") {
		t.Fatalf("create a Plugin the binary lacks = %d %v, want 400 naming example", st, body)
	}
	if st, body := s.do(admin(req{method: "PATCH", path: "/api/v1alpha1/plugins/example", body: `{"status":{"phase":"FAILED","message":"x"}}`, ct: "application/merge-patch+json"})); st != 200 || body["status"].(map[string]any)["phase"] != "STARTED" {
		t.Fatalf("patch of the status = %d %v, want 200 with the server's STARTED", st, body)
	}
	put := `{"apiVersion":"v1alpha1","kind":"Plugin","metadata":{"name":"example","version":1},"spec":{"enabled":true},"status":{"phase":"FAILED"}}`
	if st, body := s.do(admin(req{method: "PUT", path: "/api/v1alpha1/plugins/example/status", body: put})); st != 403 {
		t.Fatalf("write of the status subresource = %d %v, want 403", st, body)
	}
}
