// Package assets serves a fixed set of embedded files (Swagger UI, the
// console) under a path prefix: content types, ETags and conditional
// requests, Cache-Control per file, gzip for text when the client accepts
// it, and problem documents for what is not a file.
package assets

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/runtime/api/problem"
)

// Index is the name under which the page at the prefix itself is served.
const Index = "index.html"

// File is one file served, with what it needs precomputed.
type File struct {
	Body         []byte
	contentType  string
	etag         string
	cacheControl string
	compressible bool

	gzOnce sync.Once
	gz     []byte // gzip of Body, made on the first request that accepts it
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".png":  "image/png",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
	"":      "text/plain; charset=utf-8", // LICENSE, NOTICE, VERSION
}

// NewFile is the file name with body, sent with cacheControl.
func NewFile(name string, body []byte, cacheControl string) *File {
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	sum := sha256.Sum256(body)
	return &File{
		Body:         body,
		contentType:  ct,
		etag:         `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
		cacheControl: cacheControl,
		compressible: strings.HasPrefix(ct, "text/"),
	}
}

// gzipped returns the gzip form of the body, or nil when it would not be
// smaller.
func (f *File) gzipped() []byte {
	f.gzOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(f.Body)
		zw.Close()
		if b.Len() < len(f.Body) {
			f.gz = b.Bytes()
		}
	})
	return f.gz
}

// Handler serves files under prefix (a missing leading or trailing slash
// is added); the page is at prefix itself and at prefix+Index. The
// prefix without its trailing slash is redirected (301) to it. It expects
// the request's full path. Only GET and HEAD are served (405 otherwise);
// a name that is no file is a 404 problem naming what (e.g. "Swagger
// UI"). header, if set, adds headers for a file by name.
func Handler(prefix, what string, files map[string]*File, header func(name string, h http.Header)) http.Handler {
	if !strings.HasPrefix(prefix, "/") {
		prefix = "/" + prefix
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
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
			name = Index
		}
		f, ok := files[name]
		if !ok {
			fail(w, r, problem.New(http.StatusNotFound, "no %s asset %q", what, name))
			return
		}
		if header != nil {
			header(name, w.Header())
		}
		serve(w, r, name, f)
	})
}

func serve(w http.ResponseWriter, r *http.Request, name string, f *File) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", f.cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	body, etag := f.Body, f.etag
	if f.compressible {
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Values("Accept-Encoding")) {
			if gz := f.gzipped(); gz != nil {
				body, etag = gz, strings.TrimSuffix(f.etag, `"`)+`-gzip"`
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
