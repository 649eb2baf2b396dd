package access_test

import (
	"fmt"
	"testing"
)

// A token limited to a role its owner holds only through a dependency
// holds that role's rules when it writes a role, as it does for every
// other request: the escalation check and authorization agree.
func TestTokenRoleWritesHoldTheTokensRoles(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	for _, r := range []string{
		// role-writer may write roles and read persons; lead depends on it.
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"role-writer"},"rules":[{"apiGroups":[""],"resources":["roles"],"verbs":["create","get","list"]},{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get","list"]}]}`,
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"lead","annotations":{"rbac.authorization.svc.run/dependencies":"[\"role-writer\"]"}},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["create"]}]}`,
	} {
		if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: r})); st != 201 {
			t.Fatalf("create role = %d %v", st, body)
		}
	}
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"lee","password":"lee-password","roles":["lead"]}`})); st != 201 {
		t.Fatalf("create lee = %d %v", st, body)
	}
	lee := call{user: "lee", password: "lee-password"}
	e.eventually("lee lists persons", call{method: "GET", path: persons, user: lee.user, password: lee.password}, 200)
	c := call{method: "POST", path: ucTokens, body: `{"spec":{"name":"roles","roles":["role-writer"]}}`, user: lee.user, password: lee.password}
	st, _, body := e.do(c)
	if st != 200 {
		t.Fatalf("token limited to a dependency = %d %v", st, body)
	}
	tok := accessToken(t, body)
	readPersons := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"%s"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get"]}]}`
	if st, _, body := e.do(call{method: "POST", path: "/api/v1alpha1/roles", bearer: tok, body: fmt.Sprintf(readPersons, "reader")}); st != 201 {
		t.Errorf("the token writes a role within its own rules = %d %v, want 201", st, body)
	}
	// Beyond the token's roles (create is lead's, not role-writer's): refused.
	createPersons := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"creator"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["create"]}]}`
	if st, _, body := e.do(call{method: "POST", path: "/api/v1alpha1/roles", bearer: tok, body: createPersons}); st != 403 {
		t.Errorf("the token writes a role beyond its roles = %d %v, want 403", st, body)
	}
}
