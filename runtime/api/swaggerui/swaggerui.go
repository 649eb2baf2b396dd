package swaggerui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/svcrun/svc/runtime/api/assets"
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

// reads counts how often the embedded assets were read (tests).
var reads atomic.Int64

// readFiles maps each file name (relative to the prefix) to the file.
// The bodies are copies on the heap (embed.FS has no other way to hand
// them out): 1.7 MB that a server whose Swagger UI nobody opens need
// not hold, so Handler reads them at its first request.
func readFiles() map[string]*assets.File {
	reads.Add(1)
	m := map[string]*assets.File{assets.Index: assets.NewFile(assets.Index, indexHTML, indexCacheControl)}
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		m[strings.TrimPrefix(p, "dist/")] = assets.NewFile(p, body, assetCacheControl)
		return nil
	})
	if err != nil { // the embedded tree is fixed at build time
		panic("swaggerui: reading embedded assets: " + err.Error())
	}
	return m
}

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
	h := sync.OnceValue(func() http.Handler { return assets.Handler(prefix, "Swagger UI", readFiles(), nil) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h().ServeHTTP(w, r) })
}
