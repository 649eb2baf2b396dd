package plugin

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
)

// Host is what a plugin's Start step sees: the shared store and settings,
// and the place to declare the plugin's models, custom routes and
// runnables. Declarations take effect after Start returns.
type Host struct {
	name  string
	brand string
	log   *slog.Logger
	st    *store.Store
	fail  func(*gin.Context, error)
	auth  Auth

	models    []modelDecl
	routes    []routeDecl
	runnables []Runnable
	errs      []error
}

type modelDecl struct {
	m      *model.Model
	routes api.ModelRoutes
}

type routeDecl struct {
	// prefixes are where the routes are mounted, e.g. /apis/<group>/<version>.
	prefixes []string
	routes   api.Routes
}

// Name is the plugin's name.
func (h *Host) Name() string { return h.name }

// Brand is the brand domain the server runs under (docs/operations.md).
func (h *Host) Brand() string { return h.brand }

// Logger is the plugin's logger.
func (h *Host) Logger() *slog.Logger { return h.log }

// Store is the object store; build typed clients on it for the plugin's
// models (New<Kind>Client) once they are declared.
func (h *Host) Store() *store.Store { return h.st }

// Fail writes err as an RFC 7807 problem response and aborts c; custom
// handlers use it so their errors have the same shape and statuses as the
// generated APIs' (store.ErrNotFound → 404, invalid objects → 400, …).
func (h *Host) Fail(c *gin.Context, err error) { h.fail(c, err) }

// Caller returns the name of the signed-in user making request c, or
// false for an anonymous request.
func (h *Host) Caller(c *gin.Context) (string, bool) {
	if h.auth.Caller == nil {
		return "", false
	}
	return h.auth.Caller(c)
}

// Allowed reports whether the caller of c holds a role that allows the
// request info describes (for example an update of posts/publish), for
// handlers whose rules go beyond the request's own path.
func (h *Host) Allowed(c *gin.Context, info *rbac.RequestInfo) bool {
	if h.auth.Allowed == nil {
		return false
	}
	return h.auth.Allowed(c, info)
}

// Model declares a model the plugin serves. Its indexes are built from the
// stored objects before the plugin counts as started (its routes answer
// 503 meanwhile). routes mounts its CRUD API (the generated
// Register<Kind>Routes); nil mounts the default routes.
func (h *Host) Model(m *model.Model, routes api.ModelRoutes) {
	h.models = append(h.models, modelDecl{m: m, routes: routes})
}

// Routes declares custom API routes. groupVersion is "<group>/<version>"
// (routes are mounted under /apis/<group>/<version>) or, for the earlier
// generation, only "<version>" (mounted under
// /apis/plugin.api.<brand>/<version>/plugins/<plugin> and
// /apis/api.plugin.<brand>/<version>/plugins/<plugin>). Routes without a
// version are ignored with a warning (a controller without an API
// version declaration is ignored, docs/plugins.md). Paths given to the router are relative
// to that prefix, e.g. r.GET("/persons/:name/greeting", …). The routes go
// through access control like every other path, and answer 503 until the
// plugin has started.
func (h *Host) Routes(groupVersion string, routes api.Routes) {
	if routes == nil {
		return
	}
	prefixes, err := routePrefixes(h.brand, h.name, groupVersion)
	if err != nil {
		h.log.Warn("custom routes ignored", "plugin", h.name, "groupVersion", groupVersion, "reason", err.Error())
		return
	}
	h.routes = append(h.routes, routeDecl{prefixes: prefixes, routes: routes})
}

// Run declares long-running work (a controller) started once the plugin's
// models are ready and stopped, by cancelling its context, when the plugin
// stops.
func (h *Host) Run(r Runnable) {
	if r == nil {
		h.errs = append(h.errs, fmt.Errorf("plugin %s: Run of a nil runnable", h.name))
		return
	}
	h.runnables = append(h.runnables, r)
}

// Auth is how plugins learn who is calling and what they may do; the
// server wires it to access control.
type Auth struct {
	Caller  func(c *gin.Context) (string, bool)
	Allowed func(c *gin.Context, info *rbac.RequestInfo) bool
}

// routePrefixes turns a custom API's group-version into mount points.
func routePrefixes(brand, plugin, gv string) ([]string, error) {
	gv = strings.Trim(strings.TrimSpace(gv), "/")
	if gv == "" {
		return nil, fmt.Errorf("no API version declared")
	}
	group, version, hasGroup := strings.Cut(gv, "/")
	if !hasGroup {
		version, group = group, ""
	}
	if version == "" || strings.Contains(version, "/") || (hasGroup && group == "") {
		return nil, fmt.Errorf("%q is not <group>/<version> or <version>", gv)
	}
	if !hasGroup {
		return []string{
			"/apis/plugin.api." + brand + "/" + version + "/plugins/" + plugin,
			"/apis/api.plugin." + brand + "/" + version + "/plugins/" + plugin,
		}, nil
	}
	return []string{"/apis/" + group + "/" + version}, nil
}
