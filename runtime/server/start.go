package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/access"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/swaggerui"
	"github.com/svcrun/svc/runtime/authz"
	"github.com/svcrun/svc/runtime/console/web"
	"github.com/svcrun/svc/runtime/kinds"
	"github.com/svcrun/svc/runtime/metrics"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/store"
)

// Server is a running server.
type Server struct {
	HTTP     *http.Server
	API      *api.Server
	Store    *store.Store
	Registry *model.Registry
	Plugins  *plugin.Manager
	// Metrics is what /metrics serves.
	Metrics *metrics.Metrics

	log   *slog.Logger
	parts *group
	serve *serving

	shutdownOnce sync.Once
	shutdownErr  error
}

// Start opens the store, serves on ln and registers cfg's models in the
// background. It runs the start-up steps in order (startup.steps); each
// builds its part from the parts before it and hands its long-running
// work to the server's group. When a step fails, the parts already
// started are stopped in reverse, so the store is closed and its data
// directory unlocked for the next attempt.
func Start(ctx context.Context, f Flags, cfg Config, log *slog.Logger, ln net.Listener) (*Server, error) {
	if f.BrandDomain == "" {
		f.BrandDomain = DefaultBrand
	}
	f.connDefaults()
	if cfg.Out == nil {
		cfg.Out = os.Stdout
	}
	u := &startup{f: f, cfg: cfg, log: log, ln: ln, parts: newGroup(log)}
	for _, step := range u.steps() {
		if err := step.run(ctx); err != nil {
			if serr := u.parts.stop(); serr != nil {
				log.Error("stopping after a failed start", "step", step.name, "err", serr)
			}
			return nil, err
		}
	}
	return &Server{HTTP: u.http, API: u.api, Store: u.store, Registry: u.reg, Plugins: u.plugins, Metrics: u.metrics,
		log: log, parts: u.parts, serve: u.serve}, nil
}

// startup holds what the steps of Start build, each from the fields the
// steps before it set.
type startup struct {
	f     Flags
	cfg   Config
	log   *slog.Logger
	ln    net.Listener
	parts *group

	store   *store.Store     // store
	access  *access.Access   // access control
	reg     *model.Registry  // models
	pending *pluginView      // HTTP API: bound by plugins
	metrics *metrics.Metrics // HTTP API
	api     *api.Server      // HTTP API
	plugins *plugin.Manager  // plugins
	http    *http.Server     // serve
	serve   *serving         // serve
}

// step is one stage of start-up.
type step struct {
	name string
	run  func(ctx context.Context) error
}

// steps are the stages of start-up in dependency order; shutdown stops
// the runnables they start in reverse.
func (u *startup) steps() []step {
	return []step{
		{"store", u.openStore},
		{"access control", u.accessControl},
		{"models", u.models},
		{"HTTP API", u.httpAPI},
		{"plugins", u.startPlugins},
		{"serve", u.startServing},
	}
}

// openStore opens the data directory (none with --memory), which stays
// locked until the store's runnable is stopped, last of all.
func (u *startup) openStore(ctx context.Context) error {
	dir := u.f.DataDir
	if u.f.Memory {
		dir = ""
	}
	// Load restores the data and starts nothing; the committer and syncer
	// run from Start until the store's runnable closes it.
	opts := store.Options{Dir: dir, Logger: u.log}
	if e := u.f.Etcd; e.Enabled() {
		opts.Dir = ""
		opts.Etcd = &store.EtcdOptions{Endpoints: e.Endpoints, Prefix: e.Prefix, CAFile: e.CA, CertFile: e.Cert, KeyFile: e.Key,
			Username: e.Username, Password: e.Password, MaxValueBytes: e.MaxObjectBytes, Logger: u.log}
	}
	st, err := store.Load(opts)
	if err != nil {
		return err
	}
	st.Start()
	u.store = st
	return u.parts.start(ctx, "store", untilStopped(st.Close))
}

// accessControl registers the core models, loads the built-in roles and
// the first administrator, and builds the resolver, the guard and the
// console API (access.New, which starts nothing). Its runnable follows
// roles and bindings into the resolver and cleans up after deleted users
// until it is stopped, after the plugins and before the store; the step
// returns once the resolver has every stored role and binding, so that
// no request is decided on less.
func (u *startup) accessControl(ctx context.Context) error {
	acc, err := access.New(ctx, u.store, access.Options{Brand: u.f.BrandDomain, AdminPassword: os.Getenv("SVC_ADMIN_PASSWORD"), Out: u.cfg.Out, Logger: u.log})
	if err != nil {
		return err
	}
	u.access = acc
	if err := u.parts.start(ctx, "access control", acc); err != nil {
		return err
	}
	return acc.WaitReady(ctx)
}

// models fills the registry: the core models, the shared kinds (stored
// now, before any plugin's extension files look for them) and cfg's
// models, reserved now and indexed in the background while the server
// already answers 503 for them.
func (u *startup) models(ctx context.Context) error {
	shared, err := kinds.Models(u.f.BrandDomain)
	if err != nil {
		return err
	}
	u.reg = model.NewRegistry()
	for _, m := range u.access.Models {
		if err := u.reg.Register(m); err != nil {
			return err
		}
	}
	for _, m := range shared {
		if err := u.store.Register(ctx, m); err != nil {
			return fmt.Errorf("register %s: %w", m.GVK(), err)
		}
		if err := u.reg.Register(m); err != nil {
			return err
		}
	}
	for _, m := range u.cfg.Models {
		if err := u.reg.Register(m); err != nil {
			return err
		}
		if err := u.store.Reserve(ctx, m); err != nil {
			return err
		}
	}
	return u.parts.start(ctx, "model indexes", RunnableFunc(u.buildIndexes))
}

// buildIndexes registers cfg's models with the store, which builds their
// indexes; a model that fails stays unready (503) and is logged.
func (u *startup) buildIndexes(ctx context.Context) error {
	for _, m := range u.cfg.Models {
		start := time.Now()
		if err := u.store.Register(ctx, m); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			u.log.Error("model registration failed", "model", m.GVK().String(), "err", err)
			continue
		}
		u.log.Info("model ready", "model", m.GVK().String(), "took", time.Since(start))
	}
	return nil
}

// httpAPI builds the API handler: the registry's CRUD routes, access
// control in front, and the console API. The plugin manager, built next,
// mounts plugins' routes on it, so the API reads the plugins' readiness
// and documents through a view the plugins step binds.
func (u *startup) httpAPI(context.Context) error {
	u.pending = &pluginView{}
	u.metrics = metrics.New()
	if err := u.metrics.Register(u.store.Collector(), metrics.Authn(u.access.Guard.Authn)); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	console := u.access.Console.OpenAPI() // fixed for the server's life
	docs := func() map[string][]byte {
		d := u.pending.Documents()
		d[consoleDoc] = console
		return d
	}
	a := api.New(api.Options{Console: web.Handler("/console/", u.f.BrandDomain), Store: u.store, Registry: u.reg, Logger: u.log, AccessLog: u.cfg.accessLog, Guard: u.access.Guard.Check, Settle: u.access.Settle,
		OpenAPI: openAPIDoc(u.reg, docs, u.f.BrandDomain, u.log), SwaggerUI: swaggerui.Handler("/swagger-ui/"),
		NotReady: u.pending.NotReady, Observer: u.metrics})
	for m, f := range u.access.Routes {
		a.UseRoutes(m, f)
	}
	if err := a.Mount("console", u.access.Console.Routes); err != nil {
		return err
	}
	if err := a.Mount("metrics", u.metrics.Routes); err != nil {
		return err
	}
	if u.f.Pprof {
		if err := a.Mount("pprof", pprofRoutes(a.Fail)); err != nil {
			return err
		}
	}
	for m, f := range u.cfg.Routes {
		a.UseRoutes(m, f)
	}
	if err := a.Rebuild(); err != nil {
		return err
	}
	u.api = a
	return nil
}

// startPlugins builds the plugin manager and starts it: it creates the
// missing Plugin objects and starts the enabled plugins, which register
// their models and mount their routes as each comes up.
func (u *startup) startPlugins(ctx context.Context) error {
	u.plugins = plugin.NewManager(plugin.Options{Store: u.store, Registry: u.reg, API: u.api, PluginModel: u.access.PluginModel,
		Brand: u.f.BrandDomain, Logger: u.log, Plugins: u.cfg.Plugins,
		Auth: plugin.Auth{
			Caller: func(c *gin.Context) (string, bool) {
				id := authz.IdentityOf(c)
				return id.User, id.Authenticated
			},
			Allowed: u.access.Guard.Allows,
		},
		Settle: u.access.Settle})
	u.pending.bind(u.plugins)
	if err := u.metrics.Register(metrics.Plugins(u.plugins)); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	// A manager that stops on an error leaves the server serving, its
	// plugins reported not ready by /readyz, as before the group existed.
	return u.parts.start(ctx, "plugins", RunnableFunc(func(ctx context.Context) error {
		if err := u.plugins.Run(ctx); err != nil {
			u.log.Error("plugin manager stopped", "err", err)
		}
		return nil
	}))
}

// startServing serves the API on ln, within the connection limits.
func (u *startup) startServing(ctx context.Context) error {
	u.http = &http.Server{Handler: upgrades(u.api), ErrorLog: slog.NewLogLogger(u.log.Handler(), slog.LevelWarn),
		ReadHeaderTimeout: off(u.f.ReadHeaderTimeout), ReadTimeout: off(u.f.ReadTimeout),
		WriteTimeout: off(u.f.WriteTimeout), IdleTimeout: off(u.f.IdleTimeout)}
	ln := limitListener(u.ln, u.f, u.log)
	u.serve = &serving{http: u.http, api: u.api, ln: ln}
	u.serve.grace.Store(int64(defaultGrace))
	if err := u.parts.start(ctx, "serve", u.serve); err != nil {
		return err
	}
	dir := u.f.DataDir
	if u.f.Memory {
		dir = ""
	}
	// The models served from the start (core, shared kinds, cfg's);
	// plugins' models follow as each plugin starts ("model ready").
	u.log.Info("server started", "addr", ln.Addr().String(), "dataDir", dir, "brandDomain", u.f.BrandDomain,
		"models", strings.Join(names(u.reg.Models()), ","), "plugins", strings.Join(pluginNames(u.plugins), ","))
	return nil
}

// defaultGrace is how long the HTTP server drains requests when it is
// stopped by a failure rather than by Shutdown.
const defaultGrace = 10 * time.Second

// serving is the HTTP server's runnable. Stopped, it closes the watch
// streams (which draining would not end), then stops accepting and waits
// up to grace for the requests in flight.
type serving struct {
	http  *http.Server
	api   *api.Server
	ln    net.Listener
	grace atomic.Int64 // time.Duration; Shutdown sets it before stopping
}

// Start serves until ctx ends, then drains.
func (s *serving) Start(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	select {
	case err := <-errc:
		s.api.Close()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.api.Close()
	dctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.grace.Load()))
	defer cancel()
	err := s.http.Shutdown(dctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// pluginView is the HTTP API's late-bound view of the plugin manager,
// which is built after the API because it mounts plugins' routes on it.
// Until the plugins step binds it, no plugin is ready and none has a
// document.
type pluginView struct {
	m atomic.Pointer[plugin.Manager]
}

func (v *pluginView) bind(m *plugin.Manager) { v.m.Store(m) }

// NotReady is plugin.Manager.NotReady (api.Options.NotReady).
func (v *pluginView) NotReady() []string {
	if m := v.m.Load(); m != nil {
		return m.NotReady()
	}
	return []string{"plugins are not started"}
}

// Documents is plugin.Manager.Documents; the map is the caller's.
func (v *pluginView) Documents() map[string][]byte {
	if m := v.m.Load(); m != nil {
		return m.Documents()
	}
	return map[string][]byte{}
}

// Shutdown stops accepting, waits up to grace for requests in flight,
// closes watch streams, stops the plugins' controllers, then flushes and
// closes the store: the runnables of Start in reverse order. Later calls
// return the first call's result.
func (s *Server) Shutdown(grace time.Duration) error {
	s.shutdownOnce.Do(func() {
		s.serve.grace.Store(int64(grace))
		s.shutdownErr = s.parts.stop()
		s.log.Info("server stopped")
	})
	return s.shutdownErr
}

// failed is closed when a part of the server fails on its own, which
// stops the others; Run then returns.
func (s *Server) failed() <-chan struct{} { return s.parts.failed }

func pluginNames(m *plugin.Manager) []string {
	var out []string
	for _, p := range m.Plugins() {
		out = append(out, p.Name())
	}
	return out
}

func names(ms []*model.Model) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.GVK().String()
	}
	return out
}
