package access_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/access"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store/storetest"
)

const ucTokens = "/apis/uc.api.security.svc.run/v1alpha1/personalaccesstokens"

// accessToken is the token in a create response's annotation.
func accessToken(t *testing.T, body map[string]any) string {
	t.Helper()
	md, _ := body["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	tok, _ := ann["security.svc.run/access-token"].(string)
	if !strings.HasPrefix(tok, "pat_") {
		t.Fatalf("no pat_ token in the annotation of %v", body)
	}
	return tok
}

// personRoles makes manage-persons (create; depends on view-persons),
// view-persons (list), persons-extra (delete; aggregated into
// manage-persons) and other-persons (patch), and user mia bound to
// manage-persons only.
func personRoles(t *testing.T, e *env) call {
	t.Helper()
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	for _, r := range []string{
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"view-persons"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["list"]}]}`,
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"manage-persons","annotations":{"rbac.authorization.svc.run/dependencies":"[\"view-persons\"]"}},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["create"]}]}`,
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"persons-extra","labels":{"rbac.authorization.svc.run/aggregate-to-manage-persons":"true"}},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["delete"]}]}`,
		`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"other-persons"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["patch"]}]}`,
	} {
		if st, _, body := e.do(adm(call{method: "POST", path: "/api/v1alpha1/roles", body: r})); st != 201 {
			t.Fatalf("create role = %d %v", st, body)
		}
	}
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"mia","password":"mia-password","roles":["manage-persons"]}`})); st != 201 {
		t.Fatalf("create mia = %d %v", st, body)
	}
	mia := call{user: "mia", password: "mia-password"}
	e.eventually("mia lists persons", call{method: "GET", path: persons, user: mia.user, password: mia.password}, 200)
	return mia
}

// TestTokenRolesAreTheEffectiveSet: a token may be limited to any role in
// its creator's effective set, dependencies and aggregation included, in
// both token APIs; a role outside it, or one that does not exist, is
// refused.
func TestTokenRolesAreTheEffectiveSet(t *testing.T) {
	e := newEnv(t, adminPW)
	mia := personRoles(t, e)
	as := func(c call) call { c.user, c.password = mia.user, mia.password; return c }

	// Through a dependency, with the console API (it said "role is not
	// one of yours" before).
	st, _, body := e.do(as(call{method: "POST", path: console + "/users/-/personalaccesstokens", body: `{"spec":{"roles":["view-persons"]}}`}))
	if st != 201 {
		t.Fatalf("console token limited to a dependency = %d %v", st, body)
	}
	view := accessToken(t, body)
	e.eventually("the view token lists persons", call{method: "GET", path: persons, bearer: view}, 200)
	if st, _, _ := e.do(call{method: "POST", path: persons, bearer: view, body: `{}`}); st != 403 {
		t.Errorf("the view token creates a person = %d, want 403", st)
	}

	// Through aggregation, with Halo's API.
	st, _, body = e.do(as(call{method: "POST", path: ucTokens, body: `{"spec":{"name":"extra","roles":["persons-extra"]}}`}))
	if st != 200 {
		t.Fatalf("uc token limited to an aggregated role = %d %v", st, body)
	}
	extra := accessToken(t, body)
	e.eventually("the extra token deletes", call{method: "DELETE", path: persons + "/nobody", bearer: extra}, 404)
	if st, _, _ := e.do(call{method: "GET", path: persons, bearer: extra}); st != 403 {
		t.Errorf("the extra token lists persons = %d, want 403", st)
	}

	for _, tc := range []struct{ name, path, body string }{
		{"console, outside the set", console + "/users/-/personalaccesstokens", `{"spec":{"roles":["other-persons"]}}`},
		{"uc, outside the set", ucTokens, `{"spec":{"name":"x","roles":["view-persons","other-persons"]}}`},
		{"uc, super-role", ucTokens, `{"spec":{"name":"x","roles":["super-role"]}}`},
		{"uc, no such role", ucTokens, `{"spec":{"name":"x","roles":["nope"]}}`},
	} {
		st, _, body := e.do(as(call{method: "POST", path: tc.path, body: tc.body}))
		if st != 400 || !strings.Contains(jsonString(body), "spec.roles") {
			t.Errorf("%s: %d %v, want 400 naming spec.roles", tc.name, st, body)
		}
	}

	// A request made with a limited token may only pass on its roles.
	if st, _, body := e.do(call{method: "POST", path: ucTokens, bearer: view, body: `{"spec":{"name":"x","roles":["manage-persons"]}}`}); st != 400 {
		t.Errorf("the view token makes a manage token = %d %v, want 400", st, body)
	}
	if st, _, body := e.do(call{method: "POST", path: ucTokens, bearer: view, body: `{"spec":{"name":"x","roles":["view-persons"]}}`}); st != 200 {
		t.Errorf("the view token makes a view token = %d %v, want 200", st, body)
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestAbsentAndEmptyTokenRoles: in the console API, absent roles pin the
// token to its creator's bound roles and an empty list is no role; in
// Halo's API both mean no role. A token of no role still reaches what
// authenticated grants.
func TestAbsentAndEmptyTokenRoles(t *testing.T) {
	e := newEnv(t, adminPW)
	mia := personRoles(t, e)
	as := func(c call) call { c.user, c.password = mia.user, mia.password; return c }
	for _, tc := range []struct {
		name, path, body string
		lists            int
	}{
		{"console, absent", console + "/users/-/personalaccesstokens", `{"spec":{}}`, 200},
		{"console, empty", console + "/users/-/personalaccesstokens", `{"spec":{"roles":[]}}`, 403},
		{"uc, absent", ucTokens, `{"spec":{"name":"ci"}}`, 403},
		{"uc, empty", ucTokens, `{"spec":{"name":"ci","roles":[]}}`, 403},
	} {
		st, _, body := e.do(as(call{method: "POST", path: tc.path, body: tc.body}))
		if st != 200 && st != 201 {
			t.Fatalf("%s: create = %d %v", tc.name, st, body)
		}
		tok := accessToken(t, body)
		e.eventually(tc.name+": users/-", call{method: "GET", path: console + "/users/-", bearer: tok}, 200)
		if st, _, _ := e.do(call{method: "GET", path: persons, bearer: tok}); st != tc.lists {
			t.Errorf("%s: list persons = %d, want %d", tc.name, st, tc.lists)
		}
	}
}

// TestLegacyTokensMove: tokens an earlier svc stored in the empty group
// move to security.<brand> at start and keep working; those of a user
// that is gone are dropped.
func TestLegacyTokensMove(t *testing.T) {
	person := storetest.PersonModel()
	st := storetest.New(t, person)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	// What an earlier version left: user leo, his token and a ghost's.
	um := core.UserModel()
	if err := st.Register(ctx, um); err != nil {
		t.Fatal(err)
	}
	leo := core.NewUser("leo")
	leo.Spec.DisplayName = "Leo"
	if _, err := core.NewUserClient(st, um).Create(ctx, leo); err != nil {
		t.Fatal(err)
	}
	legacy := &model.Model{Version: "v1alpha1", Kind: "PersonalAccessToken", Plural: "personalaccesstokens", Singular: "personalaccesstoken"}
	if err := st.Register(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	old := client.New[*object.Unstructured](st, legacy)
	token := authn.LegacyTokenPrefix + strings.Repeat("L", 43)
	for name, spec := range map[string]string{
		"leo-ci":   `{"username":"leo","displayName":"CI","tokenHash":"` + authn.HashToken(token) + `","roles":[]}`,
		"ghost-ci": `{"username":"ghost","tokenHash":"` + authn.HashToken(token+"x") + `"}`,
	} {
		o := &object.Unstructured{Fields: map[string]json.RawMessage{"spec": json.RawMessage(spec)}}
		o.Metadata.Name = name
		if _, err := old.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []*model.Model{legacy, um} {
		if err := st.Unregister(ctx, m); err != nil {
			t.Fatal(err)
		}
	}

	acc, _ := start(t, ctx, st, access.Options{Brand: "svc.run", AdminPassword: adminPW, Out: io.Discard})
	moved, err := acc.Console.Tokens.Get(ctx, "leo-ci")
	if err != nil {
		t.Fatalf("leo's token did not move: %v", err)
	}
	if moved.APIVersion != "security.svc.run/v1alpha1" || moved.Spec.Name == nil || *moved.Spec.Name != "CI" || moved.Spec.TokenID == nil || moved.Spec.TokenHash != authn.HashToken(token) {
		t.Errorf("moved token = %+v", moved)
	}
	if _, err := acc.Console.Tokens.Get(ctx, "ghost-ci"); err == nil {
		t.Error("the ghost's token moved")
	}
	h := http.Header{"Authorization": {"Bearer " + token}}
	if id, err := acc.Guard.Authn.Authenticate(ctx, h); err != nil || id.User != "leo" {
		t.Errorf("leo's old token = %+v, %v", id, err)
	}
	// Nothing is left behind in the old place.
	if err := st.Register(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if res, err := old.List(ctx, client.ListOptions{}); err != nil || len(res.Items) != 0 {
		t.Errorf("old tokens left = %v, %v", res.Items, err)
	}
}

// TestUserCentreTokensOwnOnly: authenticated alone grants Halo's token API
// for one's own tokens; others' tokens are not found, the generic token
// API stays closed, and malformed requests are 400s.
func TestUserCentreTokensOwnOnly(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	if st, _, body := e.do(adm(call{method: "POST", path: console + "/users", body: `{"name":"noa","password":"noa-password"}`})); st != 201 {
		t.Fatalf("create noa = %d %v", st, body)
	}
	noa := func(c call) call { c.user, c.password = "noa", "noa-password"; return c }
	st, _, body := e.do(noa(call{method: "POST", path: ucTokens, body: `{"metadata":{"name":"noa-ci"},"spec":{"name":"CI","scopes":["x"]}}`}))
	if st != 200 {
		t.Fatalf("noa generates = %d %v", st, body)
	}
	tok := accessToken(t, body)
	for _, tc := range []struct {
		who    call
		method string
		path   string
		want   int
	}{
		{noa(call{}), "GET", ucTokens + "/noa-ci", 200},
		{noa(call{}), "GET", "/apis/security.svc.run/v1alpha1/personalaccesstokens", 403},
		{call{bearer: tok}, "GET", ucTokens, 200},
		{adm(call{}), "GET", ucTokens + "/noa-ci", 404},
		{adm(call{}), "PUT", ucTokens + "/noa-ci/actions/revocation", 404},
		{adm(call{}), "DELETE", ucTokens + "/noa-ci", 404},
		{adm(call{}), "GET", "/apis/security.svc.run/v1alpha1/personalaccesstokens/noa-ci", 200},
		{call{}, "GET", ucTokens, 401},
	} {
		c := tc.who
		c.method, c.path = tc.method, tc.path
		if st, _, body := e.do(c); st != tc.want {
			t.Errorf("%s %s as %q = %d %v, want %d", tc.method, tc.path, c.user, st, body, tc.want)
		}
	}
	for _, b := range []string{`{"spec":{}}`, `{"spec":{"name":" "}}`, `{"spec":{"name":"x","roles":"admin"}}`, `{"spec":{"name":"x","expiresAt":"soon"}}`, `[]`} {
		if st, _, body := e.do(noa(call{method: "POST", path: ucTokens, body: b})); st != 400 {
			t.Errorf("generate %s = %d %v, want 400", b, st, body)
		}
	}
}

// TestTokenLastUsed: using a token stamps spec.lastUsed, at most once a
// minute.
func TestTokenLastUsed(t *testing.T) {
	e := newEnv(t, adminPW)
	adm := func(c call) call { c.user, c.password = admin, adminPW; return c }
	st, _, body := e.do(adm(call{method: "POST", path: ucTokens, body: `{"metadata":{"name":"adm-ci"},"spec":{"name":"CI"}}`}))
	if st != 200 {
		t.Fatalf("generate = %d %v", st, body)
	}
	tok := accessToken(t, body)
	lastUsed := func() any {
		_, _, body := e.do(adm(call{method: "GET", path: ucTokens + "/adm-ci"}))
		return body["spec"].(map[string]any)["lastUsed"]
	}
	if got := lastUsed(); got != nil {
		t.Fatalf("lastUsed before any use = %v", got)
	}
	if st, _, _ := e.do(call{method: "GET", path: console + "/users/-", bearer: tok}); st != 200 {
		t.Fatalf("use = %d", st)
	}
	first := lastUsed()
	if first == nil {
		t.Fatal("lastUsed not set by a use")
	}
	e.do(call{method: "GET", path: console + "/users/-", bearer: tok})
	if again := lastUsed(); again != first {
		t.Errorf("lastUsed moved within a minute: %v, then %v", first, again)
	}
}
