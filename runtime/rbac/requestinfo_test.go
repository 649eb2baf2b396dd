package rbac

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// parse runs ParseRequestInfo on a URL that may carry a query.
func parse(t testing.TB, method, rawURL string, upgrade bool) RequestInfo {
	t.Helper()
	// not url.Parse: it would read //healthy as a host
	path, rawQuery, _ := strings.Cut(rawURL, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		t.Fatalf("bad test query %q: %v", rawURL, err)
	}
	return ParseRequestInfo(method, path, q, upgrade)
}

func TestParseRequestInfo(t *testing.T) {
	type c struct {
		name    string
		method  string
		url     string
		upgrade bool
		want    RequestInfo // Path is filled from url
	}
	api := func(verb, resource, name, sub, subName string, parts ...string) RequestInfo {
		return RequestInfo{IsResourceRequest: true, Verb: verb, APIPrefix: "api", APIVersion: "v1",
			Resource: resource, Name: name, Subresource: sub, SubName: subName, Parts: parts}
	}
	apis := func(group, version, verb, resource, name, sub, subName string, parts ...string) RequestInfo {
		return RequestInfo{IsResourceRequest: true, Verb: verb, APIPrefix: "apis", APIGroup: group, APIVersion: version,
			Resource: resource, Name: name, Subresource: sub, SubName: subName, Parts: parts}
	}
	cases := []c{
		// Kubernetes TestGetAPIRequestInfo, namespaced rows read without
		// namespace scoping.
		{"k8s collection", "GET", "/api/v1/namespaces", false, api("list", "namespaces", "", "", "", "namespaces")},
		{"k8s object", "GET", "/api/v1/namespaces/other", false, api("get", "namespaces", "other", "", "", "namespaces", "other")},
		{"k8s get", "GET", "/api/v1/pods/foo", false, api("get", "pods", "foo", "", "", "pods", "foo")},
		{"k8s head object", "HEAD", "/api/v1/pods/foo", false, api("get", "pods", "foo", "", "", "pods", "foo")},
		{"k8s list", "GET", "/api/v1/pods", false, api("list", "pods", "", "", "", "pods")},
		{"k8s head list", "HEAD", "/api/v1/pods", false, api("list", "pods", "", "", "", "pods")},
		{"k8s patch", "PATCH", "/api/v1/namespaces/new-namespace", false, api("patch", "namespaces", "new-namespace", "", "", "namespaces", "new-namespace")},
		{"k8s proxy", "GET", "/api/v1/proxy/pods/foo", false, api("proxy", "pods", "foo", "", "", "pods", "foo")},
		{"k8s proxy subpath is no subresource", "GET", "/api/v1/proxy/pods/foo/subpath/not/a/subresource", false,
			api("proxy", "pods", "foo", "", "", "pods", "foo", "subpath", "not", "a", "subresource")},
		{"k8s watch segment", "GET", "/api/v1/watch/pods", false, api("watch", "pods", "", "", "", "pods")},
		{"k8s watch=true", "GET", "/api/v1/pods?watch=true", false, api("watch", "pods", "", "", "", "pods")},
		{"k8s watch=false", "GET", "/api/v1/pods?watch=false", false, api("list", "pods", "", "", "", "pods")},
		{"k8s watch=1", "GET", "/api/v1/pods?watch=1", false, api("watch", "pods", "", "", "", "pods")},
		{"k8s watch=0", "GET", "/api/v1/pods?watch=0", false, api("list", "pods", "", "", "", "pods")},
		{"watch=TRUE", "GET", "/api/v1/pods?watch=TRUE", false, api("watch", "pods", "", "", "", "pods")},
		{"watch=t", "GET", "/api/v1/pods?watch=t", false, api("watch", "pods", "", "", "", "pods")},
		// Not a boolean: a list, which the API then refuses with a 400.
		{"watch=maybe", "GET", "/api/v1/pods?watch=maybe", false, api("list", "pods", "", "", "", "pods")},
		{"k8s status", "GET", "/api/v1/pods/foo/status", false, api("get", "pods", "foo", "status", "", "pods", "foo", "status")},
		{"k8s proxy subresource", "GET", "/api/v1/pods/foo/proxy/subpath", false, api("get", "pods", "foo", "proxy", "subpath", "pods", "foo", "proxy", "subpath")},
		{"k8s namespace finalize", "PUT", "/api/v1/namespaces/other/finalize", false, api("update", "namespaces", "other", "finalize", "", "namespaces", "other", "finalize")},
		{"k8s namespace status", "PUT", "/api/v1/namespaces/other/status", false, api("update", "namespaces", "other", "status", "", "namespaces", "other", "status")},
		{"k8s delete", "DELETE", "/api/v1/pods/foo", false, api("delete", "pods", "foo", "", "", "pods", "foo")},
		{"k8s create", "POST", "/api/v1/pods", false, api("create", "pods", "", "", "", "pods")},
		{"k8s deletecollection", "DELETE", "/api/v1/nodes", false, api("deletecollection", "nodes", "", "", "", "nodes")},
		{"k8s deletecollection group", "DELETE", "/apis/extensions/v1/pods", false, apis("extensions", "v1", "deletecollection", "pods", "", "", "", "pods")},
		{"k8s group", "POST", "/apis/extensions/v1/pods", false, apis("extensions", "v1", "create", "pods", "", "", "", "pods")},
		{"k8s version", "POST", "/apis/extensions/v1beta3/pods", false, apis("extensions", "v1beta3", "create", "pods", "", "", "", "pods")},
		// Kubernetes' fieldSelector=metadata.name shortcut is not carried over.
		{"k8s field selector stays a list", "GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1", false,
			apis("group", "version", "list", "resource", "", "", "", "resource")},
		{"namespaced path read flat", "GET", "/api/v1/namespaces/other/pods/foo", false,
			api("get", "namespaces", "other", "pods", "foo", "namespaces", "other", "pods", "foo")},

		// Halo RequestInfoResolverTest
		{"halo watch=TRUE", "GET", "/api/v1/posts?watch=TRUE", false, api("watch", "posts", "", "", "", "posts")},
		{"halo all=true collection", "DELETE", "/api/v1/nodes?all=true", false, api("deletecollection", "nodes", "", "", "", "nodes")},
		// Halo reads ?all=true for deletecollection; docs/api.md uses the
		// collection path instead.
		{"all=false collection is still deletecollection", "DELETE", "/api/v1/namespaces?all=false", false, api("deletecollection", "namespaces", "", "", "", "namespaces")},
		{"all=true object is still delete", "DELETE", "/api/v1/posts/foo?all=true", false, api("delete", "posts", "foo", "", "", "posts", "foo")},
		{"halo plugin scoped delete", "DELETE", "/apis/api.plugin.halo.run/v1/plugins/other/posts", false,
			apis("api.plugin.halo.run", "v1", "delete", "plugins", "other", "posts", "", "plugins", "other", "posts")},
		{"halo plugin scoped subName", "POST", "/apis/api.plugin.halo.run/v1/plugins/other/posts/foo", false,
			apis("api.plugin.halo.run", "v1", "create", "plugins", "other", "posts", "foo", "plugins", "other", "posts", "foo")},
		{"halo plugin scoped version", "POST", "/apis/api.plugin.halo.run/v1beta3/plugins/other/posts/bar", false,
			apis("api.plugin.halo.run", "v1beta3", "create", "plugins", "other", "posts", "bar", "plugins", "other", "posts", "bar")},
		{"halo websocket collection", "GET", "/apis/fake.halo.run/v1alpha1/fakes", true,
			apis("fake.halo.run", "v1alpha1", "watch", "fakes", "", "", "", "fakes")},
		{"halo empty segment dropped", "POST", "/api/v1//categories", false, api("create", "categories", "", "", "", "categories")},
		{"halo unknown method", "UPDATE", "/api/v1/posts/aName", false, api("", "posts", "aName", "", "", "posts", "aName")},

		// docs/api.md
		{"websocket object", "GET", "/apis/people.example.com/v1alpha1/persons/ann", true,
			apis("people.example.com", "v1alpha1", "watch", "persons", "ann", "", "", "persons", "ann")},
		{"websocket subresource stays get", "GET", "/apis/people.example.com/v1alpha1/persons/ann/greeting", true,
			apis("people.example.com", "v1alpha1", "get", "persons", "ann", "greeting", "", "persons", "ann", "greeting")},
		{"watch query on object stays get", "GET", "/apis/people.example.com/v1alpha1/persons/ann?watch=true", false,
			apis("people.example.com", "v1alpha1", "get", "persons", "ann", "", "", "persons", "ann")},
		{"status update", "PUT", "/apis/people.example.com/v1alpha1/persons/ann/status", false,
			apis("people.example.com", "v1alpha1", "update", "persons", "ann", "status", "", "persons", "ann", "status")},
		{"create subresource with dash", "POST", "/apis/g.example.com/v1/things/-/import", false,
			apis("g.example.com", "v1", "create", "things", "-", "import", "", "things", "-", "import")},
		{"deeper segments are not part of the name", "DELETE", "/apis/g/v1/a/b/c/d/e/f", false,
			apis("g", "v1", "delete", "a", "b", "c", "d", "a", "b", "c", "d", "e", "f")},

		// non-resource requests
		{"healthz", "GET", "/healthz", false, RequestInfo{Verb: "get"}},
		{"head healthz", "HEAD", "/healthy", false, RequestInfo{Verb: "head"}},
		{"post healthz", "POST", "/healthy", false, RequestInfo{Verb: "post"}},
		{"double slash path kept raw", "GET", "//healthy", false, RequestInfo{Verb: "get"}},
		{"halo create with name", "POST", "/api/version/themes/install", false,
			RequestInfo{Verb: "create", APIPrefix: "api", APIVersion: "version", Resource: "themes", Name: "install", Parts: []string{"themes", "install"}}},
		{"halo apis create with name", "POST", "/apis/api.halo.run/v1alpha1/themes/install", false,
			RequestInfo{Verb: "create", APIPrefix: "apis", APIGroup: "api.halo.run", APIVersion: "v1alpha1", Resource: "themes", Name: "install", Parts: []string{"themes", "install"}}},
		{"bare watch segment", "GET", "/apis/g/v1/watch", false, RequestInfo{Verb: "get", APIPrefix: "apis", APIGroup: "g", APIVersion: "v1"}},
		{"group and version only", "GET", "/apis/g/v1", false, RequestInfo{Verb: "get"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parse(t, tc.method, tc.url, tc.upgrade)
			want := tc.want
			want.Path = strings.SplitN(tc.url, "?", 2)[0]
			_, rawQuery, _ := strings.Cut(tc.url, "?")
			want.Query, _ = url.ParseQuery(rawQuery) // handed through as given
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s upgrade=%v:\n got %+v\nwant %+v", tc.method, tc.url, tc.upgrade, got, want)
			}
		})
	}
}

// TestIsResourceRequest carries Kubernetes' TestGetNonAPIRequestInfo and
// Halo's error cases.
func TestIsResourceRequest(t *testing.T) {
	cases := []struct {
		method, url string
		want        bool
	}{
		{"GET", "/api/version/resource", true},
		{"GET", "/apis/group/version/resource/name/subresource", true},
		{"GET", "/api/version/resource/name/subresource", true},
		{"GET", "/apis/batch/v1/job", true},
		{"GET", "/apis/batch/v1/job/foo", true},
		{"GET", "/apis/batch/v1/job/foo/scale", true},
		{"GET", "/not-api/version/resource", false},
		{"GET", "/apis/extensions/v1beta1", false},
		{"GET", "/apis/extensions/v1beta1/", false},
		{"GET", "/api/version", false},
		{"GET", "/api", false},
		{"GET", "/", false},
		{"GET", "", false},
		{"GET", "/api/version/", false},
		{"GET", "/apis/group/version/", false},
		{"GET", "/badprefix/version/resource", false},
		{"GET", "/apis/version/resource", false}, // missing group
		{"POST", "/api/version/themes/install", false},
		{"POST", "/apis/api.halo.run/v1alpha1/themes/install", false},
		{"POST", "/apis/api.halo.run/v1alpha1/themes/-/install", true},
		{"PUT", "/apis/api.halo.run/v1alpha1/themes/install", true},
	}
	for _, tc := range cases {
		if got := parse(t, tc.method, tc.url, false).IsResourceRequest; got != tc.want {
			t.Errorf("%s %q: IsResourceRequest = %v, want %v", tc.method, tc.url, got, tc.want)
		}
	}
}

// TestCorpusRBACParse checks the "RBAC parse (Halo)" column of the corpus
// plugins' model.md files: verb, combined resource and combined name.
func TestCorpusRBACParse(t *testing.T) {
	const (
		links  = "/apis/console.api.link.halo.run/v1alpha1/"
		plinks = "/apis/api.link.halo.run/v1alpha1/"
		ai     = "/apis/console.api.aifoundation.halo.run/v1alpha1/"
		photos = "/apis/console.api.photo.halo.run/v1alpha1/"
		s3     = "/apis/s3os.halo.run/v1alpha1/"
		legacy = "/apis/api.plugin.halo.run/v1alpha1/plugins/"
	)
	cases := []struct {
		method, path string
		resource     bool
		verb, res    string
		name         string
	}{
		// plugin-links
		{"GET", links + "links", true, "list", "links", ""},
		{"GET", links + "links/-/detail", true, "get", "links/detail", "-"},
		{"POST", links + "links/-/sort", true, "create", "links/sort", "-"},
		{"POST", links + "links/-/verification/check", true, "create", "links/verification", "-/check"},
		{"POST", links + "links/-/extract-from-comment", true, "create", "links/extract-from-comment", "-"},
		{"GET", links + "links/-/ai-status", true, "get", "links/ai-status", "-"},
		{"POST", links + "links/my-link/rss/refresh", true, "create", "links/rss", "my-link/refresh"},
		{"POST", links + "linkgroups/-/sort", true, "create", "linkgroups/sort", "-"},
		{"DELETE", links + "linkgroups/g1", true, "delete", "linkgroups", "g1"},
		{"GET", links + "linkapplications", true, "list", "linkapplications", ""},
		{"GET", links + "linkapplications/a1/origin-comment", true, "get", "linkapplications/origin-comment", "a1"},
		{"POST", links + "linkapplications/a1/approve", true, "create", "linkapplications/approve", "a1"},
		{"POST", links + "linkapplications/-/cleanup", true, "create", "linkapplications/cleanup", "-"},
		{"GET", links + "rss/discovery", true, "get", "rss", "discovery"},
		{"GET", links + "rss/items", true, "get", "rss", "items"},
		{"GET", links + "rss/items/-/summary", true, "get", "rss/-", "items/summary"},
		{"GET", links + "rss/items/-/unread-summary", true, "get", "rss/-", "items/unread-summary"},
		{"POST", links + "rss/items/-/hidden", true, "create", "rss/-", "items/hidden"},
		{"POST", links + "rss/items/i42/favorite", true, "create", "rss/i42", "items/favorite"},
		{"POST", links + "rss/-/cleanup", true, "create", "rss/cleanup", "-"},
		{"GET", plinks + "links/-/random", true, "get", "links/random", "-"},
		{"GET", plinks + "linkfeeds", true, "list", "linkfeeds", ""},
		{"POST", plinks + "link-applications", true, "create", "link-applications", ""},
		{"POST", plinks + "link-applications/captcha", false, "create", "link-applications", "captcha"},
		// plugin-ai-foundation
		{"GET", ai + "providers/p1/discover-models", true, "get", "providers/discover-models", "p1"},
		{"POST", ai + "models/m1/test-chat/ui-message/stream", true, "create", "models/test-chat", "m1/ui-message"},
		{"POST", ai + "models/m1/test-completion/stream", true, "create", "models/test-completion", "m1/stream"},
		{"PUT", ai + "default-model-slots", true, "update", "default-model-slots", ""},
		// plugin-comment-widget, plugin-feed
		{"GET", "/apis/api.commentwidget.halo.run/v1alpha1/config", true, "list", "config", ""},
		{"GET", "/apis/api.commentwidget.halo.run/v1alpha1/captcha/-/generate", true, "get", "captcha/generate", "-"},
		{"GET", "/apis/api.feed.halo.run/v1alpha1/rss-sources", true, "list", "rss-sources", ""},
		// plugin-friends (legacy group)
		{"GET", legacy + "plugin-friends/friends", true, "get", "plugins/friends", "plugin-friends"},
		{"POST", legacy + "plugin-friends/friendRequest", true, "create", "plugins/friendRequest", "plugin-friends"},
		{"GET", legacy + "plugin-friends/friend/statistical", true, "get", "plugins/friend", "plugin-friends/statistical"},
		{"DELETE", legacy + "plugin-friends/friendPost/delByFriendName/bob", true, "delete", "plugins/friendPost", "plugin-friends/delByFriendName"},
		// plugin-migrate
		{"POST", legacy + "PluginMigrate/migrations/rss-parse", true, "create", "plugins/migrations", "PluginMigrate/rss-parse"},
		// plugin-photos
		{"GET", photos + "photos/tags", true, "get", "photos", "tags"},
		{"POST", photos + "photos/upload", false, "create", "photos", "upload"},
		{"POST", photos + "photos/p1/reextract-exif", true, "create", "photos/reextract-exif", "p1"},
		// plugin-s3
		{"GET", s3 + "policies/s3", true, "get", "policies", "s3"},
		{"POST", s3 + "attachments/link", false, "create", "attachments", "link"},
		{"POST", s3 + "policies/s3/validation", true, "create", "policies/validation", "s3"},
		// plugin-sticker (camelCase plural)
		{"POST", "/apis/sticker.api.halo.run/v1alpha1/stickers/-/upload", true, "create", "stickers/upload", "-"},
		{"PUT", "/apis/sticker.api.halo.run/v1alpha1/stickerGroups/g1", true, "update", "stickerGroups", "g1"},
	}
	for _, tc := range cases {
		got := ParseRequestInfo(tc.method, tc.path, nil, false)
		if got.IsResourceRequest != tc.resource || got.Verb != tc.verb || got.CombinedResource() != tc.res || got.ResourceName() != tc.name {
			t.Errorf("%s %s: got resource=%v verb=%q resource=%q name=%q; want %v %q %q %q",
				tc.method, tc.path, got.IsResourceRequest, got.Verb, got.CombinedResource(), got.ResourceName(),
				tc.resource, tc.verb, tc.res, tc.name)
		}
	}
}

func TestParseRequest(t *testing.T) {
	cases := []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"no headers", nil, "list"},
		{"halo: Upgrade without Connection", map[string]string{"Upgrade": "websocket"}, "list"},
		{"upgrade", map[string]string{"Upgrade": "websocket", "Connection": "Upgrade"}, "watch"},
		{"case and token list", map[string]string{"Upgrade": "WebSocket", "Connection": "keep-alive, UPGRADE"}, "watch"},
		{"other protocol", map[string]string{"Upgrade": "h2c", "Connection": "Upgrade"}, "list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/apis/people.example.com/v1alpha1/persons", nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if got, err := ParseRequest(r); err != nil || got.Verb != tc.want {
				t.Errorf("headers %v: verb %q, %v; want %q", tc.headers, got.Verb, err, tc.want)
			}
		})
	}
	r := httptest.NewRequest(http.MethodGet, "/apis/people.example.com/v1alpha1/persons?watch=true", nil)
	if got, err := ParseRequest(r); err != nil || got.Verb != "watch" {
		t.Errorf("?watch=true: verb %q, %v; want watch", got.Verb, err)
	}
}

// TestParseRequestRefusesAPartQuery: a query that does not parse whole is
// an error, never a decision on what did parse. URL.Query drops the rest
// past 10,000 parameters, ?watch=true included.
func TestParseRequestRefusesAPartQuery(t *testing.T) {
	for _, raw := range []string{
		strings.Repeat("x=1&", 10000) + "watch=true",
		"watch=true;x=1",
		"watch=%zz",
	} {
		r := httptest.NewRequest(http.MethodGet, "/apis/people.example.com/v1alpha1/persons?"+raw, nil)
		if info, err := ParseRequest(r); err == nil {
			t.Errorf("ParseRequest(?%.40s…) = verb %q, want an error", raw, info.Verb)
		}
	}
}

// TestParseRequestReadsTheContext: the middleware's parse is the one
// access control reads.
func TestParseRequestReadsTheContext(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/apis/people.example.com/v1alpha1/persons?watch=%zz", nil)
	info := ParseRequestInfo(r.Method, r.URL.Path, url.Values{"watch": {"true"}}, false)
	got, err := ParseRequest(r.WithContext(WithRequestInfo(r.Context(), &info)))
	if err != nil || got.Verb != "watch" || got.Query.Get("watch") != "true" {
		t.Errorf("ParseRequest = %+v, %v; want the stored info", got, err)
	}
}

func TestRequestInfoContext(t *testing.T) {
	if _, ok := RequestInfoFrom(t.Context()); ok {
		t.Fatal("empty context has request info")
	}
	info := ParseRequestInfo("GET", "/healthz", nil, false)
	got, ok := RequestInfoFrom(WithRequestInfo(t.Context(), &info))
	if !ok || got != &info {
		t.Fatalf("RequestInfoFrom = %v, %v; want the stored pointer", got, ok)
	}
}

func FuzzParseRequestInfo(f *testing.F) {
	seeds := []string{
		"/api/v1/pods", "/apis/g/v1/persons/ann/status", "/apis/g/v1/watch/persons", "/api/v1/proxy/pods/foo/a/b",
		"/apis/api.plugin.halo.run/v1alpha1/plugins/x/friendPost/delByFriendName/bob", "//", "", "/healthz",
		"/apis/g/v1/watch", "/api/v1//x", "/apis/g/v1/rss/items/-/summary",
	}
	for _, s := range seeds {
		for _, m := range []string{"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"} {
			f.Add(m, s, "watch=true", false)
			f.Add(m, s, "", true)
		}
	}
	verbs := map[string]bool{"": true, "proxy": true}
	for _, v := range ResourceVerbs() {
		verbs[v] = true
	}
	f.Fuzz(func(t *testing.T, method, path, rawQuery string, upgrade bool) {
		q, _ := url.ParseQuery(rawQuery)
		info := ParseRequestInfo(method, path, q, upgrade)
		if info.Path != path {
			t.Fatalf("Path %q, want the input %q", info.Path, path)
		}
		if !info.IsResourceRequest {
			// POST <plural>/<name> keeps create; all else is the method.
			if info.Verb != strings.ToLower(method) && !(info.Verb == "create" && info.Name != "" && info.Subresource == "") {
				t.Fatalf("non-resource verb %q for method %q", info.Verb, method)
			}
			return
		}
		if info.Resource == "" || info.APIVersion == "" || len(info.Parts) == 0 || info.Parts[0] != info.Resource {
			t.Fatalf("resource request without resource/version: %+v", info)
		}
		if info.APIPrefix != "api" && info.APIPrefix != "apis" || (info.APIPrefix == "apis") == (info.APIGroup == "") {
			t.Fatalf("bad prefix/group: %+v", info)
		}
		if !verbs[info.Verb] {
			t.Fatalf("unknown verb %q: %+v", info.Verb, info)
		}
		if info.SubName != "" && info.Subresource == "" || info.Subresource != "" && info.Name == "" {
			t.Fatalf("subName without subresource or subresource without name: %+v", info)
		}
		for _, p := range info.Parts {
			if p == "" || strings.Contains(p, "/") {
				t.Fatalf("bad part %q in %+v", p, info)
			}
		}
		// A rule naming exactly what was parsed allows it.
		rule := PolicyRule{APIGroups: []string{info.APIGroup}, Resources: []string{info.CombinedResource()},
			ResourceNames: []string{info.ResourceName()}, Verbs: []string{info.Verb}}
		if info.ResourceName() == "" {
			rule.ResourceNames = nil
		}
		if !RuleAllows(&rule, &info) {
			t.Fatalf("rule %+v does not allow %+v", rule, info)
		}
	})
}
