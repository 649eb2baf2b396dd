package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
)

// DefaultMaxBodyBytes is the request body limit (docs/api.md).
const DefaultMaxBodyBytes = 3 << 20

// Options configure a Server.
type Options struct {
	Store    *store.Store
	Registry *model.Registry
	Logger   *slog.Logger
	// AccessLog writes the one line per request; default AccessRecord
	// through Logger. runtime/server/accesslog writes the same line for a
	// fifth of the cost.
	AccessLog AccessLog
	// MaxBodyBytes limits request bodies; larger ones get 413.
	MaxBodyBytes int64
	// OpenAPI returns the document served at /openapi.json; nil serves 404.
	OpenAPI func() ([]byte, error)
	// SwaggerUI serves /swagger-ui/; nil serves 404.
	SwaggerUI http.Handler
	// Console serves the web console at /console/ (runtime/console/web);
	// nil serves 404.
	Console http.Handler
	// Guard admits or refuses every request before routing (access
	// control); an error is written as the problem response. Nil admits
	// everything.
	Guard func(c *gin.Context) error
	// Settle, when set, runs after a request's minimum revision is
	// reached (X-Svc-Min-Revision), before its access is decided: it waits
	// until access control has applied the roles and bindings stored by
	// then.
	Settle func(ctx context.Context) error
	// NotReady names what keeps the server from being ready besides index
	// builds (plugins not started yet); /readyz answers 503 while it
	// returns anything. Nil adds nothing.
	NotReady func() []string
	// WatchWriteTimeout is how long one watch event may take to reach a
	// client's socket before the client is taken as gone and disconnected.
	// Default 10 s. A ping not answered within it ends the stream too.
	WatchWriteTimeout time.Duration
	// WatchPingInterval is how often an open watch is pinged, which keeps
	// idle connections alive through proxies and finds dead clients.
	// Default 30 s.
	WatchPingInterval time.Duration
	// Observer, if set, is told of every request and watch stream
	// (runtime/metrics).
	Observer Observer
}

// Observer is told of every request once it is answered, and of watch
// streams opening and closing. It is called on the request's goroutine:
// it must be cheap and safe for concurrent use.
type Observer interface {
	// Request reports an answered request. route is the matched route
	// pattern (gin's FullPath), "" when no route matched: never the raw
	// path, so that its values stay few.
	Request(route, method string, status int, took time.Duration)
	// WatchOpened reports a watch stream that started streaming.
	WatchOpened()
	// WatchClosed reports its end; dropped says why the server ended it
	// (WatchDroppedSlow, WatchDroppedUnresponsive), "" for any other end.
	WatchClosed(dropped string)
}

// Why the server ended a watch stream (Observer.WatchClosed).
const (
	// WatchDroppedSlow: the watcher fell more than the store's watch
	// buffer behind.
	WatchDroppedSlow = "slow"
	// WatchDroppedUnresponsive: a send or a ping did not complete within
	// WatchWriteTimeout, or failed.
	WatchDroppedUnresponsive = "unresponsive"
)

// AccessLog writes the access line of one request.
type AccessLog interface {
	Request(method, path, requestID string, status, bytes int, took time.Duration)
}

// AccessRecord is the access line of one request as a log record: what
// the default AccessLog logs, and what runtime/server/accesslog writes
// without log/slog. Typed attributes: one line per request, so no boxing.
func AccessRecord(t time.Time, method, path, requestID string, status, bytes int, took time.Duration) slog.Record {
	r := slog.NewRecord(t, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", method), slog.String("path", path),
		slog.Int("status", status), slog.Int("bytes", bytes),
		slog.Float64("durationMs", float64(took.Microseconds())/1000), slog.String("requestId", requestID))
	return r
}

// slogAccess is the default AccessLog: AccessRecord through a logger.
type slogAccess struct{ log *slog.Logger }

func (l slogAccess) Request(method, path, requestID string, status, bytes int, took time.Duration) {
	ctx := context.Background()
	if l.log.Enabled(ctx, slog.LevelInfo) {
		_ = l.log.Handler().Handle(ctx, AccessRecord(time.Now(), method, path, requestID, status, bytes, took))
	}
}

// Routes adds a set of routes (a plugin's custom API, the console API) to
// a router. It is called again on every rebuild, so it must only register.
type Routes func(r gin.IRouter)

// Server is the HTTP layer. Gin's route tree cannot change while it serves,
// so every change of the served models or route sets builds a fresh engine
// and publishes it atomically; requests in flight finish on the old one.
type Server struct {
	opts    Options
	log     *slog.Logger
	engine  atomic.Pointer[gin.Engine]
	bootID  string
	reqSeq  atomic.Uint64
	closing chan struct{}
	once    sync.Once

	// listBufs recycles list response buffers: a page is several KB (6.5
	// for the load tool's twenty persons), and allocating one per list was
	// most of what the collector had to clear while serving lists.
	listBufs sync.Pool

	// patching serialises the patches of one object (patchLock), so that
	// patches without a version apply one after another instead of
	// failing each other's version checks.
	patching  [patchStripes]sync.Mutex
	patchSeed maphash.Seed

	mu          sync.Mutex // serialises rebuilds and guards routes and modelRoutes
	routes      map[string]Routes
	modelRoutes map[*model.Model]ModelRoutes
}

func init() { gin.SetMode(gin.ReleaseMode) }

// New returns a Server serving the registry's models; call Rebuild after
// registering or unregistering models or route sets.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.AccessLog == nil {
		opts.AccessLog = slogAccess{opts.Logger}
	}
	if opts.WatchWriteTimeout <= 0 {
		opts.WatchWriteTimeout = defaultWriteTimeout
	}
	if opts.WatchPingInterval <= 0 {
		opts.WatchPingInterval = defaultPingInterval
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	var b [4]byte
	rand.Read(b[:])
	s := &Server{opts: opts, log: opts.Logger, bootID: hex.EncodeToString(b[:]), closing: make(chan struct{}), routes: map[string]Routes{}, modelRoutes: map[*model.Model]ModelRoutes{}}
	s.listBufs.New = func() any { return new(bytes.Buffer) }
	s.patchSeed = maphash.MakeSeed()
	s.Rebuild()
	return s
}

// ServeHTTP serves with the current engine.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.Load().ServeHTTP(w, r) }

// Mount adds (or replaces) the route set named key and rebuilds. A route
// set that clashes with the routes already served (Gin refuses a path
// whose wildcard differs from a served one) is an error: it is removed
// again and the served routes stay as they were.
func (s *Server) Mount(key string, routes Routes) error {
	s.mu.Lock()
	old, had := s.routes[key]
	s.routes[key] = routes
	s.mu.Unlock()
	if err := s.Rebuild(); err != nil {
		s.mu.Lock()
		if had {
			s.routes[key] = old
		} else {
			delete(s.routes, key)
		}
		s.mu.Unlock()
		return fmt.Errorf("mount %s: %w", key, err)
	}
	return nil
}

// UseRoutes makes f mount m's CRUD routes instead of DefaultRoutes (the
// generated route functions do), from the next Rebuild on; nil restores
// the default.
func (s *Server) UseRoutes(m *model.Model, f ModelRoutes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		delete(s.modelRoutes, m)
		return
	}
	s.modelRoutes[m] = f
}

// Unmount removes the route set named key and rebuilds.
func (s *Server) Unmount(key string) {
	s.mu.Lock()
	delete(s.routes, key)
	s.mu.Unlock()
	s.Rebuild()
}

// Close ends every open watch stream (shutdown); they cannot be drained.
func (s *Server) Close() { s.once.Do(func() { close(s.closing) }) }

// Rebuild builds an engine for the current models and route sets and
// swaps it in. When the routes clash (Gin panics on conflicting
// wildcards), the engine in service stays and the clash is returned.
func (s *Server) Rebuild() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.build()
	if err != nil {
		return err
	}
	s.engine.Store(e)
	return nil
}

func (s *Server) build() (e *gin.Engine, err error) {
	defer func() {
		if v := recover(); v != nil {
			e, err = nil, fmt.Errorf("routes clash: %v", v)
		}
	}()
	e = gin.New()
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.ContextWithFallback = true
	e.Use(s.middleware)
	e.NoRoute(func(c *gin.Context) {
		s.fail(c, problem.New(http.StatusNotFound, "no route for %s %s", c.Request.Method, c.Request.URL.Path))
	})
	e.NoMethod(func(c *gin.Context) {
		s.fail(c, problem.New(http.StatusMethodNotAllowed, "method %s is not allowed on %s", c.Request.Method, c.Request.URL.Path))
	})
	e.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	e.GET("/readyz", s.readyz)
	e.GET("/openapi.json", s.openapi)
	if s.opts.SwaggerUI != nil {
		e.GET("/swagger-ui", func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, "/swagger-ui/") })
		e.GET("/swagger-ui/*asset", gin.WrapH(s.opts.SwaggerUI))
	}
	if s.opts.Console != nil {
		e.GET("/console/*asset", gin.WrapH(s.opts.Console))
	}
	for _, m := range s.opts.Registry.Models() {
		h := (&modelAPI{s: s, m: m}).handlers()
		if f, ok := s.modelRoutes[m]; ok {
			f(e, h)
		} else {
			DefaultRoutes(BasePath(m))(e, h)
		}
	}
	keys := make([]string, 0, len(s.routes))
	for k := range s.routes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.routes[k](e)
	}
	return e, nil
}

// BasePath is where a model's collection is served: /apis/<group>/<version>/<plural>,
// or /api/<version>/<plural> for the empty group.
func BasePath(m *model.Model) string {
	if m.Group == "" {
		return "/api/" + m.Version + "/" + m.Plural
	}
	return "/apis/" + m.Group + "/" + m.Version + "/" + m.Plural
}

// building lists the models whose indexes are being built.
func (s *Server) building() []string {
	var out []string
	for _, m := range s.opts.Registry.Models() {
		if !s.opts.Store.Ready(m) {
			out = append(out, m.GVK().String())
		}
	}
	return out
}

// Started reports whether every model's indexes are built and nothing
// Options.NotReady names is pending: what /readyz waits for besides the
// store's health.
func (s *Server) Started() bool {
	return len(s.building()) == 0 && (s.opts.NotReady == nil || len(s.opts.NotReady()) == 0)
}

func (s *Server) readyz(c *gin.Context) {
	building := s.building()
	if err := s.opts.Store.Health(); err != nil {
		// Writes are refused (a full disk): send traffic elsewhere.
		c.Header("Retry-After", "1")
		s.fail(c, problem.New(http.StatusServiceUnavailable, "not ready: %v", err))
		return
	}
	if err := s.opts.Store.Degraded(); err != nil {
		// A replica of a shared store that cannot reach etcd: every
		// replica is in the same state, so it keeps serving reads and
		// says that writes fail.
		c.JSON(http.StatusOK, gin.H{"status": "degraded", "writes": "unavailable: " + err.Error(), "revision": s.opts.Store.Revision()})
		return
	}
	if len(building) > 0 {
		c.Header("Retry-After", "1")
		s.fail(c, problem.New(http.StatusServiceUnavailable, "not ready: indexes are being built for %v", building))
		return
	}
	if s.opts.NotReady != nil {
		if waiting := s.opts.NotReady(); len(waiting) > 0 {
			c.Header("Retry-After", "1")
			s.fail(c, problem.New(http.StatusServiceUnavailable, "not ready: %s", strings.Join(waiting, "; ")))
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (s *Server) openapi(c *gin.Context) {
	if s.opts.OpenAPI == nil {
		s.fail(c, problem.New(http.StatusNotFound, "no OpenAPI document is configured"))
		return
	}
	doc, err := s.opts.OpenAPI()
	if err != nil {
		s.fail(c, fmt.Errorf("build openapi document: %w", err))
		return
	}
	c.Data(http.StatusOK, "application/json", doc)
}

// RequestID returns the id the server gave the request.
func RequestID(c *gin.Context) string {
	id, _ := c.Get(requestIDKeyName)
	s, _ := id.(string)
	return s
}

const requestIDKeyName = "svc.requestId"

// middleware gives each request an id, limits its body, parses its path
// and query once (rbac.ParseRequest), turns a panic into a 500 problem,
// and writes one access-log line.
func (s *Server) middleware(c *gin.Context) {
	start := time.Now()
	id := s.bootID + "-" + strconv.FormatUint(s.reqSeq.Add(1), 36)
	c.Set(requestIDKeyName, id)
	c.Header("X-Request-Id", id)
	if s.opts.Store != nil {
		rw := &revisionWriter{ResponseWriter: c.Writer, st: s.opts.Store}
		if m := c.Request.Method; m == http.MethodGet || m == http.MethodHead {
			rw.at = s.opts.Store.Revision()
		}
		c.Writer = rw
	}
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes)
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic in handler", "requestId", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !c.Writer.Written() {
				s.fail(c, fmt.Errorf("panic: %v", v))
			}
			c.Abort()
		}
		took, status := time.Since(start), c.Writer.Status()
		s.opts.AccessLog.Request(c.Request.Method, c.Request.URL.Path, id, status, max(c.Writer.Size(), 0), took)
		if s.opts.Observer != nil {
			s.opts.Observer.Request(c.FullPath(), c.Request.Method, status, took)
		}
	}()
	// The one parse of the request's path and query, before access
	// control: a query that does not parse whole is refused here, and
	// the guard and the handlers read this parse (Query), never their own.
	info, err := rbac.ParseRequest(c.Request)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Request = c.Request.WithContext(rbac.WithRequestInfo(c.Request.Context(), &info))
	// The slashless Swagger UI path only points at the public one: the
	// redirect reveals nothing, so it needs no access decision (a guard
	// would answer anonymous callers 401 for a path everyone may read).
	if s.opts.SwaggerUI != nil && c.Request.URL.Path == "/swagger-ui" && (c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead) {
		c.Redirect(http.StatusMovedPermanently, "/swagger-ui/")
		c.Abort()
		return
	}
	if s.opts.Console != nil && c.Request.URL.Path == "/console" && (c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead) {
		c.Redirect(http.StatusMovedPermanently, "/console/")
		c.Abort()
		return
	}
	// A request for at least a revision waits before access is decided:
	// a grant written at that revision (on another replica) applies to it.
	if s.opts.Store != nil {
		if err := s.awaitRevision(c); err != nil {
			s.fail(c, err)
			return
		}
		// A read starts now, after any wait: its stamp is at least the
		// revision it asked for.
		if rw, ok := c.Writer.(*revisionWriter); ok && rw.at != 0 {
			rw.at = s.opts.Store.Revision()
		}
	}
	if s.opts.Guard != nil {
		if err := s.opts.Guard(c); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.Next()
}

// fail writes err as a problem body and aborts the chain.
func (s *Server) fail(c *gin.Context, err error) { fail(s.log, c, err) }

// Failer returns what Server.Fail does for a server logging to log, for
// route sets built before their Server (the console API, built with
// access control, which the Server is built on).
func Failer(log *slog.Logger) func(c *gin.Context, err error) {
	return func(c *gin.Context, err error) { fail(log, c, err) }
}

func fail(log *slog.Logger, c *gin.Context, err error) {
	p := problem.From(err)
	if p.Status >= 500 && p.Status != http.StatusServiceUnavailable && p.Status != http.StatusInsufficientStorage {
		log.Error("request failed", "requestId", RequestID(c), "err", err)
	}
	problem.Write(c.Writer, c.Request, RequestID(c), p)
	c.Abort()
}

// handle adapts a handler that returns its failure: the error is written
// as a problem body, so handlers never pick statuses themselves.
func (s *Server) handle(h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.fail(c, err)
		}
	}
}

// Query returns the request's query parameters as the server parsed them,
// once and whole, before access control (rbac.RequestInfo.Query). Every
// handler reads its query here, never with URL.Query, which drops what
// it cannot decode without an error.
func Query(c *gin.Context) (url.Values, error) {
	if info, ok := rbac.RequestInfoFrom(c.Request.Context()); ok {
		return info.Query, nil
	}
	return query.ParseRaw(c.Request.URL.RawQuery) // not served by a Server
}

// Fail is fail for route sets outside this package.
func (s *Server) Fail(c *gin.Context, err error) { s.fail(c, err) }
