package access_test

import (
	"fmt"
	"testing"
	"time"
)

func TestNoEscalationThroughGenericAPI(t *testing.T) {
	e := newEnv(t, adminPW)
	as := func(c call, user, pw string) call { c.user, c.password = user, pw; return c }
	adm := func(c call) call { return as(c, admin, adminPW) }

	// mgr may write roles and bindings and read persons: nothing more.
	mgrRole := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"role-admin"},"rules":[
		{"apiGroups":[""],"resources":["roles","rolebindings"],"verbs":["create","update","patch","get","list"]},
		{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get","list"]}]}`
	if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: mgrRole})); st != 201 {
		t.Fatalf("create role-admin = %d %v", st, body)
	}
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"mgr","displayName":"M","password":"mgr-password","roles":["role-admin"]}`})); st != 201 {
		t.Fatalf("create mgr = %d %v", st, body)
	}
	mgr := func(c call) call { return as(c, "mgr", "mgr-password") }
	e.eventually("mgr bound", mgr(call{method: "GET", path: "/api/v1alpha1/roles"}), 200)

	within := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"readers"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get"]}]}`
	beyond := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"writers"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["create"]}]}`
	everything := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"all"},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`
	dependsOnSuper := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"sneaky","annotations":{"rbac.authorization.svc.run/dependencies":"[\"super-role\"]"}},"rules":[]}`
	binding := func(name, role string) string {
		return `{"apiVersion":"v1alpha1","kind":"RoleBinding","metadata":{"name":"` + name + `"},"roleRef":{"apiGroup":"","kind":"Role","name":"` + role + `"},"subjects":[{"apiGroup":"","kind":"User","name":"mgr"}]}`
	}
	cases := []struct {
		name string
		c    call
		want int
	}{
		{"role within held rules", call{method: "POST", path: "/api/v1alpha1/roles", body: within}, 201},
		{"role with a verb not held", call{method: "POST", path: "/api/v1alpha1/roles", body: beyond}, 403},
		{"role with wildcards", call{method: "POST", path: "/api/v1alpha1/roles", body: everything}, 403},
		{"role depending on super-role", call{method: "POST", path: "/api/v1alpha1/roles", body: dependsOnSuper}, 403},
		{"widening an existing role by patch", call{method: "PATCH", path: "/api/v1alpha1/roles/readers", contentType: "application/merge-patch+json",
			body: `{"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`}, 403},
		{"binding a held role", call{method: "POST", path: "/api/v1alpha1/rolebindings", body: binding("mgr-readers", "readers")}, 201},
		{"binding super-role", call{method: "POST", path: "/api/v1alpha1/rolebindings", body: binding("mgr-super", "super-role")}, 403},
		{"binding a role that does not exist", call{method: "POST", path: "/api/v1alpha1/rolebindings", body: binding("mgr-ghost", "ghost")}, 400},
		{"granting super-role through the console", call{method: "POST", path: console + "/users/mgr/permissions", body: `{"roles":["super-role"]}`}, 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if st, _, body := e.do(mgr(tc.c)); st != tc.want {
				t.Fatalf("%s %s = %d %v, want %d", tc.c.method, tc.c.path, st, body, tc.want)
			}
		})
	}
	// Nothing refused was written.
	for _, path := range []string{"/api/v1alpha1/roles/writers", "/api/v1alpha1/roles/all", "/api/v1alpha1/roles/sneaky", "/api/v1alpha1/rolebindings/mgr-super"} {
		if st, _, _ := e.do(adm(call{method: "GET", path: path})); st != 404 {
			t.Errorf("GET %s = %d after a refused write, want 404", path, st)
		}
	}
	_, _, readers := e.do(adm(call{method: "GET", path: "/api/v1alpha1/roles/readers"}))
	if rules := readers["rules"].([]any); len(rules) != 1 || rules[0].(map[string]any)["apiGroups"].([]any)[0] != "people.example.com" {
		t.Errorf("readers after a refused patch = %v", readers["rules"])
	}
	// The administrator holds everything and may do all of it.
	if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: everything})); st != 201 {
		t.Errorf("admin creates a wildcard role = %d %v", st, body)
	}
}

// TestTokenGrantsNoMoreThanItsRoles: a token limited to some of its
// owner's roles can hand out only what those roles hold.
func TestTokenGrantsNoMoreThanItsRoles(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	roles := []string{
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"binder"},"rules":[{"apiGroups":[""],"resources":["rolebindings"],"verbs":["create"]}]}`,
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"person-writer"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["create"]}]}`,
	}
	for _, r := range roles {
		if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: r})); st != 201 {
			t.Fatalf("create role = %d %v", st, body)
		}
	}
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"tina","displayName":"T","password":"tina-password","roles":["binder","person-writer"]}`})); st != 201 {
		t.Fatalf("create tina = %d %v", st, body)
	}
	tina := call{user: "tina", password: "tina-password"}
	bindWriter := func(name string) call {
		return call{method: "POST", path: "/api/v1alpha1/rolebindings",
			body: `{"apiVersion":"v1alpha1","kind":"RoleBinding","metadata":{"name":"` + name + `"},"roleRef":{"apiGroup":"","kind":"Role","name":"person-writer"},"subjects":[{"apiGroup":"","kind":"User","name":"someone"}]}`}
	}
	c := bindWriter("by-password")
	c.user, c.password = tina.user, tina.password
	e.eventually("tina binds a role she holds", c, 201)

	tok := call{method: "POST", path: console + "/users/-/personalaccesstokens", body: `{"metadata":{"name":"tina-binder"},"spec":{"roles":["binder"]}}`, user: tina.user, password: tina.password}
	st, _, body := e.do(tok)
	if st != 201 {
		t.Fatalf("create token = %d %v", st, body)
	}
	token, _ := body["metadata"].(map[string]any)["annotations"].(map[string]any)["security.svc.run/access-token"].(string)
	c = bindWriter("by-token")
	c.bearer = token
	if st, _, body := e.do(c); st != 403 {
		t.Fatalf("a binder-only token binds person-writer = %d %v, want 403", st, body)
	}
}

// TestChangesTakeEffectOnTheNextRequest: a write of a role or a binding is
// answered only once access control decides with it, so the very next
// request sees it (docs/api.md), with no waiting by the client.
func TestChangesTakeEffectOnTheNextRequest(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"nina","displayName":"N","password":"nina-password"}`})); st != 201 {
		t.Fatalf("create nina = %d %v", st, body)
	}
	nina := call{method: "GET", path: persons, user: "nina", password: "nina-password"}
	e.eventually("nina signs in", nina, 403)
	for i := range 15 {
		role := fmt.Sprintf(`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"readers-%d"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["list"]}]}`, i)
		if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: role})); st != 201 {
			t.Fatalf("create role = %d %v", st, body)
		}
		if st, _, body := e.do(adm(call{method: "POST", path: console + "/users/nina/permissions", body: fmt.Sprintf(`{"roles":["readers-%d"]}`, i)})); st != 200 {
			t.Fatalf("grant = %d %v", st, body)
		}
		if st, _, _ := e.do(nina); st != 200 {
			t.Fatalf("round %d: list right after the grant = %d, want 200", i, st)
		}
		if st, _, _ := e.do(adm(call{method: "DELETE", path: fmt.Sprintf("/api/v1alpha1/roles/readers-%d", i)})); st != 200 {
			t.Fatalf("delete role = %d", st)
		}
		if st, _, _ := e.do(nina); st != 403 {
			t.Fatalf("round %d: list right after the role was deleted = %d, want 403", i, st)
		}
	}
}

func TestSuperRoleCannotBeChanged(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	for _, c := range []call{
		{method: "DELETE", path: "/api/v1alpha1/roles/super-role"},
		{method: "PATCH", path: "/api/v1alpha1/roles/super-role", contentType: "application/merge-patch+json", body: `{"rules":[]}`},
		{method: "PUT", path: "/api/v1alpha1/roles/super-role", body: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"super-role","version":0},"rules":[]}`},
		{method: "DELETE", path: "/api/v1alpha1/roles"},
		{method: "DELETE", path: "/api/v1alpha1/roles?fieldSelector=name%3Dsuper-role"},
	} {
		if st, _, body := e.do(adm(c)); st != 403 {
			t.Errorf("%s super-role = %d %v, want 403", c.method, st, body)
		}
	}
	if st, _, _ := e.do(adm(call{method: "GET", path: "/api/v1alpha1/roles/super-role"})); st != 200 {
		t.Errorf("GET super-role = %d", st)
	}
	if st, _, _ := e.do(adm(call{method: "GET", path: persons})); st != 200 {
		t.Errorf("admin after the attempts = %d, want 200", st)
	}
	// Other roles can still be deleted in bulk.
	e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"tmp","labels":{"team.example.com/tmp":"1"}},"rules":[]}`}))
	if st, _, body := e.do(adm(call{method: "DELETE", path: "/api/v1alpha1/roles?labelSelector=team.example.com/tmp"})); st != 200 || body["total"] != float64(1) {
		t.Errorf("delete-collection of other roles = %d %v", st, body)
	}
}

// TestHiddenRoles: the generic role list returns every role, the console's
// listings leave the hidden ones (anonymous, authenticated) out.
func TestHiddenRoles(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	_, _, list := e.do(adm(call{method: "GET", path: "/api/v1alpha1/roles"}))
	names := map[string]bool{}
	for _, it := range list["items"].([]any) {
		names[it.(map[string]any)["metadata"].(map[string]any)["name"].(string)] = true
	}
	for _, n := range []string{"super-role", "anonymous", "authenticated", "guest", "metrics-reader", "post-contributor", "post-author", "post-editor"} {
		if !names[n] {
			t.Errorf("generic role list lacks %s: %v", n, names)
		}
	}
	st, _, perms := e.do(adm(call{method: "GET", path: console + "/users/-/permissions"}))
	if st != 200 {
		t.Fatalf("permissions = %d %v", st, perms)
	}
	roleNames := func(key string) []string {
		var out []string
		for _, r := range perms[key].([]any) {
			out = append(out, r.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		return out
	}
	// The admin's effective roles are super-role plus the implicit ones,
	// which are hidden; nothing aggregates into any of them here.
	if got := fmt.Sprint(roleNames("roles")); got != "[super-role]" {
		t.Errorf("roles = %s, want [super-role]", got)
	}
	if got := fmt.Sprint(roleNames("permissions")); got != "[super-role]" {
		t.Errorf("permissions = %s, want [super-role] (hidden roles left out)", got)
	}
	if got := fmt.Sprint(perms["uiPermissions"]); got != "[*]" {
		t.Errorf("uiPermissions = %s, want [*]", got)
	}
}

// TestNoEscalationThroughAggregation: a role write is checked against
// what the role would grant once written, roles aggregated into it
// included, so no one can collect rules others aggregate into a role; and
// a write that changes what another role grants (aggregate-to it, or a
// role it depends on) is an edit of that role too, of a built-in role only
// for a holder of super-role.
func TestNoEscalationThroughAggregation(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	mgr := func(c call) call { c.user, c.password = "mgr", "mgr-password"; return c }
	lead := func(c call) call { c.user, c.password = "lead", "lead-password"; return c }
	role := func(name, labels, annotations, rules string) call {
		return call{method: "POST", path: "/api/v1alpha1/roles", body: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"` + name +
			`","labels":{` + labels + `},"annotations":{` + annotations + `}},"rules":[` + rules + `]}`}
	}
	patch := func(name, body string) call {
		return call{method: "PATCH", path: "/api/v1alpha1/roles/" + name, contentType: "application/merge-patch+json", body: body}
	}
	const agg = `"rbac.authorization.svc.run/aggregate-to-`
	deletePersons := `{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["delete"]}`
	listPersons := `{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["list"]}`
	for _, c := range []call{
		role("role-admin", "", "", `{"apiGroups":[""],"resources":["roles","rolebindings"],"verbs":["create","update","patch","get","list"]}`),
		// Secrets aggregated into roles mgr does not hold, one of them not
		// created yet.
		role("secret", agg+`editor":"true"`, "", deletePersons),
		role("editor2", "", "", ""),
		role("secret2", agg+`editor2":"true"`, "", deletePersons),
		role("secret3", agg+`collector":"true"`, "", deletePersons),
		// lead may create roles and update only lead-own, which feeds
		// team-lead (by label) and team (which depends on it).
		role("lead-role", "", "", `{"apiGroups":[""],"resources":["roles"],"verbs":["create","get","list"]},
			{"apiGroups":[""],"resources":["roles"],"resourceNames":["lead-own","lead-free"],"verbs":["update","patch"]},`+listPersons),
		role("team-lead", "", "", ""),
		role("lead-own", agg+`team-lead":"true"`, "", ""),
		role("lead-free", "", "", ""),
		role("team", "", `"rbac.authorization.svc.run/dependencies":"[\"lead-free\"]"`, ""),
	} {
		if st, _, body := e.do(adm(c)); st != 201 {
			t.Fatalf("admin %s = %d %v", c.body, st, body)
		}
	}
	for _, u := range []string{
		`{"name":"mgr","displayName":"M","password":"mgr-password","roles":["role-admin"]}`,
		`{"name":"lead","displayName":"L","password":"lead-password","roles":["lead-role"]}`,
	} {
		if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: u})); st != 201 {
			t.Fatalf("create user = %d %v", st, body)
		}
	}
	e.eventually("mgr bound", mgr(call{method: "GET", path: "/api/v1alpha1/roles"}), 200)
	e.eventually("lead bound", lead(call{method: "GET", path: "/api/v1alpha1/roles"}), 200)

	// A dependency on a role that does not exist grants nothing yet.
	deps := patch("role-admin", `{"metadata":{"annotations":{"rbac.authorization.svc.run/dependencies":"[\"editor\"]"}}}`)
	if st, _, body := e.do(mgr(deps)); st != 200 {
		t.Fatalf("mgr adds a dependency on a missing role = %d %v", st, body)
	}
	for _, tc := range []struct {
		name string
		c    call
		want int
	}{
		{"creating the missing role that secret aggregates into", mgr(role("editor", "", "", "")), 403},
		{"labelling a role others aggregate into", mgr(patch("editor2", `{"metadata":{"labels":{`+agg+`role-admin":"true"}}}`)), 403},
		{"creating a role others aggregate into, aggregated into mine", mgr(role("collector", agg+`role-admin":"true"`, "", "")), 403},
		// The report: her own role aggregated into anonymous opens it to
		// everyone; so does authenticated to every user.
		{"labelling her role aggregate-to-anonymous", mgr(patch("role-admin", `{"metadata":{"labels":{`+agg+`anonymous":"true"}}}`)), 403},
		{"labelling her role aggregate-to-anonymous in another case", mgr(patch("role-admin", `{"metadata":{"labels":{`+agg+`anonymous":"TRUE"}}}`)), 403},
		{"creating a role aggregated into authenticated", mgr(role("for-all", agg+`authenticated":"true"`, "", "")), 403},
		{"creating a role aggregated into guest", mgr(role("for-guests", agg+`guest":"true"`, "", "")), 403},
		{"creating a role anonymous would depend on", lead(role("anon-dep", agg+`anonymous":"true"`, "", listPersons)), 403},
		// Aggregating into a role is an edit of it: update on roles/X.
		{"creating a role aggregated into one she may not update", lead(role("sneak", agg+`team-lead":"true"`, "", listPersons)), 403},
		{"changing the rules of a role aggregated into one she may not update", lead(patch("lead-own", `{"rules":[`+listPersons+`]}`)), 403},
		{"changing the rules of a role another depends on", lead(patch("lead-free", `{"rules":[`+listPersons+`]}`)), 403},
		{"dropping the label: no edit of team-lead", lead(patch("lead-own", `{"metadata":{"labels":null}}`)), 200},
		{"a display name is no edit of anything", lead(patch("lead-free", `{"metadata":{"annotations":{"rbac.authorization.svc.run/display-name":"Free"}}}`)), 200},
		{"creating a role aggregated into one she may update", lead(role("into-free", agg+`lead-own":"true"`, "", listPersons)), 201},
		{"admin labels a role aggregate-to-authenticated", adm(role("for-all", agg+`authenticated":"true"`, "", listPersons)), 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st, _, body := e.do(tc.c); st != tc.want {
				t.Fatalf("%s %s = %d %v, want %d", tc.c.method, tc.c.path, st, body, tc.want)
			}
		})
	}
	if st, _, _ := e.do(mgr(call{method: "DELETE", path: persons + "/nobody"})); st != 403 {
		t.Errorf("mgr deletes persons after the attempts = %d, want 403", st)
	}
	if st, _, body := e.do(call{method: "POST", path: "/api/v1alpha1/roles", body: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"anon"},"rules":[]}`}); st != 401 {
		t.Errorf("anonymous creates a role after the attempts = %d %v, want 401", st, body)
	}
	// Holding the rules, the administrator may do each of them.
	if st, _, body := e.do(adm(role("editor", "", "", ""))); st != 201 {
		t.Errorf("admin creates editor = %d %v", st, body)
	}
}

// TestBuiltinRolesCannotBeChanged: the rules of every built-in role are
// the service's (docs/api.md); an administrator cannot change or delete
// them either, so /healthz stays public and no plugin API reaches every
// signed-in user.
func TestBuiltinRolesCannotBeChanged(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	for _, name := range []string{"anonymous", "authenticated", "guest", "metrics-reader", "post-contributor", "post-author", "post-editor"} {
		for _, c := range []call{
			{method: "PATCH", path: "/api/v1alpha1/roles/" + name, contentType: "application/merge-patch+json",
				body: `{"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["list"]}]}`},
			{method: "DELETE", path: "/api/v1alpha1/roles/" + name},
		} {
			if st, _, body := e.do(adm(c)); st != 403 {
				t.Errorf("%s %s = %d %v, want 403", c.method, name, st, body)
			}
		}
	}
	if st, _, _ := e.do(call{method: "GET", path: "/healthz"}); st != 200 {
		t.Errorf("anonymous /healthz after the attempts = %d, want 200", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: persons}); st != 401 {
		t.Errorf("anonymous list of persons after the attempts = %d, want 401", st)
	}
}

// TestTokenRolesAreAlwaysALimit: a token made with no roles holds none
// (not "all of the user's", which would take in roles granted later), and
// a limited token cannot make a token with more roles than it has.
func TestTokenRolesAreAlwaysALimit(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	for _, r := range []string{"readers", "role-readers"} {
		rule := `{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["list"]}`
		if r == "role-readers" {
			rule = `{"apiGroups":[""],"resources":["roles"],"verbs":["list"]}`
		}
		if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"` + r + `"},"rules":[` + rule + `]}`})); st != 201 {
			t.Fatalf("create role %s = %d %v", r, st, body)
		}
	}
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"tom","displayName":"T","password":"tom-password","roles":["role-readers"]}`})); st != 201 {
		t.Fatalf("create tom = %d %v", st, body)
	}
	tom := call{user: "tom", password: "tom-password"}
	newToken := func(c call, roles string) (int, string) {
		c.method, c.path, c.body = "POST", console+"/users/-/personalaccesstokens", `{"spec":{"roles":`+roles+`}}`
		st, _, body := e.do(c)
		md, _ := body["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		tok, _ := ann["security.svc.run/access-token"].(string)
		return st, tok
	}
	st, empty := newToken(tom, `[]`)
	if st != 201 {
		t.Fatalf("token with no roles = %d", st)
	}
	st, limited := newToken(tom, `["role-readers"]`)
	if st != 201 {
		t.Fatalf("token limited to role-readers = %d", st)
	}
	listRoles := call{method: "GET", path: "/api/v1alpha1/roles"}
	e.eventually("tom's limited token", call{method: "GET", path: listRoles.path, bearer: limited}, 200)
	if st, _, _ := e.do(call{method: "GET", path: listRoles.path, bearer: empty}); st != 403 {
		t.Errorf("a token of no roles lists roles = %d, want 403", st)
	}
	// A role granted later reaches neither token.
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users/tom/permissions", body: `{"roles":["role-readers","readers"]}`})); st != 200 {
		t.Fatalf("grant readers = %d %v", st, body)
	}
	e.eventually("tom reads persons", call{method: "GET", path: persons, user: tom.user, password: tom.password}, 200)
	for name, tok := range map[string]string{"no roles": empty, "role-readers": limited} {
		if st, _, _ := e.do(call{method: "GET", path: persons, bearer: tok}); st != 403 {
			t.Errorf("token of %s lists persons after a later grant = %d, want 403", name, st)
		}
	}
	// The limited token may not mint a token with the role it lacks.
	if st, _ := newToken(call{bearer: limited}, `["readers"]`); st != 400 {
		t.Errorf("a role-readers token makes a readers token = %d, want 400", st)
	}
	if st, _ := newToken(call{bearer: limited}, `["role-readers"]`); st != 201 {
		t.Errorf("a role-readers token makes a role-readers token = %d, want 201", st)
	}
}

// TestPatchCannotReachThePasswordHash: a patch applies to the user as the
// API shows it, so the hash can be neither copied out nor tested.
func TestPatchCannotReachThePasswordHash(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"cara","displayName":"C","password":"cara-password"}`})); st != 201 {
		t.Fatalf("create cara = %d %v", st, body)
	}
	patch := func(ops string) call {
		return adm(call{method: "PATCH", path: "/api/v1alpha1/users/cara", contentType: "application/json-patch+json", body: ops})
	}
	// e.do fails the test on any response carrying a hash.
	if st, _, _ := e.do(patch(`[{"op":"copy","from":"/spec/password","path":"/spec/bio"}]`)); st != 400 {
		t.Errorf("copying the password = %d, want 400 (no such field)", st)
	}
	if st, _, _ := e.do(patch(`[{"op":"test","path":"/spec/password","value":"x"}]`)); st != 400 {
		t.Errorf("testing the password = %d, want 400", st)
	}
	// The hash survives other patches: cara still signs in.
	if st, _, body := e.do(patch(`[{"op":"replace","path":"/spec/displayName","value":"Cara"}]`)); st != 200 {
		t.Fatalf("patch displayName = %d %v", st, body)
	}
	if st, _, _ := e.do(call{method: "GET", path: console + "/users/-", user: "cara", password: "cara-password"}); st != 200 {
		t.Errorf("cara signs in after a patch = %d, want 200", st)
	}
}

// TestCreateUserTakesHalosRequest: every field of Halo's CreateUserRequest
// is accepted and stored.
func TestCreateUserTakesHalosRequest(t *testing.T) {
	e := newEnv(t, adminPW)
	st, _, body := e.do(call{method: "POST", path: console + "/users", user: admin, password: adminPW,
		body: `{"name":"jo","email":"jo@example.com","displayName":"Jo","avatar":"/a.png","phone":"123","password":"jo-password",
			"bio":"hi","annotations":{"example.com/team":"blue"},"roles":[]}`})
	if st != 201 {
		t.Fatalf("create jo = %d %v", st, body)
	}
	_, _, u := e.do(call{method: "GET", path: "/api/v1alpha1/users/jo", user: admin, password: adminPW})
	spec, _ := u["spec"].(map[string]any)
	md, _ := u["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	got := fmt.Sprintf("%v %v %v %v %v %v", spec["email"], spec["displayName"], spec["avatar"], spec["phone"], spec["bio"], ann["example.com/team"])
	if want := "jo@example.com Jo /a.png 123 hi blue"; got != want {
		t.Errorf("stored user = %s, want %s", got, want)
	}
	if st, _, _ := e.do(call{method: "GET", path: console + "/users/-", user: "jo", password: "jo-password"}); st != 200 {
		t.Errorf("jo signs in = %d", st)
	}
}

// TestDeletedUserLeavesNothingBehind: a user's bindings and tokens go with
// it, so a user created later under the same name starts with neither.
func TestDeletedUserLeavesNothingBehind(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"readers"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["list"]}]}`})); st != 201 {
		t.Fatalf("create role = %d %v", st, body)
	}
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"zed","displayName":"Z","password":"zed-password","roles":["readers"]}`})); st != 201 {
		t.Fatalf("create zed = %d %v", st, body)
	}
	st, _, body := e.do(call{method: "POST", path: console + "/users/-/personalaccesstokens", user: "zed", password: "zed-password", body: `{"spec":{}}`})
	if st != 201 {
		t.Fatalf("token = %d %v", st, body)
	}
	token := body["metadata"].(map[string]any)["annotations"].(map[string]any)["security.svc.run/access-token"].(string)
	e.eventually("zed's token", call{method: "GET", path: persons, bearer: token}, 200)
	if st, _, _ := e.do(adm(call{method: "DELETE", path: "/api/v1alpha1/users/zed"})); st != 200 {
		t.Fatalf("delete zed = %d", st)
	}
	e.eventually("zed's binding removed", adm(call{method: "GET", path: "/api/v1alpha1/rolebindings/zed-readers-binding"}), 404)
	_, _, toks := e.do(adm(call{method: "GET", path: "/apis/security.svc.run/v1alpha1/personalaccesstokens?fieldSelector=spec.username%3Dzed"}))
	for deadline := time.Now().Add(20 * time.Second); toks["total"] != float64(0) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, _, toks = e.do(adm(call{method: "GET", path: "/apis/security.svc.run/v1alpha1/personalaccesstokens?fieldSelector=spec.username%3Dzed"}))
	}
	if toks["total"] != float64(0) {
		t.Fatalf("zed's tokens after the delete: %v", toks)
	}
	// A new zed, made through the generic API, inherits nothing.
	if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/users", body: `{"apiVersion":"v1alpha1","kind":"User","metadata":{"name":"zed"},"spec":{"displayName":"New","password":"other-password"}}`})); st != 201 {
		t.Fatalf("recreate zed = %d %v", st, body)
	}
	e.eventually("the new zed signs in", call{method: "GET", path: console + "/users/-", user: "zed", password: "other-password"}, 200)
	if st, _, _ := e.do(call{method: "GET", path: persons, user: "zed", password: "other-password"}); st != 403 {
		t.Errorf("the new zed lists persons = %d, want 403", st)
	}
	if st, _, _ := e.do(call{method: "GET", path: persons, bearer: token}); st != 401 {
		t.Errorf("the old zed's token = %d, want 401", st)
	}
}

// TestConsoleBodiesAreStrict: the console API refuses what the generic
// API refuses (docs/api.md), naming the field, and changes nothing.
func TestConsoleBodiesAreStrict(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"uma","displayName":"U","password":"uma-password","roles":["guest"]}`})); st != 201 {
		t.Fatalf("create uma = %d %v", st, body)
	}
	for _, tc := range []struct {
		name, method, path, body, field string
	}{
		{"trailing data on a grant", "POST", console + "/users/uma/permissions", `{"roles":[]}garbage`, ""},
		{"null grant", "POST", console + "/users/uma/permissions", `null`, ""},
		{"unknown field", "POST", console + "/users", `{"name":"u9","password":"pw-pw-pw","nme":"x"}`, "nme"},
		{"wrong type", "POST", console + "/users/uma/permissions", `{"roles":"guest"}`, "roles"},
		{"trailing data on a password change", "PUT", console + "/users/uma/password", `{"password":"new-password"} {}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, h, body := e.do(adm(call{method: tc.method, path: tc.path, body: tc.body}))
			if st != 400 || h.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("= %d %v, want a 400 problem", st, body)
			}
			if tc.field != "" {
				errs, _ := body["errors"].([]any)
				if len(errs) != 1 || errs[0].(map[string]any)["field"] != tc.field {
					t.Errorf("errors = %v, want one naming %s", body["errors"], tc.field)
				}
			}
		})
	}
	// Nothing changed: uma keeps her role and her password.
	e.eventually("uma signs in", call{method: "GET", path: console + "/users/-", user: "uma", password: "uma-password"}, 200)
	_, _, perms := e.do(adm(call{method: "GET", path: console + "/users/uma/permissions"}))
	if roles, _ := perms["roles"].([]any); len(roles) != 1 {
		t.Errorf("uma's roles after refused grants = %v", perms["roles"])
	}
	// One's own password needs the old one, by name as by "-"; another
	// user's does not (an administrator resets it).
	if st, _, _ := e.do(adm(call{method: "PUT", path: console + "/users/admin/password", body: `{"password":"stolen-password"}`})); st != 400 {
		t.Errorf("own password by name without the old one = %d, want 400", st)
	}
	if st, _, body := e.do(adm(call{method: "PUT", path: console + "/users/uma/password", body: `{"password":"reset-password"}`})); st != 200 {
		t.Errorf("admin resets uma's password = %d %v, want 200", st, body)
	}
}
