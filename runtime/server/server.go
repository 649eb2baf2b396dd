package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/swaggerui"
	_ "github.com/svcrun/svc/runtime/content" // the built-in content module (CONTRACT §6)
	"github.com/svcrun/svc/runtime/kinds"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/security"
	"github.com/svcrun/svc/runtime/server/accesslog"
	"github.com/svcrun/svc/runtime/server/logbuf"
	"github.com/svcrun/svc/runtime/store"
)

// Config is what a server binary bundles.
type Config struct {
	// Models are registered at start; their indexes are built while the
	// server already answers (/readyz says 503 until they are ready).
	Models []*model.Model
	// Routes mount a model's CRUD API in place of the default routes;
	// generated packages provide them (Register<Kind>Routes).
	Routes map[*model.Model]api.ModelRoutes
	// Out receives the first administrator's generated password (once, on
	// an empty store); nil means the process's stdout.
	Out io.Writer
	// Plugins are started and stopped through their Plugin objects; nil
	// means every plugin registered with plugin.Register (the plugins a
	// custom binary blank-imports).
	Plugins []plugin.Plugin
	// accessLog writes the line of each request in place of the logger;
	// Run sets it to a runtime/server/accesslog on its log buffer.
	accessLog api.AccessLog
}

// Main runs the server with the process's arguments and exits.
func Main(cfg Config) {
	// The store keeps every object in memory and allocates on every write;
	// collecting less often buys write throughput for heap. GOGC still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	run := func() error { return Run(ctx, os.Args[1:], os.Stdout, os.Stderr, cfg) }
	if len(os.Args) > 1 && os.Args[1] == "admin" {
		run = func() error { return Admin(ctx, os.Args[2:], os.Stdout, os.Stderr) }
	}
	if err := run(); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0) // usage was asked for and printed, as the flag package does
		}
		fmt.Fprintln(os.Stderr, "svc:", err)
		os.Exit(1)
	}
}

// Run serves until ctx ends, then shuts down: stop accepting, finish
// requests in flight, close watches, close the store.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, cfg Config) error {
	f, err := ParseFlags(args, stderr)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	// Access lines are batched (at most 100 ms late); warnings and errors
	// go out at once.
	logw := logbuf.New(stderr, 100*time.Millisecond)
	defer logw.Close()
	log := slog.New(logbuf.Handler(slog.NewJSONHandler(logw, &slog.HandlerOptions{Level: level}), logw, slog.LevelWarn))
	if f.CPUProfile != "" {
		out, err := os.Create(f.CPUProfile)
		if err != nil {
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			out.Close()
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := out.Close(); err != nil {
				log.Error("writing the CPU profile", "err", err)
			}
		}()
	}
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if cfg.Out == nil {
		cfg.Out = stdout
	}
	if log.Enabled(ctx, slog.LevelInfo) {
		cfg.accessLog = accesslog.New(logw)
	}
	srv, err := Start(ctx, f, cfg, log, ln)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(stdout, "svc listening on http://%s\n", ln.Addr())
	<-ctx.Done()
	return srv.Shutdown(10 * time.Second)
}

// Server is a running server.
type Server struct {
	HTTP     *http.Server
	API      *api.Server
	Store    *store.Store
	Registry *model.Registry
	Plugins  *plugin.Manager
	log      *slog.Logger
	done     chan error

	shutdownOnce sync.Once
	shutdownErr  error
	stopPlugins  context.CancelFunc
	pluginsDone  chan struct{}
}

// Start opens the store, serves on ln and registers cfg's models in the
// background.
func Start(ctx context.Context, f Flags, cfg Config, log *slog.Logger, ln net.Listener) (_ *Server, err error) {
	if f.BrandDomain == "" {
		f.BrandDomain = DefaultBrand
	}
	f.connDefaults()
	dir := f.DataDir
	if f.Memory {
		dir = ""
	}
	st, err := store.Open(store.Options{Dir: dir, Logger: log})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			st.Close() // a failed start leaves the data directory unlocked
		}
	}()
	if cfg.Out == nil {
		cfg.Out = os.Stdout
	}
	sec, err := security.Setup(ctx, st, security.Options{Brand: f.BrandDomain, AdminPassword: os.Getenv("SVC_ADMIN_PASSWORD"), Out: cfg.Out, Logger: log})
	if err != nil {
		return nil, err
	}
	shared, err := kinds.Models(f.BrandDomain)
	if err != nil {
		return nil, err
	}
	reg := model.NewRegistry()
	for _, m := range sec.Models {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	// The kinds plugins' extension files ship are served before any
	// plugin starts, so that its files find them.
	for _, m := range shared {
		if err := st.Register(ctx, m); err != nil {
			return nil, fmt.Errorf("register %s: %w", m.GVK(), err)
		}
		if err := reg.Register(m); err != nil {
			return nil, err
		}
	}
	var plugins *plugin.Manager
	console := sec.Console.OpenAPI()
	a := api.New(api.Options{Store: st, Registry: reg, Logger: log, AccessLog: cfg.accessLog, Guard: sec.Guard.Check,
		OpenAPI: openAPIDoc(reg, func() map[string][]byte {
			docs := plugins.Documents()
			docs[consoleDoc] = console // fixed for the server's life
			return docs
		}, f.BrandDomain, log), SwaggerUI: swaggerui.Handler("/swagger-ui/"),
		NotReady: func() []string { return plugins.NotReady() }})
	sec.Console.Fail = a.Fail
	for m, f := range sec.Routes {
		a.UseRoutes(m, f)
	}
	if err := a.Mount("console", sec.Console.Routes); err != nil {
		return nil, err
	}
	plugins = plugin.NewManager(plugin.Options{Store: st, Registry: reg, API: a, PluginModel: sec.PluginModel,
		Brand: f.BrandDomain, Logger: log, Plugins: cfg.Plugins,
		Auth: plugin.Auth{
			Caller: func(c *gin.Context) (string, bool) {
				id := security.IdentityOf(c)
				return id.User, id.Authenticated
			},
			Allowed: sec.Guard.Allows,
		},
		Settle: sec.Settle})
	s := &Server{
		HTTP: &http.Server{Handler: upgrades(a), ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			ReadHeaderTimeout: off(f.ReadHeaderTimeout), ReadTimeout: off(f.ReadTimeout),
			WriteTimeout: off(f.WriteTimeout), IdleTimeout: off(f.IdleTimeout)},
		API:      a,
		Store:    st,
		Registry: reg,
		Plugins:  plugins,
		log:      log,
		done:     make(chan error, 1),
	}
	for _, m := range cfg.Models {
		if err := reg.Register(m); err != nil {
			return nil, err
		}
		if err := st.Reserve(ctx, m); err != nil {
			return nil, err
		}
	}
	for m, f := range cfg.Routes {
		a.UseRoutes(m, f)
	}
	if err := a.Rebuild(); err != nil {
		return nil, err
	}
	pctx, stopPlugins := context.WithCancel(context.WithoutCancel(ctx))
	s.stopPlugins = stopPlugins
	s.pluginsDone = make(chan struct{})
	go func() {
		defer close(s.pluginsDone)
		if err := plugins.Run(pctx); err != nil {
			log.Error("plugin manager stopped", "err", err)
		}
	}()
	ln = limitListener(ln, f, log)
	go func() { s.done <- s.HTTP.Serve(ln) }()
	go func() {
		for _, m := range cfg.Models {
			start := time.Now()
			if err := st.Register(ctx, m); err != nil {
				log.Error("model registration failed", "model", m.GVK().String(), "err", err)
				continue
			}
			log.Info("model ready", "model", m.GVK().String(), "took", time.Since(start))
		}
	}()
	// The models served from the start (core, shared kinds, cfg's);
	// plugins' models follow as each plugin starts ("model ready").
	log.Info("server started", "addr", ln.Addr().String(), "dataDir", dir, "brandDomain", f.BrandDomain,
		"models", strings.Join(names(reg.Models()), ","), "plugins", strings.Join(pluginNames(plugins), ","))
	return s, nil
}

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

// Shutdown stops accepting, waits up to grace for requests in flight,
// closes watch streams, stops the plugins' controllers, then flushes and
// closes the store. Later calls return the first call's result.
func (s *Server) Shutdown(grace time.Duration) error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdown(grace) })
	return s.shutdownErr
}

func (s *Server) shutdown(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.API.Close()
	err := s.HTTP.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	// Plugins' controllers end before the store closes under them.
	s.stopPlugins()
	<-s.pluginsDone
	if cerr := s.Store.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	s.log.Info("server stopped")
	return err
}
