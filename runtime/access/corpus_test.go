package access_test

// Corpus acceptance test for access control: every Role template of the
// real Halo plugins in shared/corpus/halo-plugins is loaded, unmodified,
// into a server running under brand halo.run, and a table of requests,
// derived by hand from the templates' rules and docs/api.md, is checked
// over HTTP.
//
// How a decision is observed: the guard runs before routing, so a denied
// anonymous caller gets 401 and a denied signed-in caller 403; any other
// status means access control let the request through (most paths below
// have no route in this server, so "allowed" is usually 404 or 405).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/server/servertest"
	"go.yaml.in/yaml/v3"
)

// corpusRoot is the plugin corpus, beside the checkout, seen from this
// package's directory.
const corpusRoot = "../../../shared/corpus/halo-plugins"

const (
	corpusAdminPW = "corpus-admin-secret"
	corpusConsole = "/apis/api.console.halo.run/v1alpha1"
	corpusRoles   = "/api/v1alpha1/roles"
)

// corpusServer is a real server started in-process under brand halo.run.
type corpusServer struct {
	t   *testing.T
	url string
}

func startCorpusServer(t *testing.T) *corpusServer {
	t.Helper()
	// Users are created in parallel, each hashing a bcrypt password: under
	// -race on a busy machine one answer can take longer than the server's
	// write timeout, which would cut it (EOF) instead of failing on merit.
	srv := servertest.Start(t, servertest.Options{Brand: "halo.run", AdminPassword: corpusAdminPW,
		Flags: func(f *server.Flags) { f.WriteTimeout = -1 }})
	return &corpusServer{t: t, url: srv.URL}
}

// corpusPassword is the password of a user the test creates.
func corpusPassword(user string) string {
	if user == "admin" {
		return corpusAdminPW
	}
	return "pw-" + user + "-secret"
}

// send makes one request as user ("" for an anonymous caller) and returns
// the status and body.
func (s *corpusServer) send(user, method, path string, header http.Header, body string) (int, []byte) {
	s.t.Helper()
	st, b, err := s.do(user, method, path, header, body)
	if err != nil {
		s.t.Fatal(err)
	}
	return st, b
}

// do is send for any goroutine: it returns the error instead of failing.
func (s *corpusServer) do(user, method, path string, header http.Header, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.SetBasicAuth(user, corpusPassword(user))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// waitFor polls until check passes or a generous deadline passes.
func (s *corpusServer) waitFor(what string, check func() (bool, string)) {
	s.t.Helper()
	servertest.Eventually(s.t, what, check)
}

// corpusDoc is one YAML document of a plugin's extension file.
type corpusDoc struct {
	plugin, file string
	index        int // 1-based, among the file's non-empty documents
	obj          map[string]any
}

func (d corpusDoc) String() string {
	return fmt.Sprintf("%s/extensions/%s document %d", d.plugin, d.file, d.index)
}

// readCorpus parses every .yaml and .yml file of every plugin's extensions/
// directory: multi-document files, comment-only documents and files
// without a trailing newline included. It skips the test when there is no
// corpus, and returns the documents and the number of files read.
func readCorpus(t *testing.T) ([]corpusDoc, int) {
	t.Helper()
	plugins, err := os.ReadDir(corpusRoot)
	if err != nil {
		t.Skipf("no Halo plugin corpus at %s (it lives beside the checkout, in shared/corpus): %v", corpusRoot, err)
	}
	var docs []corpusDoc
	files := 0
	for _, p := range plugins {
		if !p.IsDir() {
			continue
		}
		dir := filepath.Join(corpusRoot, p.Name(), "extensions")
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue // e.g. plugin-injection has no extension files
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
				continue
			}
			files++
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(f)
			n := 0
			for {
				var obj map[string]any
				err := dec.Decode(&obj)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					f.Close()
					t.Fatalf("%s/extensions/%s: %v", p.Name(), name, err)
				}
				if obj == nil {
					continue // a document of comments only
				}
				n++
				docs = append(docs, corpusDoc{plugin: p.Name(), file: name, index: n, obj: obj})
			}
			f.Close()
		}
	}
	return docs, files
}

// corpusUsers are the users the test creates through the console API, with
// the roles they are bound to. "plain" is signed in but bound to nothing.
var corpusUsers = map[string][]string{
	"plain":            {},
	"links-view":       {"role-template-link-view"},
	"links-manage":     {"role-template-link-manage"},
	"photos-view":      {"role-template-photos-view"},
	"photos-manage":    {"role-template-photos-manage"},
	"moments-manage":   {"role-template-moments-manage"},
	"moments-approved": {"role-template-uc-moments-approved"},
	"friends-view":     {"role-template-friends-view"},
	"friends-manage":   {"role-template-friends-manage"},
	"s3-link":          {"role-template-s3os-link"},
	"configmaps":       {"role-template-manage-configmaps"},
	"stickers-manage":  {"role-template-stickers-manage"},
	"selfstickers":     {"role-template-selfstickers-manage"},
	"appstore":         {"role-template-manage-appstore"},
	"umami":            {"role-template-view-umami"},
	"migrate":          {"role-template-migration"},
}

// manageConfigMaps stands in for Halo's core template
// role-template-manage-configmaps (the corpus only aggregates into it):
// aggregation needs the target role to exist, as in Halo.
const manageConfigMaps = `{"apiVersion":"v1alpha1","kind":"Role",
 "metadata":{"name":"role-template-manage-configmaps","labels":{"halo.run/role-template":"true"}},
 "rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["create","patch","update","delete","deletecollection"]}]}`

// accessRow is one request and the decision docs/api.md gives for it.
type accessRow struct {
	plugin string
	user   string // "" is an anonymous caller
	method string
	path   string
	header http.Header
	allow  bool
	why    string // the rule that allows, or why nothing does
}

var (
	wsUpgrade = http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}

	linkPublic   = "/apis/api.link.halo.run/v1alpha1"
	linkConsole  = "/apis/console.api.link.halo.run/v1alpha1"
	linkCore     = "/apis/core.halo.run/v1alpha1"
	photoPublic  = "/apis/api.photo.halo.run/v1alpha1"
	photoConsole = "/apis/console.api.photo.halo.run/v1alpha1"
	momentCore   = "/apis/moment.halo.run/v1alpha1"
	momentUC     = "/apis/uc.api.moment.halo.run/v1alpha1"
	widget       = "/apis/api.commentwidget.halo.run/v1alpha1"
	legacyPlugin = "/apis/api.plugin.halo.run/v1alpha1/plugins"
	friendModels = "/apis/friend.moony.la/v1alpha1"
	s3os         = "/apis/s3os.halo.run/v1alpha1"
	stickerStore = "/apis/storage.halo.run/v1alpha1"
	stickerAPI   = "/apis/sticker.api.halo.run/v1alpha1"
	feedAPI      = "/apis/api.feed.halo.run/v1alpha1"
	coreAPI      = "/api/v1alpha1"
)

// corpusRows are derived by hand from the corpus templates. Reading aids:
// for /apis/<g>/<v>/<res>/<name>/<sub>/<subName> the request is on
// resource "<res>/<sub>" named "<name>/<subName>"; POST <res>/<name> (no
// subresource) is a non-resource request with verb create; a GET of a
// collection is list (watch with ?watch=true or a WebSocket upgrade).
var corpusRows = []accessRow{
	// ---- plugin-links (role-template-link-view, -manage, -anonymous) ----
	{"plugin-links", "", "GET", linkPublic + "/links", nil, true,
		"link-anonymous (aggregate-to-anonymous): list links in api.link.halo.run"},
	{"plugin-links", "", "GET", linkPublic + "/links/-/random", nil, true,
		"link-anonymous: get links/random (name -), no resourceNames"},
	{"plugin-links", "", "GET", linkPublic + "/linkgroups/g1", nil, true,
		"link-anonymous: get linkgroups"},
	{"plugin-links", "", "POST", linkPublic + "/link-applications", nil, true,
		"link-anonymous: create link-applications"},
	{"plugin-links", "", "POST", linkPublic + "/link-applications/captcha", nil, true,
		"POST <res>/<name> is non-resource create; link-anonymous's nonResourceURL is this exact path"},
	{"plugin-links", "", "GET", linkPublic + "/link-applications", nil, false,
		"link-anonymous grants only create on link-applications, not list"},
	{"plugin-links", "", "DELETE", linkPublic + "/links/l1", nil, false,
		"link-anonymous grants get/list only"},
	{"plugin-links", "", "GET", linkCore + "/links", nil, false,
		"core.halo.run links are in link-view, which anonymous does not hold"},
	{"plugin-links", "plain", "GET", linkPublic + "/linkfeeds", nil, true,
		"anonymous is held by every requester, so link-anonymous grants a signed-in user too"},
	{"plugin-links", "plain", "GET", linkCore + "/links", nil, false,
		"a user bound to nothing does not get link-view"},
	{"plugin-links", "links-view", "GET", linkCore + "/links", nil, true,
		"link-view: list links in core.halo.run"},
	{"plugin-links", "links-view", "GET", linkConsole + "/linkapplications/a1", nil, true,
		"link-view: get linkapplications in console.api.link.halo.run"},
	{"plugin-links", "links-view", "GET", linkCore + "/links?watch=true", nil, false,
		"?watch=true makes the verb watch; link-view grants get, list"},
	{"plugin-links", "links-view", "GET", linkCore + "/links/l1", wsUpgrade, false,
		"a GET with a WebSocket upgrade on an object is watch; not granted"},
	{"plugin-links", "links-view", "POST", linkCore + "/links", nil, false,
		"create is in link-manage, not link-view"},
	{"plugin-links", "links-view", "GET", linkConsole + "/rss/discovery", nil, true,
		"link-view: get rss named discovery"},
	{"plugin-links", "links-view", "GET", linkConsole + "/rss/items", nil, true,
		"link-view: get rss named items"},
	{"plugin-links", "links-view", "GET", linkConsole + "/rss/other", nil, false,
		"rss rules are limited to names discovery and items"},
	{"plugin-links", "links-view", "GET", linkConsole + "/rss/items/-/summary", nil, true,
		"get rss/- named items/summary: link-view's path-like resourceName"},
	{"plugin-links", "links-view", "GET", linkConsole + "/rss/items/-/unread-summary", nil, true,
		"get rss/- named items/unread-summary: link-view"},
	{"plugin-links", "links-view", "GET", linkConsole + "/rss/items/-/other", nil, false,
		"rss/- named items/other matches neither items/summary nor items/unread-summary"},
	{"plugin-links", "links-view", "POST", linkConsole + "/rss/items/abc123/read", nil, true,
		"create rss/abc123 named items/read: link-view's resources [*] resourceNames [items/read]"},
	{"plugin-links", "links-view", "POST", linkConsole + "/rss/items/abc123/favorite", nil, true,
		"create on any resource named items/favorite: link-view"},
	{"plugin-links", "links-view", "POST", linkConsole + "/rss/items/-/hidden", nil, false,
		"create rss/- named items/hidden is in link-manage only"},
	{"plugin-links", "links-view", "POST", linkConsole + "/links/l1/rss/refresh", nil, false,
		"create links/rss named l1/refresh: link-view's [*] rules need names items/..."},
	{"plugin-links", "links-view", "POST", linkConsole + "/linkapplications/a1/approve", nil, false,
		"linkapplications/approve is in link-manage only"},
	{"plugin-links", "links-manage", "GET", linkCore + "/links", nil, true,
		"link-manage depends on link-view, which grants list links"},
	{"plugin-links", "links-manage", "GET", linkConsole + "/rss/items/-/summary", nil, true,
		"link-view's items/summary rule, through link-manage's dependency"},
	{"plugin-links", "links-manage", "DELETE", linkCore + "/links/l1", nil, true,
		"link-manage: delete links in core.halo.run"},
	{"plugin-links", "links-manage", "DELETE", linkConsole + "/linkgroups", nil, true,
		"DELETE on a collection is deletecollection: link-manage"},
	{"plugin-links", "links-manage", "POST", linkConsole + "/links/l1/rss/refresh", nil, true,
		"create links/rss named l1/refresh: link-manage's resourceNames [*/refresh]"},
	{"plugin-links", "links-manage", "POST", linkConsole + "/links/l1/rss/fetch", nil, false,
		"links/rss named l1/fetch does not match */refresh"},
	{"plugin-links", "links-manage", "POST", linkConsole + "/links/-/sort", nil, true,
		"link-manage: create links/sort named -"},
	{"plugin-links", "links-manage", "GET", linkConsole + "/links/-/detail", nil, true,
		"link-manage: get links/detail named -"},
	{"plugin-links", "links-manage", "GET", linkConsole + "/links/l1/detail", nil, false,
		"links/detail is limited to the name -"},
	{"plugin-links", "links-manage", "POST", linkConsole + "/links/-/verification/check", nil, false,
		"create links/verification named -/check: no template covers it (super admin only)"},
	{"plugin-links", "links-manage", "POST", linkConsole + "/rss/items/-/hidden", nil, true,
		"link-manage: create rss/- named items/hidden"},
	{"plugin-links", "links-manage", "POST", linkConsole + "/rss/-/cleanup", nil, true,
		"link-manage: create rss/cleanup named -"},
	{"plugin-links", "links-manage", "POST", linkConsole + "/linkapplications/a1/approve", nil, true,
		"link-manage: create linkapplications/approve"},
	{"plugin-links", "links-manage", "GET", linkConsole + "/linkapplications/a1/origin-comment", nil, true,
		"link-manage: get linkapplications/origin-comment"},

	// ---- plugin-photos (view, manage depending on view, anonymous) ----
	{"plugin-photos", "", "GET", photoPublic + "/photos", nil, true,
		"photos-anonymous (aggregate-to-anonymous): list photos in api.photo.halo.run"},
	{"plugin-photos", "", "GET", photoPublic + "/tags", nil, true,
		"photos-anonymous: list tags"},
	{"plugin-photos", "", "GET", photoConsole + "/photos", nil, false,
		"the console group is in photos-view, not held by anonymous callers"},
	{"plugin-photos", "photos-view", "GET", photoConsole + "/photos", nil, true,
		"photos-view: list photos in console.api.photo.halo.run"},
	{"plugin-photos", "photos-view", "GET", photoConsole + "/photos/tags", nil, true,
		"get photos named tags: photos-view"},
	{"plugin-photos", "photos-view", "DELETE", photoConsole + "/photos/p1", nil, false,
		"delete is in photos-manage only"},
	{"plugin-photos", "photos-view", "POST", photoConsole + "/photos/upload", nil, false,
		"non-resource create on photos/upload: the nonResourceURL is in photos-manage only"},
	{"plugin-photos", "photos-manage", "GET", "/apis/core.halo.run/v1alpha1/photogroups", nil, true,
		"photos-view (dependency of photos-manage): list photogroups in core.halo.run"},
	{"plugin-photos", "photos-manage", "DELETE", photoConsole + "/photos/p1", nil, true,
		"photos-manage: delete photos"},
	{"plugin-photos", "photos-manage", "POST", photoConsole + "/photos/upload", nil, true,
		"non-resource create; photos-manage's nonResourceURL is this exact path with verb create"},
	{"plugin-photos", "photos-manage", "POST", photoConsole + "/photos/upload2", nil, false,
		"non-resource create on another path: the nonResourceURL is exact"},
	{"plugin-photos", "photos-manage", "POST", photoConsole + "/photos/p1/reextract-exif", nil, true,
		"photos-manage: create photos/reextract-exif"},
	{"plugin-photos", "photos-manage", "GET", photoConsole + "/photos?watch=true", nil, false,
		"watch is granted by neither photos template"},

	// ---- plugin-moments (view, manage, uc templates, verb-less marker) ----
	{"plugin-moments", "moments-manage", "GET", momentCore + "/moments", nil, true,
		"moments-view (dependency of moments-manage): list moments in moment.halo.run"},
	{"plugin-moments", "moments-manage", "POST", momentCore + "/moments", nil, true,
		"moments-manage: create moments"},
	{"plugin-moments", "moments-manage", "DELETE", "/apis/console.api.moment.halo.run/v1alpha1/tags/t1", nil, true,
		"moments-manage: delete tags in console.api.moment.halo.run"},
	{"plugin-moments", "moments-manage", "GET", momentCore + "/moments", wsUpgrade, false,
		"a WebSocket upgrade on a collection is watch: not granted"},
	{"plugin-moments", "moments-manage", "GET", momentUC + "/moments", nil, false,
		"uc.api.moment.halo.run is in the uc templates, not in moments-manage/-view"},
	{"plugin-moments", "moments-approved", "GET", momentUC + "/moments", nil, true,
		"uc-moments-approved depends on uc-moments-publish: list moments in uc.api.moment.halo.run"},
	{"plugin-moments", "moments-approved", "PUT", momentUC + "/moments/m1", nil, true,
		"uc-moments-publish (dependency): update moments"},
	{"plugin-moments", "moments-approved", "DELETE", momentUC + "/moments/m1", nil, false,
		"delete is in uc-moments-delete, which this user does not hold"},
	{"plugin-moments", "moments-approved", "GET", "/apis/uc.api.moment.halo.run/v1alpha1", nil, false,
		"a non-resource request: uc-moments-approved's nonResourceURLs [*] rule has no verbs, so it grants nothing"},
	{"plugin-moments", "moments-approved", "POST", momentUC + "/moments/m1", nil, false,
		"non-resource create: only the verb-less [*] rule names non-resource URLs; it grants nothing"},
	{"plugin-moments", "moments-approved", "GET", "/metrics", nil, false,
		"non-resource get: the verb-less [*] rule grants nothing"},

	// ---- plugin-comment-widget (anonymous-only template) ----
	{"plugin-comment-widget", "", "GET", widget + "/config", nil, true,
		"comment-widget-public-apis (aggregate-to-anonymous): list config"},
	{"plugin-comment-widget", "", "GET", widget + "/config/c1", nil, false,
		"get config (a name): the rule grants list only"},
	{"plugin-comment-widget", "", "GET", widget + "/captcha/-/generate", nil, true,
		"comment-widget-public-apis: get captcha/generate"},
	{"plugin-comment-widget", "", "POST", widget + "/captcha/-/generate", nil, false,
		"create captcha/generate: the rule grants get only"},
	{"plugin-comment-widget", "plain", "GET", widget + "/captcha/-/generate", nil, true,
		"the anonymous aggregate reaches signed-in users too"},

	// ---- plugin-oauth2 (aggregate-to-authenticated, legacy group, resourceNames) ----
	{"plugin-oauth2", "plain", "GET", legacyPlugin + "/plugin-oauth2/connect/github", nil, true,
		"plugin-oauth-role-template (aggregate-to-authenticated): get plugins/connect named plugin-oauth2/github; the one-segment pattern plugin-oauth2 matches"},
	{"plugin-oauth2", "plain", "PUT", legacyPlugin + "/plugin-oauth2/disconnect/github", nil, true,
		"plugin-oauth-role-template: update plugins/disconnect named plugin-oauth2/..."},
	{"plugin-oauth2", "links-view", "GET", legacyPlugin + "/plugin-oauth2/connect", nil, true,
		"every signed-in user holds authenticated and so the oauth2 template"},
	{"plugin-oauth2", "plain", "DELETE", legacyPlugin + "/plugin-oauth2/connect/github", nil, false,
		"delete is not among get, list, update"},
	{"plugin-oauth2", "plain", "GET", legacyPlugin + "/plugin-other/connect/github", nil, false,
		"the name plugin-other/github does not match resourceNames [plugin-oauth2]"},
	{"plugin-oauth2", "", "GET", legacyPlugin + "/plugin-oauth2/connect/github", nil, false,
		"aggregate-to-authenticated: anonymous callers do not hold it"},

	// ---- plugin-friends (legacy api.plugin.halo.run group, nonResourceURLs with *) ----
	{"plugin-friends", "", "POST", legacyPlugin + "/plugin-friends/friendRequest", nil, true,
		"friends-template-view (aggregate-to-anonymous): create plugins/friendRequest"},
	{"plugin-friends", "", "POST", legacyPlugin + "/some-plugin/friendRequest", nil, true,
		"friends-template-view has no resourceNames: any plugin name"},
	{"plugin-friends", "", "GET", legacyPlugin + "/plugin-friends/friendRequest", nil, false,
		"friends-template-view grants create only"},
	{"plugin-friends", "", "GET", friendModels + "/friends", nil, false,
		"friends models are in friends-view, not held by anonymous callers"},
	{"plugin-friends", "friends-view", "GET", friendModels + "/friends", nil, true,
		"friends-view: list friends in friend.moony.la"},
	{"plugin-friends", "friends-view", "GET", legacyPlugin + "/plugin-friends/friendposts", nil, true,
		"friends-view: get plugins/friendposts named plugin-friends"},
	{"plugin-friends", "friends-view", "GET", legacyPlugin + "/other-plugin/friendposts", nil, false,
		"plugins/friendposts is limited to the name plugin-friends"},
	{"plugin-friends", "friends-view", "DELETE", friendModels + "/friends/f1", nil, false,
		"delete is in friends-manage only"},
	{"plugin-friends", "friends-manage", "DELETE", friendModels + "/friends/f1", nil, true,
		"friends-manage: delete friends"},
	{"plugin-friends", "friends-manage", "GET", legacyPlugin + "/plugin-friends/friends", nil, true,
		"friends-view (dependency of friends-manage): get plugins/friends named plugin-friends"},
	{"plugin-friends", "friends-manage", "POST", legacyPlugin + "/plugin-friends/friendPost/synchronizationFriend", nil, false,
		"a resource request (create plugins/friendPost), so the nonResourceURLs .../friendPost/* never apply"},
	{"plugin-friends", "friends-manage", "DELETE", legacyPlugin + "/plugin-friends/friendPost/delByFriendName/f1", nil, false,
		"a resource request (delete plugins/friendPost): nonResourceURLs .../delByFriendName/* do not apply"},

	// ---- plugin-s3 (missing dependency, resourceNames, aggregation into another template) ----
	{"plugin-s3", "s3-link", "GET", s3os + "/policies/s3", nil, true,
		"s3os-link: get policies named s3 (its missing dependency role-template-manage-attachments is skipped)"},
	{"plugin-s3", "s3-link", "GET", s3os + "/policies", nil, false,
		"list has no name: resourceNames [s3] against an empty name does not match"},
	{"plugin-s3", "s3-link", "GET", s3os + "/policies/other", nil, false,
		"policies is limited to the name s3"},
	{"plugin-s3", "s3-link", "GET", s3os + "/objects/p1", nil, true,
		"s3os-link: get objects"},
	{"plugin-s3", "s3-link", "POST", s3os + "/attachments/link", nil, true,
		"non-resource create; s3os-link's nonResourceURL is this exact path"},
	{"plugin-s3", "s3-link", "DELETE", s3os + "/attachments/a1", nil, false,
		"delete attachments is in s3os-unlink, not bound"},
	{"plugin-s3", "s3-link", "POST", s3os + "/policies/s3/validation", nil, false,
		"policies/validation is aggregated into role-template-manage-configmaps only"},
	{"plugin-s3", "configmaps", "POST", s3os + "/policies/s3/validation", nil, true,
		"s3os-policy-config-validation is labelled aggregate-to-role-template-manage-configmaps: create policies/validation named s3"},
	{"plugin-s3", "configmaps", "POST", s3os + "/policies/other/validation", nil, false,
		"the aggregated rule is limited to the name s3"},
	{"plugin-s3", "configmaps", "DELETE", coreAPI + "/configmaps/c1", nil, true,
		"role-template-manage-configmaps' own rule: delete configmaps"},
	{"plugin-s3", "configmaps", "GET", s3os + "/objects/p1", nil, false,
		"objects are in s3os-link, which is not aggregated anywhere"},

	// ---- plugin-sticker (camelCase plural, aggregate keys in annotations) ----
	{"plugin-sticker", "stickers-manage", "GET", stickerStore + "/stickerGroups", nil, true,
		"stickers-manage: list stickerGroups in storage.halo.run"},
	{"plugin-sticker", "stickers-manage", "GET", stickerStore + "/stickergroups", nil, false,
		"resources are compared exactly: stickergroups is not stickerGroups"},
	{"plugin-sticker", "stickers-manage", "DELETE", stickerStore + "/stickers/s1", nil, true,
		"stickers-manage: delete stickers"},
	{"plugin-sticker", "stickers-manage", "POST", stickerStore + "/stickers", nil, false,
		"stickers-manage has no create"},
	{"plugin-sticker", "stickers-manage", "GET", stickerAPI + "/stickers", nil, false,
		"sticker.api.halo.run is in stickers-view, which stickers-manage does not depend on"},
	{"plugin-sticker", "plain", "POST", stickerAPI + "/stickers", nil, false,
		"selfstickers-manage's aggregate-to-authenticated is an annotation, not a label: no effect"},
	{"plugin-sticker", "plain", "GET", stickerAPI + "/stickers", nil, false,
		"nor does it reach signed-in users for list"},
	{"plugin-sticker", "selfstickers", "GET", stickerAPI + "/stickers", nil, true,
		"bound explicitly, selfstickers-manage grants list stickers"},
	{"plugin-sticker", "selfstickers", "POST", stickerAPI + "/stickers/-/upload", nil, true,
		"selfstickers-manage: create stickers/upload"},
	{"plugin-sticker", "selfstickers", "DELETE", stickerAPI + "/stickers/s1", nil, false,
		"selfstickers-manage grants create, list only"},

	// ---- plugin-feed (anonymous list) ----
	{"plugin-feed", "", "GET", feedAPI + "/rss-sources", nil, true,
		"template-feed-public-apis (aggregate-to-anonymous): list rss-sources"},
	{"plugin-feed", "", "GET", feedAPI + "/rss-sources?watch=true", nil, false,
		"?watch=true is watch: the template grants list only"},
	{"plugin-feed", "", "GET", feedAPI + "/rss-sources", wsUpgrade, false,
		"a WebSocket upgrade on a collection is watch"},
	{"plugin-feed", "", "GET", feedAPI + "/rss-sources/s1", nil, false,
		"get (a name): the template grants list only"},

	// ---- plugin-app-store (core group "", secrets with resourceNames, missing deps) ----
	{"plugin-app-store", "appstore", "GET", coreAPI + "/secrets/halo-run-app-store-pat-secret", nil, true,
		"manage-appstore: get secrets named halo-run-app-store-pat-secret in the core group"},
	{"plugin-app-store", "appstore", "PUT", coreAPI + "/secrets/halo-run-app-store-pat-secret", nil, true,
		"manage-appstore: update that secret"},
	{"plugin-app-store", "appstore", "GET", coreAPI + "/secrets/other", nil, false,
		"secrets are limited to halo-run-app-store-pat-secret"},
	{"plugin-app-store", "appstore", "GET", coreAPI + "/secrets", nil, false,
		"list is not granted (and carries no name)"},
	{"plugin-app-store", "appstore", "POST", coreAPI + "/secrets", nil, false,
		"create carries no name, so resourceNames never match it"},
	{"plugin-app-store", "appstore", "POST", coreAPI + "/secrets/halo-run-app-store-pat-secret", nil, false,
		"POST <res>/<name> is non-resource; the template has no nonResourceURLs"},
	{"plugin-app-store", "appstore", "GET", coreAPI + "/plugins", nil, false,
		"its dependencies role-template-manage-plugins/-themes do not exist here: they grant nothing"},

	// ---- plugin-umami (mixed-case resourceName) ----
	{"plugin-umami", "umami", "GET", coreAPI + "/configmaps/plugin-umami-configMap", nil, true,
		"view-umami: get configmaps named plugin-umami-configMap"},
	{"plugin-umami", "umami", "GET", coreAPI + "/configmaps/plugin-umami-configmap", nil, false,
		"resourceNames are compared exactly, case included"},
	{"plugin-umami", "umami", "GET", coreAPI + "/configmaps", nil, false,
		"list carries no name and is not granted"},

	// ---- plugin-migrate: live here (see migrateRow for the deleted state) ----
	{"plugin-migrate", "migrate", "POST", "/apis/plugin.halo.run/v1alpha1/plugins/PluginMigrate/rss-parse", nil, true,
		"created through the API the role is live (deletionTimestamp in a body is ignored): create plugins/rss-parse named PluginMigrate"},
	{"plugin-migrate", "migrate", "POST", legacyPlugin + "/PluginMigrate/migrations/rss-parse", nil, false,
		"the real route is plugins/migrations in api.plugin.halo.run: not what the template names"},
}

// builtinRows check the built-in roles under halo.run (docs/api.md).
var builtinRows = []accessRow{
	{"built-in", "", "GET", "/healthz", nil, true, "anonymous: get /healthz"},
	{"built-in", "", "GET", "/readyz", nil, true, "anonymous: get /readyz"},
	{"built-in", "", "GET", "/openapi.json", nil, true, "anonymous: get /openapi.json"},
	{"built-in", "", "GET", "/swagger-ui/index.html", nil, true, "anonymous: get /swagger-ui/* (trailing * prefix match)"},
	{"built-in", "", "POST", "/healthz", nil, false, "anonymous grants get only"},
	{"built-in", "", "GET", corpusConsole + "/users/-", nil, false, "users/- is in authenticated, not anonymous"},
	{"built-in", "", "GET", corpusRoles, nil, false, "anonymous may not list roles"},
	{"built-in", "", "GET", "/apis/content.halo.run/v1alpha1/posts", nil, false, "anonymous grants nothing under /apis"},
	{"built-in", "plain", "GET", corpusConsole + "/users/-", nil, true, "authenticated: get users named -"},
	{"built-in", "plain", "GET", corpusConsole + "/users/-/permissions", nil, true, "authenticated: get users/permissions named -"},
	{"built-in", "plain", "GET", corpusRoles, nil, false, "authenticated does not grant roles"},
	{"built-in", "plain", "GET", corpusConsole + "/users/admin", nil, false, "authenticated is limited to the name -"},
	{"built-in", "plain", "GET", corpusConsole + "/users/admin/permissions", nil, false, "authenticated is limited to the name -"},
	{"built-in", "admin", "GET", corpusRoles, nil, true, "admin is bound to super-role"},
}

// migrateRow is the plugin-migrate request once its role is deleted.
var migrateRow = accessRow{"plugin-migrate", "migrate", "POST", "/apis/plugin.halo.run/v1alpha1/plugins/PluginMigrate/rss-parse", nil, false,
	"role-template-migration now carries a deletionTimestamp (a finalizer keeps it): it grants nothing"}

func (r accessRow) String() string {
	who := "anonymous"
	if r.user != "" {
		who = fmt.Sprintf("%s %v", r.user, corpusUsers[r.user])
	}
	return fmt.Sprintf("[%s] %s: %s %s", r.plugin, who, r.method, r.path)
}

// decide sends the row's request and reports whether access control let
// it through, failing the test on a status that means neither.
func (s *corpusServer) decide(r accessRow) (allowed bool, status int, body string) {
	status, b := s.send(r.user, r.method, r.path, r.header, "")
	switch {
	case r.user == "" && status == http.StatusForbidden:
		s.t.Errorf("%s: an anonymous caller got 403 (want 401 for a denial): %s", r, b)
	case r.user != "" && status == http.StatusUnauthorized:
		s.t.Errorf("%s: a signed-in caller got 401: %s", r, b)
	}
	return status != http.StatusUnauthorized && status != http.StatusForbidden, status, string(b)
}

func TestCorpusAccessControl(t *testing.T) {
	docs, files := readCorpus(t)
	s := startCorpusServer(t)
	s.waitFor("admin signs in", func() (bool, string) {
		st, b := s.send("admin", "GET", corpusRoles, nil, "")
		return st == http.StatusOK, fmt.Sprintf("%d %s", st, b)
	})

	// The corpus README: 41 files, 71 documents, 26 of them Roles.
	var roles []corpusDoc
	for _, d := range docs {
		if d.obj["kind"] == "Role" && d.obj["apiVersion"] == "v1alpha1" {
			roles = append(roles, d)
		}
	}
	if files != 41 || len(docs) != 71 || len(roles) != 26 {
		t.Errorf("read %d files, %d documents, %d Roles; the corpus README says 41, 71, 26", files, len(docs), len(roles))
	}

	// Every Role document is created as is. One of them,
	// plugin-migrate's role-template-migration, is shipped with
	// metadata.deletionTimestamp (so that Halo deletes the template older
	// versions created). The API ignores server-managed fields in a body
	// (docs/api.md), so it is created as a live role: we create it and
	// check both states, live below and deleted at the end (a finalizer
	// keeps it readable with its deletionTimestamp).
	for _, d := range roles {
		js, err := json.Marshal(d.obj)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		st, b := s.send("admin", "POST", corpusRoles, nil, string(js))
		if st != http.StatusCreated {
			t.Errorf("%s: POST %s = %d %s", d, corpusRoles, st, b)
			continue
		}
		if md, _ := d.obj["metadata"].(map[string]any); md["deletionTimestamp"] != nil {
			var created struct {
				Metadata map[string]any `json:"metadata"`
			}
			_ = json.Unmarshal(b, &created)
			if ts, ok := created.Metadata["deletionTimestamp"]; ok {
				t.Errorf("%s: the deletionTimestamp of the body was stored (%v); docs/api.md says it is ignored", d, ts)
			}
		}
	}
	if st, b := s.send("admin", "POST", corpusRoles, nil, manageConfigMaps); st != http.StatusCreated {
		t.Fatalf("create role-template-manage-configmaps: %d %s", st, b)
	}

	// Users are created, and sign in once, in parallel: hashing and
	// checking a bcrypt password is slow under the race detector, and the
	// server caches a verified credential.
	var wg sync.WaitGroup
	for name, bound := range corpusUsers {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"name": name, "displayName": name, "password": corpusPassword(name), "roles": bound})
			st, b, err := s.do("admin", "POST", corpusConsole+"/users", nil, string(body))
			if err != nil || st != http.StatusCreated {
				t.Errorf("create user %s: %d %s %v", name, st, b, err)
				return
			}
			st, b, err = s.do(name, "GET", corpusConsole+"/users/-", nil, "")
			if err != nil || st != http.StatusOK {
				t.Errorf("user %s: GET users/- = %d %s %v", name, st, b, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	rows := append(slices.Clone(corpusRows), builtinRows...)
	plugins := map[string]int{}
	for _, r := range corpusRows {
		plugins[r.plugin]++
	}
	if len(plugins) < 8 {
		t.Errorf("rows cover %d plugins, want at least 8", len(plugins))
	}

	// Roles and bindings reach the resolver through a watch: poll the
	// allowed rows until every one is allowed (or a deadline passes), and
	// only then check the denied rows, once each, so that a denial is
	// never observed before the bindings are in effect.
	pending := map[int]string{}
	for i, r := range rows {
		if r.allow {
			pending[i] = ""
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(pending) > 0 && time.Now().Before(deadline) {
		for i := range pending {
			if ok, st, b := s.decide(rows[i]); ok {
				delete(pending, i)
			} else {
				pending[i] = fmt.Sprintf("%d %s", st, b)
			}
		}
		if len(pending) > 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, i := range slices.Sorted(func(yield func(int) bool) {
		for i := range pending {
			if !yield(i) {
				return
			}
		}
	}) {
		t.Errorf("%s: denied, want allowed (%s): %s", rows[i], rows[i].why, pending[i])
	}
	for _, r := range rows {
		if r.allow {
			continue
		}
		if ok, st, b := s.decide(r); ok {
			t.Errorf("%s: allowed (%d), want denied (%s): %s", r, st, r.why, b)
		}
	}

	// role-template-migration as shipped: deleted. A finalizer keeps it
	// stored with its deletionTimestamp; docs/api.md: it grants nothing.
	const migration = corpusRoles + "/role-template-migration"
	st, b := s.send("admin", "GET", migration, nil, "")
	if st != http.StatusOK {
		t.Fatalf("GET %s: %d %s", migration, st, b)
	}
	var role map[string]any
	if err := json.Unmarshal(b, &role); err != nil {
		t.Fatal(err)
	}
	role["metadata"].(map[string]any)["finalizers"] = []string{"corpus-test/keep"}
	js, _ := json.Marshal(role)
	if st, b := s.send("admin", "PUT", migration, nil, string(js)); st != http.StatusOK {
		t.Fatalf("PUT %s with a finalizer: %d %s", migration, st, b)
	}
	if st, b := s.send("admin", "DELETE", migration, nil, ""); st != http.StatusOK || !strings.Contains(string(b), "deletionTimestamp") {
		t.Fatalf("DELETE %s: %d %s", migration, st, b)
	}
	if st, b := s.send("admin", "GET", migration, nil, ""); st != http.StatusOK || !strings.Contains(string(b), "deletionTimestamp") {
		t.Fatalf("GET %s after delete: %d %s, want it kept with a deletionTimestamp", migration, st, b)
	}
	s.waitFor(migrateRow.String()+" ("+migrateRow.why+")", func() (bool, string) {
		ok, st, b := s.decide(migrateRow)
		return !ok, fmt.Sprintf("allowed: %d %s", st, b)
	})

	t.Logf("checked %d rows (%d from the corpus templates over %d plugins, %d for built-in roles, 1 for the deleted migrate role); rows per plugin: %v",
		len(rows)+1, len(corpusRows), len(plugins), len(builtinRows), plugins)
}
