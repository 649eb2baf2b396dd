package main_test

import (
	"testing"
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
