package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/openapi"
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

// DefaultBrand is the brand domain when none is configured (CONTRACT §1).
const DefaultBrand = model.DefaultBrand

// Flags are the command-line settings (CONTRACT §8).
type Flags struct {
	Addr        string
	DataDir     string
	BrandDomain string
	LogLevel    string
	// Memory keeps everything in memory (nothing persisted); for demos.
	Memory bool
	// CPUProfile names a file to write a CPU profile to, from start to
	// shutdown (diagnostics; empty for none).
	CPUProfile string
	// Connection timeouts and limits; zero takes the Default..., a
	// negative value turns one off.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxConns          int
	MaxConnsPerClient int
}

// ParseFlags reads args; the environment variable SVC_BRAND_DOMAIN is the
// default of --brand-domain.
func ParseFlags(args []string, stderr io.Writer) (Flags, error) {
	var f Flags
	fs := flag.NewFlagSet("svc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	brand := os.Getenv("SVC_BRAND_DOMAIN")
	if brand == "" {
		brand = DefaultBrand
	}
	fs.StringVar(&f.Addr, "addr", "127.0.0.1:8090", "address to listen on")
	fs.StringVar(&f.DataDir, "data-dir", "./data", "data directory (write-ahead log, snapshots)")
	fs.StringVar(&f.BrandDomain, "brand-domain", brand, "brand domain of labels, annotations and reserved groups (env SVC_BRAND_DOMAIN)")
	fs.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&f.Memory, "memory", false, "keep data in memory only (nothing is persisted)")
	fs.StringVar(&f.CPUProfile, "cpu-profile", "", "write a CPU profile (go tool pprof) to this file until shutdown")
	fs.DurationVar(&f.ReadHeaderTimeout, "read-header-timeout", DefaultReadHeaderTimeout, "time allowed to read a request's headers (negative: none)")
	fs.DurationVar(&f.ReadTimeout, "read-timeout", DefaultReadTimeout, "time allowed to read a whole request, headers and body (negative: none)")
	fs.DurationVar(&f.WriteTimeout, "write-timeout", DefaultWriteTimeout, "time allowed to handle a request and write the answer, from the end of its headers; watches are exempt (negative: none)")
	fs.DurationVar(&f.IdleTimeout, "idle-timeout", DefaultIdleTimeout, "time a kept-alive connection may wait for its next request (negative: none)")
	fs.IntVar(&f.MaxConns, "max-conns", DefaultMaxConns, "open connections at most, watches included; more wait to be accepted (negative: no limit)")
	fs.IntVar(&f.MaxConnsPerClient, "max-conns-per-client", DefaultMaxConnsPerClient, "open connections at most from one client address (IPv6: one /64); more are answered 429 (negative: no limit)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return f, nil
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
	st, err := store.Load(store.Options{Dir: dir, Logger: log})
	if err != nil {
		return nil, err
	}
	st.Start()
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

// consoleDoc keys the console API's document among the plugins'; no
// plugin name can take it.
const consoleDoc = "(console)"

// openAPIDoc serves the document of the registered models, the console
// API and the custom APIs of the started plugins (docs, by plugin name),
// rebuilt only when either set changes.
func openAPIDoc(reg *model.Registry, docs func() map[string][]byte, brand string, log *slog.Logger) func() ([]byte, error) {
	var (
		mu   sync.Mutex
		key  string
		body []byte
	)
	return func() ([]byte, error) {
		models := reg.Models()
		docs := docs()
		k := strings.Join(names(models), ",") + "|" + strings.Join(slices.Sorted(maps.Keys(docs)), ",")
		mu.Lock()
		defer mu.Unlock()
		if body != nil && k == key {
			return body, nil
		}
		base, err := openapi.Build(models, openapi.Options{Title: "svc API"})
		if err != nil {
			return nil, err
		}
		baseNames, err := openapi.ComponentNames(base)
		if err != nil {
			return nil, err
		}
		// Each plugin's paths are checked against the generic document and
		// the plugins merged before it by building the whole again. This
		// runs only when the set of models or plugins changes.
		doc := base
		var extra []*openapi3.T
		merge := func(d *openapi3.T) error {
			withExtra, err := openapi.Build(models, openapi.Options{Title: "svc API", Extra: append(slices.Clip(extra), d)})
			if err == nil {
				doc, extra = withExtra, append(extra, d)
			}
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(docs)) {
			renamed, err := mergePlugin(doc, base, baseNames, docs[name], brand, name, merge)
			for _, r := range renamed {
				log.Warn("OpenAPI operation id renamed", "plugin", name, "detail", r)
			}
			if err != nil {
				log.Warn("OpenAPI document left out", "plugin", name, "err", err)
			}
		}
		b, err := openapi.JSON(doc)
		if err != nil {
			return nil, err
		}
		key, body = k, b
		return body, nil
	}
}

// mergePlugin merges the custom paths of a plugin's document (raw) with
// merge. An operation id that the document merged so far (have) already
// has, case and punctuation aside, is renamed after the plugin, and the
// renames are returned for a warning. A plugin whose components clash
// with another's is merged again with them qualified by its name; one
// that still clashes is left out alone, with the error.
func mergePlugin(have, base *openapi3.T, baseNames map[string]map[string]bool, raw []byte, brand, plugin string, merge func(*openapi3.T) error) ([]string, error) {
	own, err := customPaths(base, raw, brand)
	if err != nil {
		return nil, err
	}
	renamed := renameOperations(own, have, plugin)
	if err = merge(withoutBase(base, own)); err == nil {
		return renamed, nil
	}
	q, qerr := qualified(own, baseNames, plugin)
	if qerr == nil {
		if qerr = merge(withoutBase(base, q)); qerr == nil {
			return renamed, nil
		}
	}
	return nil, errors.Join(err, qerr)
}

// renameOperations gives each operation of own whose id another
// operation of have has (as OperationIDKey compares) the plugin's name
// after the id's verb: getPersonGreeting of plugin "links-pro" becomes
// getLinksProPersonGreeting. Generated clients name methods after ids, so
// two alike would not compile. The same operation documented again (same
// method, path and id) is left to the merge, which takes it once if it is
// identical; so is a new id that is taken as well. It says what it
// renamed.
func renameOperations(own, have *openapi3.T, plugin string) []string {
	taken := openapi.OperationIDs(have)
	var notes []string
	for _, path := range slices.Sorted(maps.Keys(own.Paths.Map())) {
		item := own.Paths.Value(path)
		ops := item.Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			op := ops[method]
			prev, clash := taken[openapi.OperationIDKey(op.OperationID)]
			if op.OperationID == "" || !clash {
				continue
			}
			if h := have.Paths.Value(path); h != nil && h.GetOperation(method) != nil && h.GetOperation(method).OperationID == op.OperationID {
				continue
			}
			id := qualifyID(op.OperationID, plugin)
			if _, ok := taken[openapi.OperationIDKey(id)]; ok {
				continue
			}
			notes = append(notes, fmt.Sprintf("operation id %q of %s %s is taken by %s; served as %q", op.OperationID, method, path, prev, id))
			o := *op
			o.OperationID = id
			item.SetOperation(method, &o)
			taken[openapi.OperationIDKey(id)] = fmt.Sprintf("%s %s (%q)", method, path, id)
		}
	}
	return notes
}

// qualifyID puts the plugin's name after the leading lowercase verb of
// id, or before an id without one, lowerCamel still.
func qualifyID(id, plugin string) string {
	i := strings.IndexFunc(id, func(r rune) bool { return r < 'a' || r > 'z' })
	if i < 0 {
		i = len(id)
	}
	name := openapi.Pascal(plugin)
	if i == 0 && name != "" {
		name = strings.ToLower(name[:1]) + name[1:]
	}
	return id[:i] + name + id[i:]
}

// customPaths is the part of a plugin's document that the generic
// document lacks: its custom API paths and the components they reach. A
// version-only route, documented under plugin.api.<brand>, is served under
// api.plugin.<brand> too (CONTRACT §7), and documented there as well.
func customPaths(base *openapi3.T, raw []byte, brand string) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	out := &openapi3.T{OpenAPI: doc.OpenAPI, Info: doc.Info, Paths: openapi3.NewPaths(), Components: doc.Components}
	legacy, current := "/apis/plugin.api."+brand+"/", "/apis/api.plugin."+brand+"/"
	for path, item := range doc.Paths.Map() {
		if base.Paths.Value(path) == nil {
			out.Paths.Set(path, item)
		}
		if rest, ok := strings.CutPrefix(path, legacy); ok && doc.Paths.Value(current+rest) == nil && base.Paths.Value(current+rest) == nil {
			out.Paths.Set(current+rest, withoutIDs(item))
		}
	}
	if out.Components == nil {
		return out, nil
	}
	return openapi.Prune(out)
}

// qualified renames the plugin's own components after it (Link of plugin
// "links-pro" becomes LinksProLink), so that they cannot clash with
// another plugin's. Its placeholders for the generic document's
// components keep their names. A qualified name the generic document has
// already (plugin "person", component "List" and the generic PersonList)
// is an error: the plugin's references would silently point at it.
func qualified(own *openapi3.T, baseNames map[string]map[string]bool, plugin string) (*openapi3.T, error) {
	prefix := openapi.Pascal(plugin)
	names, err := openapi.ComponentNames(own)
	if err != nil {
		return nil, err
	}
	var taken []string
	for section, ns := range names {
		for name := range ns {
			if !baseNames[section][name] && baseNames[section][prefix+name] {
				taken = append(taken, section+"/"+prefix+name)
			}
		}
	}
	if len(taken) > 0 {
		slices.Sort(taken)
		return nil, fmt.Errorf("qualified component names %s are the generic document's", strings.Join(taken, ", "))
	}
	return openapi.Rename(own, func(section, name string) string {
		if baseNames[section][name] {
			return name
		}
		return prefix + name
	})
}

// withoutBase copies d without the components the generic document
// defines: the plugin document's placeholders give way to them.
func withoutBase(base, d *openapi3.T) *openapi3.T {
	if d.Components == nil {
		return d
	}
	out := *d
	bc, c := base.Components, d.Components
	out.Components = &openapi3.Components{
		Schemas:         missing(bc.Schemas, c.Schemas),
		Parameters:      missing(bc.Parameters, c.Parameters),
		Headers:         missing(bc.Headers, c.Headers),
		RequestBodies:   missing(bc.RequestBodies, c.RequestBodies),
		Responses:       missing(bc.Responses, c.Responses),
		SecuritySchemes: missing(bc.SecuritySchemes, c.SecuritySchemes),
		Examples:        missing(bc.Examples, c.Examples),
		Links:           missing(bc.Links, c.Links),
		Callbacks:       missing(bc.Callbacks, c.Callbacks),
	}
	return &out
}

// withoutIDs copies item without operation ids, which must be unique in
// a document: for a second path to the same operations.
func withoutIDs(item *openapi3.PathItem) *openapi3.PathItem {
	c := *item
	for method, op := range item.Operations() {
		o := *op
		o.OperationID = ""
		c.SetOperation(method, &o)
	}
	return &c
}

// missing returns the entries of have that base lacks: a document's
// placeholders for the base's own definitions give way to them.
func missing[M ~map[string]V, V any](base, have M) M {
	out := M{}
	for name, v := range have {
		if _, ok := base[name]; !ok {
			out[name] = v
		}
	}
	return out
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
