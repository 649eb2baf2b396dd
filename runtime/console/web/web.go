package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/svcrun/svc/runtime/api/problem"
)

//go:embed static
var static embed.FS

// Vendored files carry their version in their name, so a browser may keep
// them for a year; our own files and the page are revalidated by ETag on
// every load, so a new build shows at once.
const (
	vendorCacheControl = "public, max-age=31536000, immutable"
	ownCacheControl    = "no-cache"
)

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
}

type asset struct {
	body         []byte
	contentType  string
	etag         string
	cacheControl string
}

func newAsset(name string, body []byte, cacheControl string) *asset {
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	sum := sha256.Sum256(body)
	return &asset{body: body, contentType: ct, cacheControl: cacheControl,
		etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
}

// importMap finds the page's one inline script, the import map, whose hash
// the Content-Security-Policy allows: no other inline script runs.
var importMap = regexp.MustCompile(`(?s)<script type="importmap">(.*?)</script>`)

// csp is the page's policy: everything from this origin only, no inline
// script but the import map, no framing, no plugins.
func csp(page []byte) string {
	m := importMap.FindSubmatch(page)
	if m == nil {
		panic("console index.html has no import map")
	}
	sum := sha256.Sum256(m[1])
	return "default-src 'self'; script-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
		"frame-ancestors 'none'; form-action 'none'"
}

// Handler serves the console under prefix (e.g. "/console/") for a server
// of the given brand domain, which the page reads from a <meta> to build
// every API path. It expects the request's full path. Only GET and HEAD
// are served; an unknown name is a 404 problem document.
func Handler(prefix, brand string) http.Handler {
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	files := map[string]*asset{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		cc := ownCacheControl
		if strings.HasPrefix(name, "vendor/") {
			cc = vendorCacheControl
		}
		if name == "index.html" {
			body = bytes.ReplaceAll(body, []byte("{{BRAND}}"), []byte(html.EscapeString(brand)))
		}
		files[name] = newAsset(name, body, cc)
		return nil
	})
	if err != nil {
		panic("console assets: " + err.Error()) // embedded: cannot fail at run time
	}
	policy := csp(files["index.html"].body)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			fail(w, r, problem.New(http.StatusMethodNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			fail(w, r, problem.New(http.StatusNotFound, "%s is not under %s", r.URL.Path, prefix))
			return
		}
		if name == "" {
			name = "index.html"
		}
		a, ok := files[name]
		if !ok {
			fail(w, r, problem.New(http.StatusNotFound, "no console asset %q", name))
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", a.cacheControl)
		h.Set("ETag", a.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if name == "index.html" {
			h.Set("Content-Security-Policy", policy)
			h.Set("X-Frame-Options", "DENY")
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}

func fail(w http.ResponseWriter, r *http.Request, err *problem.Error) {
	problem.Write(w, r, w.Header().Get("X-Request-Id"), problem.From(err))
}
