package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html"
	"io/fs"
	"net/http"
	"regexp"
	"strings"

	"github.com/svcrun/svc/runtime/api/assets"
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
// are served; an unknown name is a 404 problem document (assets.Handler).
func Handler(prefix, brand string) http.Handler {
	files := map[string]*assets.File{}
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
		if name == assets.Index {
			body = bytes.ReplaceAll(body, []byte("{{BRAND}}"), []byte(html.EscapeString(brand)))
		}
		files[name] = assets.NewFile(name, body, cc)
		return nil
	})
	if err != nil {
		panic("console assets: " + err.Error()) // embedded: cannot fail at run time
	}
	policy := csp(files[assets.Index].Body)
	return assets.Handler(prefix, "console", files, func(name string, h http.Header) {
		h.Set("Referrer-Policy", "no-referrer")
		if name == assets.Index {
			h.Set("Content-Security-Policy", policy)
			h.Set("X-Frame-Options", "DENY")
		}
	})
}
