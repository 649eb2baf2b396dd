package rbac

import (
	"fmt"
	"testing"
)

// benchWorld builds the shape of the issue: 1,000 roles (499 plugin
// "manage" templates with 5 rules, each depending on a "view" template
// with 5 rules, plus anonymous and authenticated) and 10,000 bindings
// that bind 20 manage roles to every one of users users. The user under
// test holds 20 bound roles that expand to 40 roles and 200 rules (205
// with the implicit roles' rules).
func benchWorld(tb testing.TB, users int) *Resolver {
	tb.Helper()
	const plugins, perUser, bindings = 499, 20, 10_000
	r := NewResolver(testBrand)
	r.PutRole(role(AnonymousRole, nil, nil,
		PolicyRule{NonResourceURLs: []string{"/healthz", "/readyz", "/openapi.json", "/swagger-ui/*"}, Verbs: []string{"get"}},
		PolicyRule{APIGroups: []string{"api.console." + testBrand}, Resources: []string{"users"}, ResourceNames: []string{"-"}, Verbs: []string{"get"}}))
	r.PutRole(role(AuthenticatedRole, nil, nil,
		PolicyRule{APIGroups: []string{"api.console." + testBrand}, Resources: []string{"users", "users/permissions"}, ResourceNames: []string{"-"}, Verbs: []string{"get"}},
		PolicyRule{APIGroups: []string{"api.console." + testBrand}, Resources: []string{"users/password"}, ResourceNames: []string{"-"}, Verbs: []string{"update"}},
		PolicyRule{APIGroups: []string{"api.console." + testBrand}, Resources: []string{"personalaccesstokens"}, Verbs: []string{"*"}}))
	for p := range plugins {
		g := fmt.Sprintf("p%d.example.com", p)
		view := fmt.Sprintf("p%d-role-view", p)
		r.PutRole(role(view, nil, nil,
			PolicyRule{APIGroups: []string{g}, Resources: []string{"things"}, Verbs: []string{"get", "list", "watch"}},
			PolicyRule{APIGroups: []string{g}, Resources: []string{"others"}, Verbs: []string{"get", "list"}},
			PolicyRule{APIGroups: []string{g}, Resources: []string{"things/summary"}, ResourceNames: []string{"*"}, Verbs: []string{"get"}},
			PolicyRule{APIGroups: []string{"api.plugin." + testBrand}, Resources: []string{"plugins/stats"}, ResourceNames: []string{fmt.Sprintf("p%d", p)}, Verbs: []string{"get"}},
			PolicyRule{NonResourceURLs: []string{fmt.Sprintf("/exports/p%d/*", p)}, Verbs: []string{"get"}}))
		r.PutRole(role(fmt.Sprintf("p%d-role-manage", p), []string{view}, nil,
			PolicyRule{APIGroups: []string{g}, Resources: []string{"things", "others"}, Verbs: []string{"create", "update", "patch", "delete"}},
			PolicyRule{APIGroups: []string{g}, Resources: []string{"things/status"}, Verbs: []string{"update", "patch"}},
			PolicyRule{APIGroups: []string{g}, Resources: []string{"*/refresh"}, Verbs: []string{"create"}},
			PolicyRule{APIGroups: []string{g}, Resources: []string{"things", "others"}, Verbs: []string{"deletecollection"}},
			PolicyRule{APIGroups: []string{"api.plugin." + testBrand}, Resources: []string{"plugins/things"}, ResourceNames: []string{fmt.Sprintf("p%d/*", p)}, Verbs: []string{"*"}}))
	}
	// User u holds manage roles (u*7 + k*13) mod 499 for k < 20 (distinct,
	// as 499 is prime), through binding (role, u mod 20): every binding
	// names one role and a slice of its holders.
	members := map[[2]int][]string{}
	for u := range users {
		for k := range perUser {
			p := (u*7 + k*13) % plugins
			key := [2]int{p, u % 20}
			members[key] = append(members[key], fmt.Sprintf("user%d", u))
		}
	}
	n := 0
	for key, us := range members {
		r.PutBinding(Binding{Name: fmt.Sprintf("b-%d-%d", key[0], key[1]), RoleRef: fmt.Sprintf("p%d-role-manage", key[0]), Users: us})
		n++
	}
	// Top up to 10,000 bindings with bindings of other users.
	for ; n < bindings; n++ {
		r.PutBinding(Binding{Name: fmt.Sprintf("extra-%d", n), RoleRef: fmt.Sprintf("p%d-role-view", n%plugins), Users: []string{fmt.Sprintf("guest%d", n)}})
	}
	if got := len(r.RoleNames()); got != 1000 {
		tb.Fatalf("world has %d roles, want 1000", got)
	}
	r.mu.RLock()
	nb := len(r.bindings)
	r.mu.RUnlock()
	if nb != bindings {
		tb.Fatalf("world has %d bindings, want %d", nb, bindings)
	}
	if got := len(r.BoundRoles("user1")); got != perUser {
		tb.Fatalf("user1 is bound to %d roles, want %d", got, perUser)
	}
	if got := len(r.RulesFor(r.BoundRoles("user1"))); got != 200 {
		tb.Fatalf("user1's bound roles expand to %d rules, want 200", got)
	}
	return r
}

// benchRequests are decisions for user1, whose first bound role is
// p7-role-manage and last (by k) p254-role-manage.
var benchRequests = []struct {
	name         string
	method, path string
	want         bool
}{
	{"ResourceAllowed", "PATCH", "/apis/p254.example.com/v1alpha1/things/t1/status", true},
	{"ViewAllowed", "GET", "/apis/p7.example.com/v1alpha1/things/t1/summary", true},
	{"ResourceDenied", "DELETE", "/apis/p8.example.com/v1alpha1/things/t1", false},
	{"PluginNameAllowed", "POST", "/apis/api.plugin." + testBrand + "/v1alpha1/plugins/p254/things/x", true},
	{"NonResourceAllowed", "GET", "/exports/p254/all", true},
	{"NonResourceDenied", "GET", "/exports/p8/all", false},
}

func BenchmarkAuthorize(b *testing.B) {
	for _, users := range []int{1_000, 100_000} {
		r := benchWorld(b, users)
		for _, bc := range benchRequests {
			info := ParseRequestInfo(bc.method, bc.path, nil, false)
			if got := r.Authorize("user1", &info); got != bc.want {
				b.Fatalf("%s %s: got %v, want %v", bc.method, bc.path, got, bc.want)
			}
			b.Run(fmt.Sprintf("Users%d/%s", users, bc.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r.Authorize("user1", &info)
				}
			})
		}
	}
}

// BenchmarkAuthorizeRoles is a personal access token limited to 10 of the
// user's 20 roles.
func BenchmarkAuthorizeRoles(b *testing.B) {
	r := benchWorld(b, 1_000)
	token := r.BoundRoles("user1")[:10]
	info := ParseRequestInfo("GET", "/apis/p254.example.com/v1alpha1/things", nil, false)
	want := false
	for _, n := range token {
		want = want || n == "p254-role-manage"
	}
	if got := r.AuthorizeRoles("user1", token, &info); got != want {
		b.Fatalf("got %v, want %v", got, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.AuthorizeRoles("user1", token, &info)
	}
}

// BenchmarkAuthorizeParallel spreads decisions of 1,000 users over all
// CPUs.
func BenchmarkAuthorizeParallel(b *testing.B) {
	r := benchWorld(b, 1_000)
	info := ParseRequestInfo("GET", "/apis/p254.example.com/v1alpha1/things/t1", nil, false)
	users := make([]string, 1000)
	for i := range users {
		users[i] = fmt.Sprintf("user%d", i)
		r.Authorize(users[i], &info)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Authorize(users[i%len(users)], &info)
			i++
		}
	})
}

// BenchmarkCompile is the first decision for a role set after a role
// change: closure and index of 205 rules.
func BenchmarkCompile(b *testing.B) {
	r := benchWorld(b, 1_000)
	info := ParseRequestInfo("GET", "/apis/p254.example.com/v1alpha1/things", nil, false)
	bump := role("unrelated", nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		r.PutRole(bump)
		r.DeleteRole(bump.Name)
		r.Authorize("user1", &info)
	}
}
