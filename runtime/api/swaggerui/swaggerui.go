package swaggerui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/runtime/api/problem"
)

//go:embed index.html
var indexHTML []byte

//go:embed dist
var dist embed.FS

// Cache lifetimes. The asset URLs carry no version, so assets are cached
// for a day and then revalidated by ETag; the page is always revalidated,
// so a new build's page shows on the next load.
const (
	assetCacheControl = "public, max-age=86400"
	indexCacheControl = "no-cache"
)

// asset is one file the handler serves, with what it needs precomputed.
type asset struct {
	body         []byte
	contentType  string
	etag         string
	cacheControl string
	compressible bool

	gzOnce sync.Once
	gz     []byte // gzip of body, made on first request that accepts it
}

// gzipped returns the gzip form of the body, or nil when it would not be
// smaller.
func (a *asset) gzipped() []byte {
	a.gzOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(a.body)
		zw.Close()
		if b.Len() < len(a.body) {
			a.gz = b.Bytes()
		}
	})
	return a.gz
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".png":  "image/png",
	".txt":  "text/plain; charset=utf-8",
	"":      "text/plain; charset=utf-8", // LICENSE, NOTICE, VERSION
}

func newAsset(name string, body []byte, cacheControl string) *asset {
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	sum := sha256.Sum256(body)
	return &asset{
		body:         body,
		contentType:  ct,
		etag:         `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
		cacheControl: cacheControl,
		compressible: strings.HasPrefix(ct, "text/"),
	}
}

// indexName is the name under which the page itself is also served.
const indexName = "index.html"

// assets maps a file name (relative to the prefix) to the file; built once.
var assets = sync.OnceValue(func() map[string]*asset {
	m := map[string]*asset{indexName: newAsset(indexName, indexHTML, indexCacheControl)}
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		m[strings.TrimPrefix(p, "dist/")] = newAsset(p, body, assetCacheControl)
		return nil
	})
	if err != nil { // the embedded tree is fixed at build time
		panic("swaggerui: reading embedded assets: " + err.Error())
	}
	return m
})

// Version returns the first line of dist/VERSION: the swagger-ui-dist
// package the assets come from ("swagger-ui-dist@5.35.0").
func Version() string {
	v, _ := dist.ReadFile("dist/VERSION")
	line, _, _ := strings.Cut(string(v), "\n")
	return strings.TrimSpace(line)
}

// Handler serves Swagger UI under prefix (such as "/swagger-ui/"; a
// missing leading or trailing slash is added). The page is at prefix
// itself (and at prefix+"index.html") and loads its assets with relative
// URLs and the document from /openapi.json. A request for the prefix
// without its trailing slash is redirected (301) to the prefix, so the
// handler works mounted on a plain http.ServeMux; runtime/api routes that
// path to its own redirect and passes only prefix/... here. The handler
// expects the request's full path (do not strip the prefix).
//
// Only GET and HEAD are served (405 otherwise). Every response carries a
// Content-Type and X-Content-Type-Options: nosniff; assets get an ETag
// (conditional requests answer 304), Cache-Control (a day for assets,
// no-cache for the page) and gzip when the client accepts it. A name that
// is not an asset is a 404 problem document.
func Handler(prefix string) http.Handler {
	if !strings.HasPrefix(prefix, "/") {
		prefix = "/" + prefix
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	files := assets()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if prefix != "/" && p == strings.TrimSuffix(prefix, "/") {
			target := prefix
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusMovedPermanently)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			fail(w, r, problem.New(http.StatusMethodNotAllowed, "method %s is not allowed on %s", r.Method, p))
			return
		}
		name, ok := strings.CutPrefix(p, prefix)
		if !ok {
			fail(w, r, problem.New(http.StatusNotFound, "%s is not under %s", p, prefix))
			return
		}
		if name == "" {
			name = indexName
		}
		a, ok := files[name]
		if !ok {
			fail(w, r, problem.New(http.StatusNotFound, "no Swagger UI asset %q", name))
			return
		}
		serve(w, r, name, a)
	})
}

func serve(w http.ResponseWriter, r *http.Request, name string, a *asset) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", a.cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	body, etag := a.body, a.etag
	if a.compressible {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Values("Accept-Encoding")) {
			if gz := a.gzipped(); gz != nil {
				body, etag = gz, strings.TrimSuffix(a.etag, `"`)+`-gzip"`
				h.Set("Content-Encoding", "gzip")
			}
		}
	}
	h.Set("ETag", etag)
	// ServeContent answers If-None-Match / If-Match, Range and HEAD. The
	// embedded files have no modification time, so none is sent.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether Accept-Encoding values accept gzip: listed
// with a non-zero quality, or not listed and * accepted.
func acceptsGzip(values []string) bool {
	explicit, star := -1, -1 // -1 unlisted, 0 refused, 1 accepted
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			ok := 1
			for param := range strings.SplitSeq(params, ";") {
				k, q, _ := strings.Cut(param, "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") && strings.Trim(strings.TrimSpace(q), "0.") == "" {
					ok = 0
				}
			}
			switch coding {
			case "gzip", "x-gzip":
				explicit = max(explicit, ok)
			case "*":
				star = max(star, ok)
			}
		}
	}
	if explicit >= 0 {
		return explicit == 1
	}
	return star == 1
}

// fail writes a problem document. Under runtime/api the request id is
// already in the response headers.
func fail(w http.ResponseWriter, r *http.Request, err *problem.Error) {
	problem.Write(w, r, w.Header().Get("X-Request-Id"), problem.From(err))
}
