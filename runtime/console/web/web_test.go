package web

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler("/console/", `halo.run"><script>`)
	get := func(p string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
		return w
	}
	w := get("/console/")
	if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("page: %d, Cache-Control %q", w.Code, w.Header().Get("Cache-Control"))
	}
	body := w.Body.String()
	// The brand is escaped into the page, never markup.
	if !strings.Contains(body, `content="halo.run&#34;&gt;&lt;script&gt;"`) {
		t.Errorf("brand not escaped into the meta: %s", body)
	}
	// The policy allows exactly the inline import map, by hash.
	m := importMap.FindStringSubmatch(body)
	sum := sha256.Sum256([]byte(m[1]))
	policy := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(policy, "default-src 'self'") || !strings.Contains(policy, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || strings.Contains(policy, "unsafe-inline") {
		t.Errorf("policy %q", policy)
	}
	// Every module the import map names is served, for a year.
	for _, p := range []string{"preact", "preact/hooks", "htm"} {
		i := strings.Index(m[1], `"`+p+`":"./`)
		if i < 0 {
			t.Fatalf("import map lacks %s: %s", p, m[1])
		}
		rest := m[1][i+len(p)+6:]
		file := rest[:strings.Index(rest, `"`)]
		w := get("/console/" + file)
		if w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Cache-Control"), "immutable") || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/javascript") {
			t.Errorf("%s: %d %q %q", file, w.Code, w.Header().Get("Cache-Control"), w.Header().Get("Content-Type"))
		}
	}
	if w := get("/console/app.js"); w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("ETag") == "" {
		t.Errorf("app.js: %d %q", w.Code, w.Header().Get("Cache-Control"))
	}
	if w := get("/console/nope.js"); w.Code != http.StatusNotFound || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/problem+json") {
		t.Errorf("unknown asset: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	// The console's own code goes compressed to a browser that accepts it.
	r := httptest.NewRequest(http.MethodGet, "/console/app.js", nil)
	r.Header.Set("Accept-Encoding", "gzip, deflate, br")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Header().Get("Content-Encoding") != "gzip" || w.Body.Len() >= len(get("/console/app.js").Body.Bytes()) {
		t.Errorf("app.js with gzip accepted: Content-Encoding %q, %d bytes", w.Header().Get("Content-Encoding"), w.Body.Len())
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/console/", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}
}
