package swaggerui

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func get(t *testing.T, h http.Handler, method, target string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestIndex(t *testing.T) {
	h := Handler("/swagger-ui/")
	for _, target := range []string{"/swagger-ui/", "/swagger-ui/index.html"} {
		res := get(t, h, "GET", target, nil)
		b := string(body(t, res))
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d", target, res.StatusCode)
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", target, ct)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q", target, cc)
		}
		for _, want := range []string{`src="swagger-ui-bundle.js"`, `href="swagger-ui.css"`, `url: "/openapi.json"`, `dom_id: "#swagger-ui"`, `validatorUrl: null`} {
			if !strings.Contains(b, want) {
				t.Errorf("GET %s: page lacks %s", target, want)
			}
		}
	}
}

// Every file the page refers to is served, with a relative URL, and the
// page refers to nothing outside this server.
func TestIndexReferencesEmbeddedFiles(t *testing.T) {
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(indexHTML), -1)
	if len(refs) < 3 {
		t.Fatalf("found only %d references in index.html", len(refs))
	}
	h := Handler("/swagger-ui/")
	for _, m := range refs {
		ref := m[1]
		if ref == "/openapi.json" { // the <noscript> link to the document
			continue
		}
		if strings.Contains(ref, ":") || strings.HasPrefix(ref, "/") {
			t.Errorf("index.html refers to %q; want a relative URL", ref)
			continue
		}
		if res := get(t, h, "GET", "/swagger-ui/"+ref, nil); res.StatusCode != 200 {
			t.Errorf("index.html refers to %q, which answers %d", ref, res.StatusCode)
		}
	}
	if regexp.MustCompile(`https?://`).Match(indexHTML) {
		t.Errorf("index.html names an absolute URL")
	}
}

func TestAssets(t *testing.T) {
	h := Handler("/swagger-ui/")
	cases := map[string]string{
		"swagger-ui-bundle.js":             "text/javascript; charset=utf-8",
		"swagger-ui.css":                   "text/css; charset=utf-8",
		"favicon-32x32.png":                "image/png",
		"LICENSE":                          "text/plain; charset=utf-8",
		"NOTICE":                           "text/plain; charset=utf-8",
		"VERSION":                          "text/plain; charset=utf-8",
		"swagger-ui-bundle.js.LICENSE.txt": "text/plain; charset=utf-8",
	}
	for name, ct := range cases {
		res := get(t, h, "GET", "/swagger-ui/"+name, nil)
		b := body(t, res)
		if res.StatusCode != 200 {
			t.Errorf("GET %s: %d", name, res.StatusCode)
			continue
		}
		if got := res.Header.Get("Content-Type"); got != ct {
			t.Errorf("GET %s: Content-Type %q, want %q", name, got, ct)
		}
		want, _ := dist.ReadFile("dist/" + name)
		if !bytes.Equal(b, want) {
			t.Errorf("GET %s: body differs from the embedded file (%d vs %d bytes)", name, len(b), len(want))
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
			t.Errorf("GET %s: Cache-Control %q", name, cc)
		}
		if res.Header.Get("ETag") == "" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v", name, res.Header)
		}
	}
	res := get(t, h, "GET", "/swagger-ui/swagger-ui-bundle.js", nil)
	if b := body(t, res); !bytes.Contains(b, []byte("SwaggerUIBundle")) || len(b) < 1<<20 {
		t.Errorf("the bundle does not look like Swagger UI (%d bytes)", len(b))
	}
}

func TestNotFound(t *testing.T) {
	h := Handler("/swagger-ui/")
	for _, target := range []string{
		"/swagger-ui/nope.js",
		"/swagger-ui/swagger-ui-bundle.js.map",
		"/swagger-ui/swagger-ui-standalone-preset.js",
		"/swagger-ui/dist/swagger-ui.css",
		"/swagger-ui/../swaggerui.go",
		"/swagger-ui/index.html/",
		"/elsewhere",
	} {
		res := get(t, h, "GET", target, nil)
		if res.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", target, res.StatusCode)
			continue
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("GET %s: Content-Type %q", target, ct)
		}
		var p struct {
			Status int    `json:"status"`
			Detail string `json:"detail"`
		}
		if err := json.Unmarshal(body(t, res), &p); err != nil || p.Status != 404 || p.Detail == "" {
			t.Errorf("GET %s: problem %+v, %v", target, p, err)
		}
	}
}

func TestRedirectAndMethods(t *testing.T) {
	h := Handler("/swagger-ui/")
	res := get(t, h, "GET", "/swagger-ui", nil)
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/swagger-ui/" {
		t.Errorf("GET /swagger-ui: %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	res = get(t, h, "GET", "/swagger-ui?x=1", nil)
	if res.Header.Get("Location") != "/swagger-ui/?x=1" {
		t.Errorf("the redirect dropped the query: %q", res.Header.Get("Location"))
	}

	res = get(t, h, "POST", "/swagger-ui/", nil)
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}

	res = get(t, h, "HEAD", "/swagger-ui/swagger-ui.css", nil)
	if b := body(t, res); res.StatusCode != 200 || len(b) != 0 || res.Header.Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", res.StatusCode, len(b), res.Header.Get("Content-Length"))
	}
}

func TestPrefixNormalised(t *testing.T) {
	for _, prefix := range []string{"docs", "/docs", "docs/", "/docs/"} {
		h := Handler(prefix)
		if res := get(t, h, "GET", "/docs/", nil); res.StatusCode != 200 {
			t.Errorf("Handler(%q): GET /docs/: %d", prefix, res.StatusCode)
		}
		if res := get(t, h, "GET", "/docs", nil); res.Header.Get("Location") != "/docs/" {
			t.Errorf("Handler(%q): GET /docs: Location %q", prefix, res.Header.Get("Location"))
		}
	}
	if res := get(t, Handler("/"), "GET", "/swagger-ui.css", nil); res.StatusCode != 200 {
		t.Errorf("Handler(/): %d", res.StatusCode)
	}
}

func TestConditionalAndGzip(t *testing.T) {
	h := Handler("/swagger-ui/")
	const js = "/swagger-ui/swagger-ui-bundle.js"
	plain := get(t, h, "GET", js, nil)
	etag := plain.Header.Get("ETag")
	if res := get(t, h, "GET", js, http.Header{"If-None-Match": {etag}}); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}

	res := get(t, h, "GET", js, http.Header{"Accept-Encoding": {"br, gzip;q=0.8"}})
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", res.Header)
	}
	if res.Header.Get("ETag") == etag {
		t.Errorf("the gzip form has the ETag of the plain one")
	}
	if !slices.Contains(res.Header.Values("Vary"), "Accept-Encoding") {
		t.Errorf("no Vary: Accept-Encoding")
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	unz, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := dist.ReadFile("dist/swagger-ui-bundle.js")
	if !bytes.Equal(unz, want) {
		t.Errorf("the gzip body does not decompress to the bundle")
	}
	if res := get(t, h, "GET", js, http.Header{"If-None-Match": {res.Header.Get("ETag")}, "Accept-Encoding": {"gzip"}}); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match on the gzip form: %d", res.StatusCode)
	}

	if res := get(t, h, "GET", "/swagger-ui/favicon-32x32.png", http.Header{"Accept-Encoding": {"gzip"}}); res.Header.Get("Content-Encoding") != "" {
		t.Errorf("the PNG was compressed")
	}
}

// dist holds exactly the files we mean to ship.
func TestDistContents(t *testing.T) {
	var names []string
	fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, "dist/"))
		}
		return err
	})
	want := []string{"LICENSE", "NOTICE", "VERSION", "favicon-32x32.png", "swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "swagger-ui.css"}
	if !slices.Equal(names, want) {
		t.Errorf("dist holds %v, want %v", names, want)
	}
	if v := Version(); !regexp.MustCompile(`^swagger-ui-dist@5\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("Version() = %q", v)
	}
}

// Mounted as runtime/api mounts it: Gin passes the full path.
func TestUnderGin(t *testing.T) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.GET("/swagger-ui/*asset", gin.WrapH(Handler("/swagger-ui/")))
	res := get(t, e, "GET", "/swagger-ui/", nil)
	if res.StatusCode != 200 || !bytes.Contains(body(t, res), []byte("swagger-ui-bundle.js")) {
		t.Errorf("GET /swagger-ui/ through Gin: %d", res.StatusCode)
	}
	if res := get(t, e, "GET", "/swagger-ui/swagger-ui-bundle.js", nil); res.StatusCode != 200 {
		t.Errorf("GET the bundle through Gin: %d", res.StatusCode)
	}
	if res := get(t, e, "GET", "/swagger-ui/missing.js", nil); res.StatusCode != 404 {
		t.Errorf("GET a missing asset through Gin: %d", res.StatusCode)
	}
}

// Concurrent first requests share one compression of each asset.
func TestConcurrentGzip(t *testing.T) {
	h := Handler("/swagger-ui/")
	done := make(chan []byte)
	for range 8 {
		go func() {
			req := httptest.NewRequest("GET", "/swagger-ui/swagger-ui.css", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			done <- rec.Body.Bytes()
		}()
	}
	first := <-done
	for range 7 {
		if b := <-done; !bytes.Equal(b, first) {
			t.Errorf("concurrent gzip responses differ")
		}
	}
}

// TestAssetsReadAtFirstRequest: making the handler reads no asset (a
// server holds them only once someone opens Swagger UI); its first
// request reads them, once.
func TestAssetsReadAtFirstRequest(t *testing.T) {
	before := reads.Load()
	h := Handler("/lazy/")
	if n := reads.Load() - before; n != 0 {
		t.Fatalf("Handler read the assets %d times before any request", n)
	}
	for range 3 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/lazy/", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /lazy/ = %d", rec.Code)
		}
	}
	if n := reads.Load() - before; n != 1 {
		t.Errorf("three requests read the assets %d times, want once", n)
	}
}
