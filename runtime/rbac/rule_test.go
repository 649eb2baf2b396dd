package rbac

import (
	"encoding/json"
	"strings"
	"testing"
)

func res(verb, group, resource, sub, name, subName string) *RequestInfo {
	return &RequestInfo{IsResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name, SubName: subName}
}

func nonRes(verb, path string) *RequestInfo {
	return &RequestInfo{Verb: verb, Path: path}
}

func TestRuleAllows(t *testing.T) {
	cases := []struct {
		name string
		rule PolicyRule
		req  *RequestInfo
		want bool
	}{
		// Kubernetes TestRuleMatches
		{"star verb", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"group1"}, Resources: []string{"resource1"}}, res("verb1", "group1", "resource1", "", "", ""), true},
		{"star verb, other group", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"group1"}, Resources: []string{"resource1"}}, res("verb1", "group2", "resource1", "", "", ""), false},
		{"star verb, other resource", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"group1"}, Resources: []string{"resource1"}}, res("verb2", "group1", "resource2", "", "", ""), false},
		{"star group", PolicyRule{Verbs: []string{"verb1"}, APIGroups: []string{"*"}, Resources: []string{"resource1"}}, res("verb1", "group2", "resource1", "", "", ""), true},
		{"star group, other verb", PolicyRule{Verbs: []string{"verb1"}, APIGroups: []string{"*"}, Resources: []string{"resource1"}}, res("verb2", "group2", "resource1", "", "", ""), false},
		{"star resource", PolicyRule{Verbs: []string{"verb1"}, APIGroups: []string{"group1"}, Resources: []string{"*"}}, res("verb1", "group1", "resource2", "", "", ""), true},
		{"star resource covers subresource", PolicyRule{Verbs: []string{"verb1"}, APIGroups: []string{"group1"}, Resources: []string{"*"}}, res("verb1", "group1", "resource2", "sub", "", ""), true},
		{"tuple expansion", PolicyRule{Verbs: []string{"verb1", "verb2"}, APIGroups: []string{"group1", "group2"}, Resources: []string{"resource1", "resource2"}}, res("verb2", "group2", "resource2", "", "", ""), true},
		{"subresource", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"resource1/subresource1"}}, res("verb1", "group1", "resource1", "subresource1", "x", ""), true},
		{"other subresource", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"resource1/subresource1"}}, res("verb1", "group1", "resource1", "subresource2", "x", ""), false},
		{"subresource of other resource", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"resource1/subresource1"}}, res("verb1", "group1", "resource2", "subresource1", "x", ""), false},
		{"resource does not cover subresource", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"pods"}}, res("get", "", "pods", "status", "x", ""), false},
		{"subresource does not cover resource", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"pods/status"}}, res("get", "", "pods", "", "x", ""), false},
		{"star subresource", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/status"}}, res("get", "", "posts", "status", "foo", ""), true},
		{"star subresource, other sub", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/status"}}, res("get", "", "posts", "scale", "foo", ""), false},
		{"star subresource, no sub", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/status"}}, res("get", "", "posts", "", "foo", ""), false},
		{"no verbs grants nothing", PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, NonResourceURLs: []string{"*"}}, res("get", "", "posts", "", "", ""), false},
		{"no verbs grants nothing (non-resource)", PolicyRule{NonResourceURLs: []string{"*"}}, nonRes("get", "/x"), false},
		{"no groups grants no resource", PolicyRule{Verbs: []string{"*"}, Resources: []string{"*"}}, res("get", "", "posts", "", "", ""), false},
		{"resource rule does not grant URLs", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, nonRes("get", "/healthz"), false},
		{"URL rule does not grant resources", PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, res("get", "", "posts", "", "", ""), false},
		{"empty verb needs star", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, res("", "", "posts", "", "x", ""), false},

		// non-resource URLs (Kubernetes TestRuleMatches, Halo DefaultRuleResolverTest)
		{"star url", PolicyRule{Verbs: []string{"verb1"}, NonResourceURLs: []string{"*"}}, nonRes("verb1", "/foo/bar/one"), true},
		{"star url, other verb", PolicyRule{Verbs: []string{"verb1"}, NonResourceURLs: []string{"*"}}, nonRes("verb2", "/foo"), false},
		{"url prefix excludes parent", PolicyRule{Verbs: []string{"verb1"}, NonResourceURLs: []string{"/foo/*"}}, nonRes("verb1", "/foo"), false},
		{"url prefix", PolicyRule{Verbs: []string{"verb1"}, NonResourceURLs: []string{"/foo/*"}}, nonRes("verb1", "/foo/bar/one"), true},
		{"url prefix, sibling", PolicyRule{Verbs: []string{"verb1"}, NonResourceURLs: []string{"/foo/*"}}, nonRes("verb1", "/notfoo/bar"), false},
		{"exact url", PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"/foo", "/foo/bar/one"}}, nonRes("verb2", "/foo/bar/one"), true},
		{"exact url, other", PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"/foo", "/foo/bar/one"}}, nonRes("verb2", "/foo/bar"), false},
		{"halo /healthy head", PolicyRule{Verbs: []string{"get", "post", "head"}, NonResourceURLs: []string{"/healthy"}}, nonRes("head", "/healthy"), true},
		{"halo //healthy raw", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthy"}}, nonRes("get", "//healthy"), false},
		{"halo /healthy1", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthy"}}, nonRes("get", "/healthy1"), false},
		{"trailing stars stripped", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/swagger-ui/**"}}, nonRes("get", "/swagger-ui/index.html"), true},
		{"prefix without slash", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/swagger*"}}, nonRes("get", "/swagger-ui/"), true},

		// resourceNames (Halo RbacRequestEvaluationTest and docs/api.md)
		{"names: second entry tried", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"posts"}, ResourceNames: []string{"a", "b"}}, res("get", "", "posts", "", "b", ""), true},
		{"names: none match", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"posts"}, ResourceNames: []string{"a", "b"}}, res("get", "", "posts", "", "c", ""), false},
		{"names: empty list is any", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"posts"}}, res("get", "", "posts", "", "c", ""), true},
		{"names: literal needs a name", PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"posts"}, ResourceNames: []string{"a"}}, res("list", "", "posts", "", "", ""), false},
		{"names: star covers the collection", PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"posts"}, ResourceNames: []string{"*"}}, res("list", "", "posts", "", "", ""), true},
		{"names: dash", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"api.console.svc.run"}, Resources: []string{"users"}, ResourceNames: []string{"-"}}, res("get", "api.console.svc.run", "users", "", "-", ""), true},
		{"names: dash, other user", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"api.console.svc.run"}, Resources: []string{"users"}, ResourceNames: []string{"-"}}, res("get", "api.console.svc.run", "users", "", "admin", ""), false},
		{"halo R4 foo", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo"}}, res("get", "api.plugin.halo.run", "plugins", "users", "foo", ""), true},
		{"halo R3 foo/bar", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo/bar"}}, res("get", "api.plugin.halo.run", "plugins", "users", "foo", "bar"), true},
		{"halo R3 foo/bar vs foo", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo/bar"}}, res("get", "api.plugin.halo.run", "plugins", "users", "foo", ""), false},
		{"halo posts/bar not users", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo"}}, res("get", "api.plugin.halo.run", "plugins", "posts", "foo", "bar"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleAllows(&tc.rule, tc.req); got != tc.want {
				t.Errorf("rule %+v, request %+v: got %v, want %v", tc.rule, *tc.req, got, tc.want)
			}
		})
	}
	if RuleAllows(nil, nonRes("get", "/")) || RuleAllows(&PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, nil) {
		t.Error("nil rule or request allowed")
	}
}

// TestNameMatches carries Halo's RbacRequestEvaluationTest.resourceNameMatches
// facts (pattern against "name[/subName]").
func TestNameMatches(t *testing.T) {
	cases := []struct {
		pattern, requested string
		want               bool
	}{
		{"", "fake/test", true},
		{"", "fake", true},
		{"", "", true},
		{"*", "", true},
		{"*/test", "fake/test", true},
		{"*/test", "hello/test", true},
		{"*/test", "hello/fake", false},
		{"test/*", "hello/fake", false},
		{"test/*", "test/fake", true},
		{"test/*", "test", true},
		{"test/*", "hello", false},
		{"*/*", "test/fake", true},
		{"*/*", "test", true},
		{"*", "test", true},
		{"*", "hello", true},
		// derived from the rule: prefix/suffix segments, extra request
		// segments ignored, missing ones are ""
		{"plugin-oauth2", "plugin-oauth2/github", true},
		{"plugin-*", "plugin-oauth2/github", true},
		{"*-oauth2/git*", "plugin-oauth2/github", true},
		{"*-oauth2/git*", "plugin-oauth2/gitlab", true},
		{"*-oauth2/git*", "plugin-oauth2/gh", false},
		{"a/b", "a", false},
		{"a/*", "a", true},
		{"a//b", "a/b", true},
		{"-", "", false},
		{"x", "X", false},
	}
	for _, tc := range cases {
		name, sub, _ := strings.Cut(tc.requested, "/")
		if got := namesMatch([]string{tc.pattern}, name, sub); got != tc.want {
			t.Errorf("pattern %q, name %q: got %v, want %v", tc.pattern, tc.requested, got, tc.want)
		}
	}
}

// TestRulesAllowHaloResolver replays Halo's DefaultRuleResolverTest: one
// role with five rules, requests parsed from method and path.
func TestRulesAllowHaloResolver(t *testing.T) {
	rules := []PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"posts"}, Verbs: []string{"list", "get"}},
		{APIGroups: []string{""}, Resources: []string{"categories"}, Verbs: []string{"*"}},
		{APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo/bar"}, Verbs: []string{"*"}},
		{APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/users"}, ResourceNames: []string{"foo"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"/healthy"}, Verbs: []string{"get", "post", "head"}},
	}
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
		info := ParseRequestInfo(tc.method, tc.path, nil, false)
		if got := RulesAllow(rules, &info); got != tc.want {
			t.Errorf("%s %s (%+v): got %v, want %v", tc.method, tc.path, info, got, tc.want)
		}
	}
}

// TestRulesAllowCorpusLinks uses plugin-links' templates (path-like
// resourceNames such as rss/- named items/summary and links/rss named
// */refresh) against its real routes.
func TestRulesAllowCorpusLinks(t *testing.T) {
	const g = "console.api.link.halo.run"
	view := []PolicyRule{
		{APIGroups: []string{"core.halo.run", g}, Resources: []string{"links", "linkgroups", "linkapplications"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{g}, Resources: []string{"rss"}, ResourceNames: []string{"discovery"}, Verbs: []string{"get"}},
		{APIGroups: []string{g}, Resources: []string{"rss"}, ResourceNames: []string{"items"}, Verbs: []string{"get"}},
		{APIGroups: []string{g}, Resources: []string{"rss/-"}, ResourceNames: []string{"items/summary"}, Verbs: []string{"get"}},
		{APIGroups: []string{g}, Resources: []string{"rss/-"}, ResourceNames: []string{"items/unread-summary"}, Verbs: []string{"get"}},
		{APIGroups: []string{g}, Resources: []string{"*"}, ResourceNames: []string{"items/read"}, Verbs: []string{"create"}},
	}
	manage := []PolicyRule{
		{APIGroups: []string{g}, Resources: []string{"links/sort", "linkgroups/sort"}, ResourceNames: []string{"-"}, Verbs: []string{"create"}},
		{APIGroups: []string{g}, Resources: []string{"links/rss"}, ResourceNames: []string{"*/refresh"}, Verbs: []string{"create"}},
		{APIGroups: []string{g}, Resources: []string{"rss/-"}, ResourceNames: []string{"items/hidden"}, Verbs: []string{"create"}},
	}
	anonymous := []PolicyRule{
		{APIGroups: []string{"api.link.halo.run"}, Resources: []string{"links", "links/random"}, Verbs: []string{"get", "list"}},
		{NonResourceURLs: []string{"/apis/api.link.halo.run/v1alpha1/link-applications/captcha"}, Verbs: []string{"create"}},
	}
	const p = "/apis/" + g + "/v1alpha1/"
	cases := []struct {
		rules        []PolicyRule
		method, path string
		want         bool
	}{
		{view, "GET", p + "links", true},
		{view, "GET", p + "links/l1", true},
		{view, "DELETE", p + "links/l1", false},
		{view, "GET", p + "rss/items/-/summary", true},
		{view, "GET", p + "rss/items/-/unread-summary", true},
		{view, "GET", p + "rss/items/x/summary", false},
		{view, "GET", p + "rss/discovery", true},
		{view, "GET", p + "rss/other", false},
		{view, "POST", p + "rss/items/-/read", true},
		{view, "POST", p + "rss/items/i42/read", true},
		{view, "POST", p + "rss/items/i42/favorite", false},
		{manage, "POST", p + "links/my-link/rss/refresh", true},
		{manage, "POST", p + "links/my-link/rss/other", false},
		{manage, "POST", p + "links/-/sort", true},
		{manage, "POST", p + "links/x/sort", false},
		{manage, "POST", p + "rss/items/-/hidden", true},
		{manage, "POST", p + "links/-/verification/check", false},
		{anonymous, "GET", "/apis/api.link.halo.run/v1alpha1/links/-/random", true},
		{anonymous, "GET", "/apis/api.link.halo.run/v1alpha1/links/-/count", false},
		{anonymous, "POST", "/apis/api.link.halo.run/v1alpha1/link-applications/captcha", true},
		{anonymous, "GET", "/apis/api.link.halo.run/v1alpha1/link-applications/captcha", false},
	}
	for _, tc := range cases {
		info := ParseRequestInfo(tc.method, tc.path, nil, false)
		if got := RulesAllow(tc.rules, &info); got != tc.want {
			t.Errorf("%s %s (%s %s %q): got %v, want %v", tc.method, tc.path, info.Verb, info.CombinedResource(), info.ResourceName(), got, tc.want)
		}
	}
}

// TestRulesAllowCorpusOther covers single facts from other corpus plugins'
// model.md notes.
func TestRulesAllowCorpusOther(t *testing.T) {
	cases := []struct {
		name         string
		rule         PolicyRule
		method, path string
		want         bool
	}{
		{"oauth2: one-segment name matches plugin-oauth2/<provider>",
			PolicyRule{APIGroups: []string{"api.plugin.halo.run"}, ResourceNames: []string{"plugin-oauth2"}, Resources: []string{"plugins/connect", "plugins/disconnect"}, Verbs: []string{"get", "list", "update"}},
			"GET", "/apis/api.plugin.halo.run/v1alpha1/plugins/plugin-oauth2/connect/github", true},
		{"friends: nonResourceURLs under a resource path never apply",
			PolicyRule{NonResourceURLs: []string{"/apis/api.plugin.halo.run/v1alpha1/plugins/plugin-friends/friendPost/*"}, Verbs: []string{"create", "delete"}},
			"DELETE", "/apis/api.plugin.halo.run/v1alpha1/plugins/plugin-friends/friendPost/delByFriendName/bob", false},
		{"friends: no resourceNames grants every plugin name",
			PolicyRule{APIGroups: []string{"api.plugin.halo.run"}, Resources: []string{"plugins/friendRequest"}, Verbs: []string{"create"}},
			"POST", "/apis/api.plugin.halo.run/v1alpha1/plugins/another-plugin/friendRequest", true},
		{"photos: upload is a non-resource create",
			PolicyRule{NonResourceURLs: []string{"/apis/console.api.photo.halo.run/v1alpha1/photos/upload"}, Verbs: []string{"create"}},
			"POST", "/apis/console.api.photo.halo.run/v1alpha1/photos/upload", true},
		{"migrate: rule for plugins/rss-parse misses the real route",
			PolicyRule{APIGroups: []string{"plugin.halo.run"}, Resources: []string{"plugins/rss-parse"}, ResourceNames: []string{"PluginMigrate"}, Verbs: []string{"create"}},
			"POST", "/apis/api.plugin.halo.run/v1alpha1/plugins/PluginMigrate/migrations/rss-parse", false},
		{"migrate: rule matches its own shape",
			PolicyRule{APIGroups: []string{"plugin.halo.run"}, Resources: []string{"plugins/rss-parse"}, ResourceNames: []string{"PluginMigrate"}, Verbs: []string{"create"}},
			"POST", "/apis/plugin.halo.run/v1alpha1/plugins/PluginMigrate/rss-parse", true},
		{"moments: a rule without verbs grants nothing",
			PolicyRule{NonResourceURLs: []string{"*"}},
			"GET", "/anything", false},
		{"umami: names are case-sensitive",
			PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"plugin-umami-configMap"}, Verbs: []string{"get"}},
			"GET", "/api/v1alpha1/configmaps/plugin-umami-configmap", false},
		{"comment-widget: config is a list",
			PolicyRule{APIGroups: []string{"api.commentwidget.halo.run"}, Resources: []string{"config"}, Verbs: []string{"list"}},
			"GET", "/apis/api.commentwidget.halo.run/v1alpha1/config", true},
	}
	for _, tc := range cases {
		info := ParseRequestInfo(tc.method, tc.path, nil, false)
		if got := RuleAllows(&tc.rule, &info); got != tc.want {
			t.Errorf("%s: %s %s (%+v): got %v, want %v", tc.name, tc.method, tc.path, info, got, tc.want)
		}
	}
}

func TestPolicyRuleJSON(t *testing.T) {
	b, err := json.Marshal(PolicyRule{})
	if err != nil || string(b) != "{}" {
		t.Errorf("empty rule: %s, %v; want {}", b, err)
	}
	in := `{"apiGroups":[""],"resources":["posts","posts/publish"],"resourceNames":["-"],"nonResourceURLs":["/x"],"verbs":["get"]}`
	var r PolicyRule
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(r)
	if string(out) != in {
		t.Errorf("round trip: %s, want %s", out, in)
	}
}

func FuzzRuleAllows(f *testing.F) {
	f.Add("get", "g", "persons", "status", "ann", "x", "/p", true, "g", "persons/status", "ann/*", "/p*", "get")
	f.Add("create", "", "rss", "-", "items", "summary", "/", true, "*", "*/-", "items/summary", "*", "*")
	f.Add("get", "", "", "", "", "", "/healthz", false, "", "", "", "/healthz/*", "get")
	f.Fuzz(func(t *testing.T, verb, group, resource, sub, name, subName, path string, isRes bool,
		ruleGroup, ruleResource, ruleName, ruleURL, ruleVerb string) {
		info := RequestInfo{IsResourceRequest: isRes, Verb: verb, APIGroup: group, Resource: resource,
			Subresource: sub, Name: name, SubName: subName, Path: path}
		rule := PolicyRule{APIGroups: []string{ruleGroup}, Resources: []string{ruleResource},
			ResourceNames: []string{ruleName}, NonResourceURLs: []string{ruleURL}, Verbs: []string{ruleVerb}}
		got := RuleAllows(&rule, &info)
		// Removing verbs never allows; a star rule allows everything.
		noVerbs := rule
		noVerbs.Verbs = nil
		if RuleAllows(&noVerbs, &info) {
			t.Fatal("rule without verbs allowed")
		}
		star := PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}
		if !RuleAllows(&star, &info) {
			t.Fatalf("star rule denied %+v", info)
		}
		// Adding entries to a rule never takes an allow away.
		wider := PolicyRule{APIGroups: []string{"x", ruleGroup}, Resources: []string{ruleResource, "y"},
			ResourceNames: []string{"z", ruleName}, NonResourceURLs: []string{ruleURL, "/w"}, Verbs: []string{"v", ruleVerb}}
		if got && !RuleAllows(&wider, &info) {
			t.Fatalf("wider rule %+v denied what %+v allowed: %+v", wider, rule, info)
		}
		// The zero-alloc matcher agrees with the plain definition.
		if want := referenceAllows(&rule, &info); got != want {
			t.Fatalf("RuleAllows=%v, reference=%v for rule %+v, request %+v", got, want, rule, info)
		}
	})
}

// referenceAllows is docs/api.md written the obvious, allocating way.
func referenceAllows(r *PolicyRule, info *RequestInfo) bool {
	has := func(list []string, v string) bool {
		for _, x := range list {
			if x == "*" || x == v {
				return true
			}
		}
		return false
	}
	if !has(r.Verbs, info.Verb) {
		return false
	}
	if !info.IsResourceRequest {
		for _, u := range r.NonResourceURLs {
			if u == "*" || u == info.Path || strings.HasSuffix(u, "*") && strings.HasPrefix(info.Path, strings.TrimRight(u, "*")) {
				return true
			}
		}
		return false
	}
	if !has(r.APIGroups, info.APIGroup) {
		return false
	}
	combined := info.Resource
	if info.Subresource != "" {
		combined += "/" + info.Subresource
	}
	resOK := false
	for _, rr := range r.Resources {
		if rr == "*" || rr == combined || info.Subresource != "" && rr == "*/"+info.Subresource {
			resOK = true
		}
	}
	if !resOK {
		return false
	}
	if len(r.ResourceNames) == 0 {
		return true
	}
	split := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, "/") {
			if p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	req := split(info.Name + "/" + info.SubName)
	for _, pat := range r.ResourceNames {
		ok := true
		for i, ps := range split(pat) {
			rs := ""
			if i < len(req) {
				rs = req[i]
			}
			if !segmentMatches(ps, rs) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
