package access_test

import (
	"strings"
	"sync"
	"testing"
)

// TestLastSuperAdministratorStays: no write through the generic API or the
// console leaves no enabled user bound to super-role; each is a 409
// saying so, and nothing is written.
func TestLastSuperAdministratorStays(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	root := func(c call) call { c.user, c.password = "root", "root-password"; return c }
	mergePatch := func(path, body string) call {
		return call{method: "PATCH", path: path, contentType: "application/merge-patch+json", body: body}
	}
	const binding = "/api/v1alpha1/rolebindings/admin-super-role-binding"
	refused := []struct {
		name string
		c    call
	}{
		{"deleting the binding", call{method: "DELETE", path: binding}},
		{"emptying its subjects", mergePatch(binding, `{"subjects":[]}`)},
		{"pointing it at another role", mergePatch(binding, `{"roleRef":{"apiGroup":"","kind":"Role","name":"guest"}}`)},
		{"replacing its subject by a user who does not exist", mergePatch(binding, `{"subjects":[{"apiGroup":"","kind":"User","name":"ghost"}]}`)},
		{"deleting every binding", call{method: "DELETE", path: "/api/v1alpha1/rolebindings"}},
		{"deleting the bindings of super-role", call{method: "DELETE", path: "/api/v1alpha1/rolebindings?fieldSelector=roleRef.name%3Dsuper-role"}},
		{"deleting the user", call{method: "DELETE", path: "/api/v1alpha1/users/admin"}},
		{"deleting every user", call{method: "DELETE", path: "/api/v1alpha1/users"}},
		{"disabling the user", mergePatch("/api/v1alpha1/users/admin", `{"spec":{"disabled":true}}`)},
		{"taking super-role away in the console", call{method: "POST", path: console + "/users/admin/permissions", body: `{"roles":[]}`}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			st, _, body := e.do(adm(tc.c))
			if st != 409 {
				t.Fatalf("%s %s = %d %v, want 409", tc.c.method, tc.c.path, st, body)
			}
			if d, _ := body["detail"].(string); !strings.Contains(d, "super-role") {
				t.Errorf("detail = %q, want it to name super-role", d)
			}
		})
	}
	if st, _, body := e.do(adm(call{method: "GET", path: binding})); st != 200 || len(body["subjects"].([]any)) != 1 {
		t.Fatalf("the binding after the attempts = %d %v", st, body)
	}
	if st, _, body := e.do(adm(call{method: "GET", path: "/api/v1alpha1/users/admin"})); st != 200 || body["spec"].(map[string]any)["disabled"] == true {
		t.Fatalf("admin after the attempts = %d %v", st, body)
	}

	// With a second super administrator, one of them may go; then the
	// other is the last.
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"root","displayName":"R","password":"root-password","roles":["super-role"]}`})); st != 201 {
		t.Fatalf("create root = %d %v", st, body)
	}
	e.eventually("root is super", root(call{method: "GET", path: "/api/v1alpha1/users"}), 200)
	if st, _, body := e.do(root(mergePatch("/api/v1alpha1/users/admin", `{"spec":{"disabled":true}}`))); st != 200 {
		t.Fatalf("root disables admin = %d %v", st, body)
	}
	if st, _, body := e.do(root(mergePatch("/api/v1alpha1/users/root", `{"spec":{"disabled":true}}`))); st != 409 {
		t.Fatalf("root disables itself, the last enabled super administrator = %d %v, want 409", st, body)
	}
	if st, _, body := e.do(root(call{method: "POST", path: console + "/users/root/permissions", body: `{"roles":["guest"]}`})); st != 409 {
		t.Fatalf("root drops its own super-role = %d %v, want 409", st, body)
	}
	if st, _, body := e.do(root(mergePatch("/api/v1alpha1/users/admin", `{"spec":{"disabled":false}}`))); st != 200 {
		t.Fatalf("root enables admin = %d %v", st, body)
	}
	e.eventually("admin is back", adm(call{method: "GET", path: "/api/v1alpha1/users"}), 200)

	// Two super administrators removing each other at once: one of them
	// stays.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, c := range []call{
		root(call{method: "DELETE", path: binding}),
		adm(call{method: "DELETE", path: "/api/v1alpha1/rolebindings/root-super-role-binding"}),
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = e.do(c)
		}()
	}
	wg.Wait()
	a, _, _ := e.do(adm(call{method: "GET", path: "/api/v1alpha1/users"}))
	r, _, _ := e.do(root(call{method: "GET", path: "/api/v1alpha1/users"}))
	if a != 200 && r != 200 {
		t.Fatalf("after deleting each other's binding (%v) neither admin (%d) nor root (%d) is super", codes, a, r)
	}
}
