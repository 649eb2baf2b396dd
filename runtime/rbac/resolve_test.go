package rbac

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

const testBrand = "svc.run"

const (
	depsAnno  = "rbac.authorization." + testBrand + "/dependencies"
	aggPrefix = "rbac.authorization." + testBrand + "/aggregate-to-"
)

// role builds a test role; deps become the dependencies annotation and
// aggTo the aggregate-to labels.
func role(name string, deps []string, aggTo []string, rules ...PolicyRule) Role {
	r := Role{Name: name, Rules: rules}
	if deps != nil {
		var b strings.Builder
		b.WriteString("[")
		for i, d := range deps {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q", d)
		}
		b.WriteString("]")
		r.Annotations = map[string]string{depsAnno: b.String()}
	}
	if len(aggTo) > 0 {
		r.Labels = map[string]string{}
		for _, a := range aggTo {
			r.Labels[aggPrefix+a] = "true"
		}
	}
	return r
}

// getRule grants get on one resource of group g.
func getRule(g, resource string) PolicyRule {
	return PolicyRule{APIGroups: []string{g}, Resources: []string{resource}, Verbs: []string{"get"}}
}

func mustParse(method, path string) *RequestInfo {
	info := ParseRequestInfo(method, path, nil, false)
	return &info
}

func TestEffectiveRoles(t *testing.T) {
	deleting := func(r Role) Role { r.Deleting = true; return r }
	withLabel := func(r Role, k, v string) Role {
		if r.Labels == nil {
			r.Labels = map[string]string{}
		}
		r.Labels[k] = v
		return r
	}
	cases := []struct {
		name  string
		roles []Role
		bound []string // bound to user "u"
		user  string   // "" = anonymous
		want  []string
	}{
		// Halo DefaultRoleServiceTest (§10.D).
		{"chain", []Role{role("role1", []string{"role2"}, nil), role("role2", []string{"role3"}, nil), role("role3", []string{}, nil)},
			[]string{"role1"}, "u", []string{"role1", "role2", "role3"}},
		{"cycle", []Role{role("role1", []string{"role2"}, nil), role("role2", []string{"role3"}, nil), role("role3", []string{"role1"}, nil)},
			[]string{"role1"}, "u", []string{"role1", "role2", "role3"}},
		{"back edge", []Role{role("role1", []string{"role2"}, nil), role("role2", []string{"role3"}, nil), role("role3", []string{"role2", "role4"}, nil), role("role4", nil, nil)},
			[]string{"role1"}, "u", []string{"role1", "role2", "role3", "role4"}},
		{"two deps", []Role{role("role1", []string{"role4", "role2"}, nil), role("role2", []string{"role3"}, nil), role("role3", []string{"role2"}, nil), role("role4", nil, nil)},
			[]string{"role1"}, "u", []string{"role1", "role2", "role3", "role4"}},
		{"start inside cycle", []Role{role("role2", []string{"role3"}, nil), role("role3", []string{"role2"}, nil)},
			[]string{"role2"}, "u", []string{"role2", "role3"}},
		{"missing dependency", []Role{role("role1", []string{"role2"}, nil), role("role2", []string{"role3", "role4"}, nil), role("role4", nil, nil)},
			[]string{"role1"}, "u", []string{"role1", "role2", "role4"}},
		{"no bindings", []Role{role("role1", nil, nil)}, nil, "u", []string{}},

		// Implicit roles.
		{"signed in gets anonymous and authenticated", []Role{role(AnonymousRole, nil, nil), role(AuthenticatedRole, nil, nil), role("x", nil, nil)},
			[]string{"x"}, "u", []string{AnonymousRole, AuthenticatedRole, "x"}},
		{"anonymous gets anonymous only", []Role{role(AnonymousRole, nil, nil), role(AuthenticatedRole, nil, nil)},
			nil, "", []string{AnonymousRole}},
		{"implicit roles expand", []Role{role(AuthenticatedRole, []string{"own"}, nil), role("own", nil, nil)},
			nil, "u", []string{AuthenticatedRole, "own"}},

		// Aggregation, to a fixed point (docs/api.md).
		{"aggregate into bound role", []Role{role("editor", nil, nil), role("tpl", nil, []string{"editor"})},
			[]string{"editor"}, "u", []string{"editor", "tpl"}},
		{"aggregate into anonymous", []Role{role(AnonymousRole, nil, nil), role("public", nil, []string{AnonymousRole})},
			nil, "", []string{AnonymousRole, "public"}},
		{"aggregate into dependency", []Role{role("a", []string{"b"}, nil), role("b", nil, nil), role("tpl", nil, []string{"b"})},
			[]string{"a"}, "u", []string{"a", "b", "tpl"}},
		{"aggregate of aggregate", []Role{role("a", nil, nil), role("b", nil, []string{"a"}), role("c", nil, []string{"b"})},
			[]string{"a"}, "u", []string{"a", "b", "c"}},
		{"aggregated role's dependencies", []Role{role("a", nil, nil), role("b", []string{"c"}, []string{"a"}), role("c", nil, nil)},
			[]string{"a"}, "u", []string{"a", "b", "c"}},
		{"aggregation cycle", []Role{role("a", nil, []string{"b"}), role("b", nil, []string{"a"})},
			[]string{"a"}, "u", []string{"a", "b"}},
		{"aggregate to other role only", []Role{role("a", nil, nil), role("tpl", nil, []string{"other"})},
			[]string{"a"}, "u", []string{"a"}},
		{"label value True", []Role{role("a", nil, nil), withLabel(role("tpl", nil, nil), aggPrefix+"a", "True")},
			[]string{"a"}, "u", []string{"a", "tpl"}},
		{"label value false", []Role{role("a", nil, nil), withLabel(role("tpl", nil, nil), aggPrefix+"a", "false")},
			[]string{"a"}, "u", []string{"a"}},
		{"other brand's label", []Role{role("a", nil, nil), withLabel(role("tpl", nil, nil), "rbac.authorization.halo.run/aggregate-to-a", "true")},
			[]string{"a"}, "u", []string{"a"}},
		{"aggregation does not reach a non-holder", []Role{role("a", nil, nil), role("b", nil, nil), role("tpl", nil, []string{"b"})},
			[]string{"a"}, "u", []string{"a"}},

		// Roles being deleted grant nothing and lead nowhere.
		{"deleting bound role", []Role{deleting(role("a", []string{"b"}, nil)), role("b", nil, nil), role("tpl", nil, []string{"a"})},
			[]string{"a"}, "u", []string{}},
		{"deleting dependency", []Role{role("a", []string{"b"}, nil), deleting(role("b", []string{"c"}, nil)), role("c", nil, nil)},
			[]string{"a"}, "u", []string{"a"}},
		{"deleting aggregate", []Role{role("a", nil, nil), deleting(role("tpl", []string{"c"}, []string{"a"})), role("c", nil, nil)},
			[]string{"a"}, "u", []string{"a"}},
		{"deleting dependency reached another way", []Role{role("a", []string{"b", "c"}, nil), deleting(role("b", nil, nil)), role("c", []string{"b"}, nil)},
			[]string{"a"}, "u", []string{"a", "c"}},

		// Missing roles grant nothing.
		{"missing bound role", []Role{role("a", nil, nil)}, []string{"a", "ghost"}, "u", []string{"a"}},
		{"bad dependency JSON", []Role{{Name: "a", Annotations: map[string]string{depsAnno: "[b"}}, role("b", nil, nil)},
			[]string{"a"}, "u", []string{"a"}},
		{"blank dependency annotation", []Role{{Name: "a", Annotations: map[string]string{depsAnno: "  "}}},
			[]string{"a"}, "u", []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResolver(testBrand)
			for _, ro := range tc.roles {
				r.PutRole(ro)
			}
			for i, b := range tc.bound {
				r.PutBinding(Binding{Name: fmt.Sprintf("b%d", i), RoleRef: b, Users: []string{"u"}})
			}
			got := r.EffectiveRoles(tc.user)
			if !slices.Equal(got, tc.want) {
				t.Errorf("EffectiveRoles(%q) with bound %v = %v, want %v", tc.user, tc.bound, got, tc.want)
			}
		})
	}
}

func TestBoundRolesAndRoleNames(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role("b", nil, nil))
	r.PutRole(role("a", nil, nil))
	r.PutBinding(Binding{Name: "1", RoleRef: "b", Users: []string{"ann", "bob"}})
	r.PutBinding(Binding{Name: "2", RoleRef: "ghost", Users: []string{"ann", "ann"}})
	r.PutBinding(Binding{Name: "3", RoleRef: "b", Users: []string{"ann"}})
	if got, want := r.BoundRoles("ann"), []string{"b", "ghost"}; !slices.Equal(got, want) {
		t.Errorf("BoundRoles(ann) = %v, want %v", got, want)
	}
	if got := r.BoundRoles("nobody"); got == nil || len(got) != 0 {
		t.Errorf("BoundRoles(nobody) = %#v, want empty", got)
	}
	if got, want := r.RoleNames(), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("RoleNames() = %v, want %v", got, want)
	}
	// Two bindings grant b to ann: removing one keeps it.
	r.DeleteBinding("1")
	if got, want := r.BoundRoles("ann"), []string{"b", "ghost"}; !slices.Equal(got, want) {
		t.Errorf("after deleting binding 1, BoundRoles(ann) = %v, want %v", got, want)
	}
	if got := r.BoundRoles("bob"); len(got) != 0 {
		t.Errorf("after deleting binding 1, BoundRoles(bob) = %v, want none", got)
	}
	// Re-putting a binding with other users moves the grant.
	r.PutBinding(Binding{Name: "3", RoleRef: "b", Users: []string{"bob"}})
	if got, want := r.BoundRoles("ann"), []string{"ghost"}; !slices.Equal(got, want) {
		t.Errorf("after moving binding 3, BoundRoles(ann) = %v, want %v", got, want)
	}
	if got, want := r.BoundRoles("bob"), []string{"b"}; !slices.Equal(got, want) {
		t.Errorf("after moving binding 3, BoundRoles(bob) = %v, want %v", got, want)
	}
	r.DeleteBinding("2")
	r.DeleteBinding("3")
	r.DeleteBinding("missing")
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.users) != 0 || len(r.sets) != 0 {
		t.Errorf("after deleting every binding: %d users, %d sets left, want none", len(r.users), len(r.sets))
	}
}

// TestAuthorizeHaloResolver runs Halo's DefaultRuleResolverTest vectors
// (§10.B) through bindings.
func TestAuthorizeHaloResolver(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(Role{Name: "ruleReadPost", Rules: []PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"posts"}, Verbs: []string{"list", "get"}},
		{APIGroups: []string{""}, Resources: []string{"categories"}, Verbs: []string{"*"}},
		{APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo/bar"}, Verbs: []string{"*"}},
		{APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"/healthy"}, Verbs: []string{"get", "post", "head"}},
	}})
	r.PutBinding(Binding{Name: "admin-ruleReadPost", RoleRef: "ruleReadPost", Users: []string{"admin"}})
	cases := []struct {
		method, path string
		want         bool
	}{
		{"GET", "/api/v1/tags", false},
		{"GET", "/api/v1/tags/tagName", false},
		{"GET", "/api/v1/categories/aName", true},
		{"POST", "/api/v1//categories", true},
		{"DELETE", "/api/v1/categories", true},
		{"GET", "/api/v1/posts", true},
		{"GET", "/api/v1/posts/aName", true},
		{"DELETE", "/api/v1/posts", false},
		{"UPDATE", "/api/v1/posts/aName", false},
		{"GET", "/apis/group/v1/posts", false},
		{"GET", "/apis/api.plugin.halo.run/v1alpha1/plugins/foo/users", true},
		{"GET", "/apis/api.plugin.halo.run/v1alpha1/plugins/foo/users/bar", true},
		{"GET", "/apis/api.plugin.halo.run/v1alpha1/plugins/foo/posts/bar", false},
		{"GET", "/healthy", true},
		{"POST", "/healthy", true},
		{"HEAD", "/healthy", true},
		{"GET", "//healthy", false},
		{"GET", "/healthy/name", false},
		{"GET", "/healthy1", false},
		{"GET", "//healthy//name", false},
		{"GET", "/", false},
	}
	for _, tc := range cases {
		info := mustParse(tc.method, tc.path)
		if got := r.Authorize("admin", info); got != tc.want {
			t.Errorf("admin %s %s = %v, want %v", tc.method, tc.path, got, tc.want)
		}
		if r.Authorize("other", info) || r.Authorize("", info) {
			t.Errorf("%s %s allowed for a user without the binding", tc.method, tc.path)
		}
	}
}

// TestAuthorizeAggregatedAnonymous is Halo's
// anonymousUserShouldAccessResourcesByAggregatedRoles.
func TestAuthorizeAggregatedAnonymous(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role(AnonymousRole, nil, nil))
	info := mustParse("GET", "/apis/fake.halo.run/v1/fakes")
	if r.Authorize("", info) {
		t.Fatal("anonymous allowed before the aggregated role exists")
	}
	r.PutRole(role("fake-role-with-aggregate-to-anonymous", nil, []string{AnonymousRole},
		PolicyRule{APIGroups: []string{"fake.halo.run"}, Resources: []string{"fakes"}, Verbs: []string{"list"}}))
	if !r.Authorize("", info) || !r.Authorize("someone", info) {
		t.Error("aggregated anonymous rule does not apply to anonymous and signed-in requesters")
	}
}

func TestInvalidation(t *testing.T) {
	r := NewResolver(testBrand)
	get := mustParse("GET", "/apis/g/v1/things/x")
	list := mustParse("GET", "/apis/g/v1/things")
	r.PutRole(role("viewer", nil, nil, getRule("g", "things")))
	r.PutRole(role(AuthenticatedRole, nil, nil))
	steps := []struct {
		name   string
		change func()
		user   string
		info   *RequestInfo
		want   bool
	}{
		{"no binding", func() {}, "ann", get, false},
		{"add binding", func() { r.PutBinding(Binding{Name: "b1", RoleRef: "viewer", Users: []string{"ann"}}) }, "ann", get, true},
		{"other user unaffected", func() {}, "bob", get, false},
		{"binding names another user", func() { r.PutBinding(Binding{Name: "b1", RoleRef: "viewer", Users: []string{"bob"}}) }, "ann", get, false},
		{"now bob", func() {}, "bob", get, true},
		{"edit role rules", func() {
			r.PutRole(role("viewer", nil, nil, PolicyRule{APIGroups: []string{"g"}, Resources: []string{"things"}, Verbs: []string{"list"}}))
		}, "bob", get, false},
		{"edited rule applies", func() {}, "bob", list, true},
		{"add aggregated role", func() { r.PutRole(role("tpl", nil, []string{"viewer"}, getRule("g", "things"))) }, "bob", get, true},
		{"delete aggregated role", func() { r.DeleteRole("tpl") }, "bob", get, false},
		{"aggregate into authenticated", func() { r.PutRole(role("tpl2", nil, []string{AuthenticatedRole}, getRule("g", "things"))) }, "carol", get, true},
		{"aggregation label removed", func() { r.PutRole(role("tpl2", nil, nil, getRule("g", "things"))) }, "carol", get, false},
		{"dependency added", func() {
			r.PutRole(role("viewer", []string{"tpl2"}, nil, PolicyRule{APIGroups: []string{"g"}, Resources: []string{"things"}, Verbs: []string{"list"}}))
		}, "bob", get, true},
		{"dependency marked deleting", func() { ro := role("tpl2", nil, nil, getRule("g", "things")); ro.Deleting = true; r.PutRole(ro) }, "bob", get, false},
		{"bound role deleted", func() { r.DeleteRole("viewer") }, "bob", list, false},
		{"bound role recreated", func() { r.PutRole(role("viewer", nil, nil, getRule("g", "things"))) }, "bob", get, true},
		{"binding deleted", func() { r.DeleteBinding("b1") }, "bob", get, false},
	}
	for _, s := range steps {
		s.change()
		if got := r.Authorize(s.user, s.info); got != s.want {
			t.Fatalf("step %q: Authorize(%q, %s %s) = %v, want %v", s.name, s.user, s.info.Verb, s.info.Path, got, s.want)
		}
	}
}

func TestAuthorizeRoles(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role(AuthenticatedRole, nil, nil, PolicyRule{NonResourceURLs: []string{"/me"}, Verbs: []string{"get"}}))
	r.PutRole(role("a", []string{"a-dep"}, nil, getRule("g", "as")))
	r.PutRole(role("a-dep", nil, nil, getRule("g", "adeps")))
	r.PutRole(role("b", nil, nil, getRule("g", "bs")))
	r.PutRole(role("c", nil, nil, getRule("g", "cs")))
	r.PutBinding(Binding{Name: "ua", RoleRef: "a", Users: []string{"u"}})
	r.PutBinding(Binding{Name: "ub", RoleRef: "b", Users: []string{"u"}})
	me := mustParse("GET", "/me")
	a, adep, b, c := mustParse("GET", "/apis/g/v1/as/x"), mustParse("GET", "/apis/g/v1/adeps/x"), mustParse("GET", "/apis/g/v1/bs/x"), mustParse("GET", "/apis/g/v1/cs/x")
	cases := []struct {
		name  string
		user  string
		roles []string
		info  *RequestInfo
		want  bool
	}{
		{"token role", "u", []string{"a"}, a, true},
		{"token role dependency", "u", []string{"a"}, adep, true},
		{"role not in token", "u", []string{"a"}, b, false},
		{"authenticated always", "u", nil, me, true},
		{"role not bound", "u", []string{"a", "c"}, c, false},
		{"all bound roles", "u", []string{"b", "a", "a"}, b, true},
		{"no bindings left", "v", []string{"a"}, a, false},
		{"no bindings left, authenticated", "v", []string{"a"}, me, true},
		{"anonymous token owner", "", []string{"a"}, me, false},
	}
	for _, tc := range cases {
		if got := r.AuthorizeRoles(tc.user, tc.roles, tc.info); got != tc.want {
			t.Errorf("%s: AuthorizeRoles(%q, %v, %s) = %v, want %v", tc.name, tc.user, tc.roles, tc.info.Path, got, tc.want)
		}
	}
	// Unbinding a role takes it from the user's tokens at once.
	r.DeleteBinding("ua")
	if r.AuthorizeRoles("u", []string{"a"}, a) {
		t.Error("token still holds role a after its binding was deleted")
	}
	// A cached token set follows role edits.
	r.PutBinding(Binding{Name: "uc", RoleRef: "c", Users: []string{"u"}})
	if !r.AuthorizeRoles("u", []string{"c"}, c) {
		t.Fatal("token role c not granted")
	}
	r.PutRole(role("c", nil, nil, getRule("g", "others")))
	if r.AuthorizeRoles("u", []string{"c"}, c) {
		t.Error("token role c still grants its old rules after an edit")
	}
}

func TestLimitedCacheIsBounded(t *testing.T) {
	r := NewResolver(testBrand)
	var names []string
	for i := range 12 {
		n := fmt.Sprintf("r%d", i)
		names = append(names, n)
		r.PutRole(role(n, nil, nil, getRule("g", n)))
		r.PutBinding(Binding{Name: n, RoleRef: n, Users: []string{"u"}})
	}
	info := mustParse("GET", "/apis/g/v1/r0/x")
	for mask := 1; mask < 1<<12; mask++ {
		var sub []string
		for i, n := range names {
			if mask&(1<<i) != 0 {
				sub = append(sub, n)
			}
		}
		if got, want := r.AuthorizeRoles("u", sub, info), mask&1 != 0; got != want {
			t.Fatalf("AuthorizeRoles(u, %v) = %v, want %v", sub, got, want)
		}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if n := len(r.limited); n > limitedCacheSize {
		t.Errorf("token set cache holds %d sets, want at most %d", n, limitedCacheSize)
	}
}

func TestAuthorizeDoesNotAllocate(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role(AnonymousRole, nil, nil, PolicyRule{NonResourceURLs: []string{"/healthz"}, Verbs: []string{"get"}}))
	r.PutRole(role("a", nil, nil, getRule("g", "as")))
	r.PutRole(role("b", nil, nil, getRule("g", "bs")))
	r.PutBinding(Binding{Name: "a", RoleRef: "a", Users: []string{"u"}})
	r.PutBinding(Binding{Name: "b", RoleRef: "b", Users: []string{"u"}})
	info := mustParse("GET", "/apis/g/v1/bs/x")
	token := []string{"b"}
	for name, f := range map[string]func(){
		"Authorize":            func() { r.Authorize("u", info) },
		"Authorize anonymous":  func() { r.Authorize("", info) },
		"Authorize unbound":    func() { r.Authorize("nobody", info) },
		"AuthorizeRoles":       func() { r.AuthorizeRoles("u", token, info) },
		"AuthorizeRoles whole": func() { r.AuthorizeRoles("u", []string{"a", "b"}, info) },
	} {
		f() // compile
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s allocated %v times per call, want 0", name, n)
		}
	}
}

// TestRuleIndexMatchesRulesAllow checks the property the index rests on:
// over random rules and requests, it answers exactly as RulesAllow.
func TestRuleIndexMatchesRulesAllow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sets := 3000
	if testing.Short() {
		sets = 300
	}
	for i := range sets {
		// Every other set is large enough to file candidates by name.
		n := 1 + rng.IntN(12)
		if i%2 == 1 {
			n = 20 + rng.IntN(40)
		}
		rules := randomRules(rng, n)
		ix := indexOf(rules)
		for range 60 {
			info := randomRequest(rng)
			if got, want := ix.allows(info), RulesAllow(rules, info); got != want {
				t.Fatalf("index says %v, RulesAllow says %v\nrequest %+v\nrules %+v", got, want, *info, rules)
			}
		}
	}
}

// TestRuleIndexByName aims the same property at long candidate lists of
// one verb, group and resource that differ in resource names, where the
// index files rules by the name's first segment.
func TestRuleIndexByName(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for set := range 2000 {
		rules := make([]PolicyRule, nameIndexMin+rng.IntN(20))
		for i := range rules {
			rules[i] = PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"g"}, Resources: []string{"posts"}}
			// Most sets have no rule for any name, which would allow
			// every request and hide a miss.
			for set%4 != 0 && len(rules[i].ResourceNames) == 0 {
				rules[i].ResourceNames = pick(rng, nameVocab[1:], 2)
			}
			if set%4 == 0 && rng.IntN(5) > 0 {
				rules[i].ResourceNames = pick(rng, nameVocab, 2)
			}
			if rng.IntN(10) == 0 {
				rules[i].Resources = []string{"*"}
			}
		}
		ix := indexOf(rules)
		for range 40 {
			info := &RequestInfo{IsResourceRequest: true, Verb: "get", APIGroup: "g", Resource: "posts",
				Name: segVocab[rng.IntN(len(segVocab))], SubName: segVocab[rng.IntN(len(segVocab))]}
			if got, want := ix.allows(info), RulesAllow(rules, info); got != want {
				t.Fatalf("index says %v, RulesAllow says %v\nrequest %+v\nrules %+v", got, want, *info, rules)
			}
		}
	}
}

// FuzzRuleIndex drives the same property from the fuzzer.
func FuzzRuleIndex(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(42), uint64(7))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		rng := rand.New(rand.NewPCG(a, b))
		rules := randomRules(rng, 1+rng.IntN(50))
		ix := indexOf(rules)
		for range 20 {
			info := randomRequest(rng)
			if got, want := ix.allows(info), RulesAllow(rules, info); got != want {
				t.Fatalf("index says %v, RulesAllow says %v\nrequest %+v\nrules %+v", got, want, *info, rules)
			}
		}
	})
}

// The vocabularies are small so that random rules and requests meet.
var (
	verbVocab     = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "post", "head", "", "*"}
	groupVocab    = []string{"", "g", "h.example.com", "*"}
	resourceVocab = []string{"posts", "tags", "posts/status", "tags/status", "posts/publish", "*/status", "*/publish", "*", "*/", "posts/", "a/b/c", "", "**", "/status"}
	nameVocab     = []string{"*", "a", "a*", "*a", "a/b", "*/b", "a/*", "", "-", "ab*/*b", "**"}
	urlVocab      = []string{"*", "/healthz", "/healthz/*", "/swagger*", "/a", "/a/b", "/a/**", "/", "*x", "/a*b"}
	pathVocab     = []string{"/healthz", "/healthz/x", "/healthz/", "/swagger-ui/", "/swagger", "/a", "/a/b", "/a/bc", "/", "//a", "*x", "/a*b", "/b"}
	segVocab      = []string{"", "a", "b", "ab", "ba", "*", "-", "xa"}
	resSegVocab   = []string{"posts", "tags", "*", "x", "", "status", "publish"}
)

func pick(rng *rand.Rand, vocab []string, max int) []string {
	n := rng.IntN(max + 1)
	out := make([]string, 0, n)
	for range n {
		out = append(out, vocab[rng.IntN(len(vocab))])
	}
	return out
}

func randomRules(rng *rand.Rand, n int) []PolicyRule {
	rules := make([]PolicyRule, n)
	for i := range rules {
		r := &rules[i]
		r.Verbs = pick(rng, verbVocab, 3)
		if rng.IntN(3) > 0 {
			r.APIGroups = pick(rng, groupVocab, 2)
			r.Resources = pick(rng, resourceVocab, 3)
			if rng.IntN(2) == 0 {
				r.ResourceNames = pick(rng, nameVocab, 2)
			}
		}
		if rng.IntN(3) == 0 {
			r.NonResourceURLs = pick(rng, urlVocab, 3)
		}
	}
	return rules
}

func randomRequest(rng *rand.Rand) *RequestInfo {
	v := func(vocab []string) string { return vocab[rng.IntN(len(vocab))] }
	if rng.IntN(4) == 0 {
		return &RequestInfo{Verb: v(verbVocab), Path: v(pathVocab)}
	}
	info := &RequestInfo{IsResourceRequest: true, Verb: v(verbVocab), APIGroup: v(groupVocab), Resource: v(resSegVocab), Name: v(segVocab)}
	if rng.IntN(2) == 0 {
		info.Subresource = v(resSegVocab)
		if rng.IntN(2) == 0 {
			info.SubName = v(segVocab)
		}
	}
	if rng.IntN(20) == 0 {
		// Hand-built info the parser never produces.
		info.Resource = "posts/status"
	}
	return info
}

func TestRulesCover(t *testing.T) {
	super := []PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}}
	rule := func(verbs, groups, resources, names []string) PolicyRule {
		return PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
	}
	l := func(s ...string) []string { return s }
	cases := []struct {
		name  string
		owner []PolicyRule
		rules []PolicyRule
		want  bool
	}{
		{"super covers everything", super, []PolicyRule{rule(l("*"), l("*"), l("*"), nil), {NonResourceURLs: l("*"), Verbs: l("*")}}, true},
		{"nothing to cover", nil, nil, true},
		{"rule without verbs grants nothing", nil, []PolicyRule{{APIGroups: l("*"), Resources: l("*")}}, true},
		{"empty owner", nil, []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, false},
		{"exact", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, true},
		{"verb star covers", []PolicyRule{rule(l("*"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get", "delete"), l("g"), l("posts"), nil)}, true},
		{"star verb not covered by list", []PolicyRule{rule(l("get", "list"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("*"), l("g"), l("posts"), nil)}, false},
		{"missing verb", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get", "list"), l("g"), l("posts"), nil)}, false},
		{"verbs from two owner rules", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil), rule(l("list"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get", "list"), l("g"), l("posts"), nil)}, true},
		{"group star covers", []PolicyRule{rule(l("get"), l("*"), l("posts"), nil)}, []PolicyRule{rule(l("get"), l("g", ""), l("posts"), nil)}, true},
		{"star group not covered", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get"), l("*"), l("posts"), nil)}, false},
		{"other group", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get"), l("h"), l("posts"), nil)}, false},
		{"resource star covers subresource", []PolicyRule{rule(l("get"), l("g"), l("*"), nil)}, []PolicyRule{rule(l("get"), l("g"), l("posts/status", "*/x"), nil)}, true},
		{"resource does not cover subresource", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get"), l("g"), l("posts/status"), nil)}, false},
		{"star subresource covers", []PolicyRule{rule(l("get"), l("g"), l("*/status"), nil)}, []PolicyRule{rule(l("get"), l("g"), l("posts/status", "*/status"), nil)}, true},
		{"star subresource does not cover resource", []PolicyRule{rule(l("get"), l("g"), l("*/status"), nil)}, []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, false},
		{"subresource does not cover star subresource", []PolicyRule{rule(l("get"), l("g"), l("posts/status"), nil)}, []PolicyRule{rule(l("get"), l("g"), l("*/status"), nil)}, false},
		{"any name covers names", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a", "b*"))}, true},
		{"names do not cover any name", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, false},
		{"star name covers any name", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("*"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, true},
		{"exact names", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a", "b"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("b"))}, true},
		{"name not held", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("b"))}, false},
		{"prefix covers longer prefix", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("ab*"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("abc*", "abx"))}, true},
		{"prefix does not cover shorter prefix", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("ab*"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a*"))}, false},
		{"suffix covers", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("*b"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("*ab", "xb"))}, true},
		{"suffix does not cover prefix", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("*b"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("b*"))}, false},
		{"one segment covers deeper names", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a/b"))}, true},
		{"deeper owner needs star", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a/b"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a"))}, false},
		{"deeper star owner", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a/*"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a"))}, true},
		{"star segments", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("*/b"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a/b", "x*/b"))}, true},
		{"star segment not covered by literal", []PolicyRule{rule(l("get"), l("g"), l("posts"), l("a/b"))}, []PolicyRule{rule(l("get"), l("g"), l("posts"), l("*/b"))}, false},
		{"url exact", []PolicyRule{{NonResourceURLs: l("/a"), Verbs: l("get")}}, []PolicyRule{{NonResourceURLs: l("/a"), Verbs: l("get")}}, true},
		{"url prefix covers", []PolicyRule{{NonResourceURLs: l("/a/*"), Verbs: l("get")}}, []PolicyRule{{NonResourceURLs: l("/a/b", "/a/b/*"), Verbs: l("get")}}, true},
		{"url prefix excludes parent", []PolicyRule{{NonResourceURLs: l("/a/*"), Verbs: l("get")}}, []PolicyRule{{NonResourceURLs: l("/a"), Verbs: l("get")}}, false},
		{"url wider prefix not covered", []PolicyRule{{NonResourceURLs: l("/a/*"), Verbs: l("get")}}, []PolicyRule{{NonResourceURLs: l("/*"), Verbs: l("get")}}, false},
		{"url star", []PolicyRule{{NonResourceURLs: l("*"), Verbs: l("get")}}, []PolicyRule{{NonResourceURLs: l("*", "/x"), Verbs: l("get")}}, true},
		{"url verb", []PolicyRule{{NonResourceURLs: l("*"), Verbs: l("get")}}, []PolicyRule{{NonResourceURLs: l("/x"), Verbs: l("post")}}, false},
		{"resource rule does not cover url", []PolicyRule{rule(l("*"), l("*"), l("*"), nil)}, []PolicyRule{{NonResourceURLs: l("/x"), Verbs: l("get")}}, false},
		{"url rule does not cover resource", []PolicyRule{{NonResourceURLs: l("*"), Verbs: l("*")}}, []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, false},
		{"mixed rule needs both", []PolicyRule{rule(l("get"), l("g"), l("posts"), nil)}, []PolicyRule{{APIGroups: l("g"), Resources: l("posts"), NonResourceURLs: l("/x"), Verbs: l("get")}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RulesCover(tc.owner, tc.rules); got != tc.want {
				t.Errorf("RulesCover(%+v, %+v) = %v, want %v", tc.owner, tc.rules, got, tc.want)
			}
		})
	}
}

// TestRulesCoverIsSound checks over random rules that whatever Covers
// accepts, the owner really allows: no request allowed by the granted
// rules is refused by the owner's.
func TestRulesCoverIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	covered := 0
	for range 20000 {
		owner := randomRules(rng, 1+rng.IntN(4))
		rules := randomRules(rng, 1)
		if !RulesCover(rules, rules) {
			t.Fatalf("rules do not cover themselves: %+v", rules)
		}
		if !RulesCover(owner, rules) {
			continue
		}
		covered++
		for range 50 {
			info := randomRequest(rng)
			if RulesAllow(rules, info) && !RulesAllow(owner, info) {
				t.Fatalf("Covers accepted rules the owner does not hold\nowner %+v\nrules %+v\nrequest %+v", owner, rules, *info)
			}
		}
	}
	if covered < 100 {
		t.Fatalf("only %d random cases were covered; the test checks too little", covered)
	}
}

// TestCoverPartsAreSound checks each comparison Covers is built from
// against the matcher, exhaustively over small vocabularies: when an owner
// entry is said to cover a granted one, every request the granted entry
// matches, the owner entry matches too. It also checks every entry covers
// itself.
func TestCoverPartsAreSound(t *testing.T) {
	names := []string{"", "*", "a", "a*", "*a", "ab", "ab*", "*ab", "b", "*b", "a/b", "*/b", "a/*", "*/*", "a*/b", "**", "*a*", "a*b", "/a", "a//b"}
	segs := []string{"", "a", "b", "ab", "ba", "aab", "abb", "x", "*", "a*", "*a", "xa", "bx", "a*b"}
	for _, o := range names {
		for _, g := range names {
			if !patternCovers(o, g) {
				if o == g {
					t.Errorf("name pattern %q does not cover itself", o)
				}
				continue
			}
			for _, n := range segs {
				for _, sn := range segs {
					if nameMatches(g, n, sn) && !nameMatches(o, n, sn) {
						t.Errorf("patternCovers(%q, %q) but %q/%q matches only the second", o, g, n, sn)
					}
				}
			}
		}
	}
	urls := []string{"*", "/a", "/a*", "/a/*", "/ab*", "/*", "**", "/a**", "*x", "/a*b", "/", "/a/b"}
	paths := []string{"/a", "/ab", "/a/", "/a/b", "/", "*", "*x", "/a*b", "/b", "", "/a*", "/abc"}
	for _, o := range urls {
		for _, g := range urls {
			if !urlCovers([]string{o}, g) {
				if o == g {
					t.Errorf("URL %q does not cover itself", o)
				}
				continue
			}
			for _, p := range paths {
				if urlMatches([]string{g}, p) && !urlMatches([]string{o}, p) {
					t.Errorf("urlCovers(%q, %q) but %q matches only the second", o, g, p)
				}
			}
		}
	}
	resources := []string{"*", "posts", "posts/status", "*/status", "tags/status", "*/x", "posts/", "*/", "a/b/c", "**"}
	reqs := [][2]string{{"posts", ""}, {"posts", "status"}, {"tags", "status"}, {"x", "x"}, {"*", ""}, {"*", "status"}, {"posts", "x"}, {"**", ""}}
	for _, o := range resources {
		for _, g := range resources {
			if !resourceCovers([]string{o}, g) {
				if o == g {
					t.Errorf("resource %q does not cover itself", o)
				}
				continue
			}
			for _, rq := range reqs {
				if resourceMatches([]string{g}, rq[0], rq[1]) && !resourceMatches([]string{o}, rq[0], rq[1]) {
					t.Errorf("resourceCovers(%q, %q) but %v matches only the second", o, g, rq)
				}
			}
		}
	}
}

func TestResolverCovers(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role("super-role", nil, nil, PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}))
	r.PutRole(role("view", nil, nil, PolicyRule{APIGroups: []string{"g"}, Resources: []string{"things"}, Verbs: []string{"get", "list"}}))
	r.PutRole(role("manage", []string{"view"}, nil, PolicyRule{APIGroups: []string{"g"}, Resources: []string{"things"}, Verbs: []string{"create", "delete"}}))
	r.PutRole(role("tpl", nil, []string{"manage"}, PolicyRule{APIGroups: []string{"g"}, Resources: []string{"things/status"}, Verbs: []string{"update"}}))
	r.PutBinding(Binding{Name: "admin", RoleRef: "super-role", Users: []string{"admin"}})
	r.PutBinding(Binding{Name: "ann", RoleRef: "manage", Users: []string{"ann"}})
	r.PutBinding(Binding{Name: "bob", RoleRef: "view", Users: []string{"bob"}})

	manage := r.RulesFor([]string{"manage"})
	if len(manage) != 3 {
		t.Fatalf("RulesFor(manage) = %+v, want its own, view's and tpl's rules", manage)
	}
	for _, tc := range []struct {
		user  string
		rules []PolicyRule
		want  bool
	}{
		{"admin", manage, true},
		{"admin", r.RulesFor([]string{"super-role"}), true},
		{"ann", manage, true},
		{"ann", r.RulesFor([]string{"view"}), true},
		{"ann", r.RulesFor([]string{"super-role"}), false},
		{"bob", manage, false},
		{"bob", r.RulesFor([]string{"view"}), true},
		{"", r.RulesFor([]string{"view"}), false},
		{"bob", r.RulesFor([]string{"ghost"}), true},
	} {
		if got := r.Covers(tc.user, tc.rules); got != tc.want {
			t.Errorf("Covers(%q, %+v) = %v, want %v", tc.user, tc.rules, got, tc.want)
		}
	}
}

// TestConcurrentDecisions runs decisions while roles and bindings change;
// run it with -race. Each reader also checks an invariant that holds at
// every moment: user "stable" keeps a role no writer touches.
func TestConcurrentDecisions(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role("stable", nil, nil, getRule("g", "stable")))
	r.PutBinding(Binding{Name: "stable", RoleRef: "stable", Users: []string{"stable"}})
	stable := mustParse("GET", "/apis/g/v1/stable/x")
	var writers, readers sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		writers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := fmt.Sprintf("r%d", rng.IntN(8))
				switch rng.IntN(6) {
				case 0:
					r.PutRole(role(n, []string{fmt.Sprintf("r%d", rng.IntN(8))}, []string{fmt.Sprintf("r%d", rng.IntN(8))}, getRule("g", n)))
				case 1:
					r.DeleteRole(n)
				case 2, 3:
					r.PutBinding(Binding{Name: fmt.Sprintf("b%d", rng.IntN(8)), RoleRef: n, Users: []string{fmt.Sprintf("u%d", rng.IntN(4))}})
				default:
					r.DeleteBinding(fmt.Sprintf("b%d", rng.IntN(8)))
				}
			}
		})
	}
	errs := make(chan string, 4)
	for rd := range 4 {
		readers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(rd), 7))
			for range 2000 {
				u := fmt.Sprintf("u%d", rng.IntN(4))
				info := mustParse("GET", fmt.Sprintf("/apis/g/v1/r%d/x", rng.IntN(8)))
				r.Authorize(u, info)
				r.AuthorizeRoles(u, []string{"r1", "r2"}, info)
				r.EffectiveRoles(u)
				r.BoundRoles(u)
				r.Covers(u, []PolicyRule{getRule("g", "r1")})
				if !r.Authorize("stable", stable) {
					errs <- "user stable lost its role during unrelated changes"
					return
				}
			}
		})
	}
	readers.Wait()
	close(stop)
	writers.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// indexOf indexes a plain rule list.
func indexOf(rules []PolicyRule) *ruleIndex {
	ptrs := make([]*PolicyRule, len(rules))
	for i := range rules {
		ptrs[i] = &rules[i]
	}
	return newRuleIndex(ptrs)
}

// TestRulesWith: the rules a role would grant if stored as given, in place
// of the known role of its name, aggregates and dependencies included.
func TestRulesWith(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role("secret", nil, []string{"target"}, getRule("g", "secrets")))
	r.PutRole(role("dep", nil, nil, getRule("g", "deps")))
	r.PutRole(role("target", nil, nil, getRule("g", "old")))
	resources := func(rules []PolicyRule) []string {
		var out []string
		for _, p := range rules {
			out = append(out, p.Resources...)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		role Role
		want []string
	}{
		{"an existing name takes in what aggregates into it", role("target", nil, nil), []string{"secrets"}},
		{"own rules and dependencies", role("target", []string{"dep"}, nil, getRule("g", "new")), []string{"deps", "new", "secrets"}},
		{"a new name with nothing aggregated", role("fresh", []string{"missing"}, nil), nil},
		{"a role being deleted grants nothing", Role{Name: "target", Rules: []PolicyRule{getRule("g", "x")}, Deleting: true}, nil},
	} {
		if got := resources(r.RulesWith(tc.role)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: RulesWith = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The stored role is unchanged.
	if got := resources(r.RulesFor([]string{"target"})); !slices.Equal(got, []string{"old", "secrets"}) {
		t.Errorf("RulesFor(target) after RulesWith = %v", got)
	}
}
