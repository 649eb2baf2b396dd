// Package metrics is the server's /metrics endpoint in the Prometheus
// text format (docs/operations.md, "Metrics"): HTTP requests, the store,
// watch streams, sign-ins, plugin phases, and the Go runtime and process.
//
// Each Metrics owns its registry, never Prometheus' global one, so that
// several servers in one process (tests) keep their counts apart. The
// request path pays one map read, a counter add and a
// histogram observation (Request); everything else is counted where it
// happens with atomic adds, or read when scraped.
package metrics

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/svcrun/svc/runtime/api"
)

// Path is where the metrics are served; access needs a rule granting get
// on this non-resource URL (the built-in role metrics-reader).
const Path = "/metrics"

// Unmatched is the route label of requests no route matched.
const Unmatched = "unmatched"

// requestBuckets reach from a cached get (tens of µs) to a slow list.
var requestBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics holds a server's registry and the metrics the HTTP layer
// reports (it is the api.Observer).
type Metrics struct {
	reg *prometheus.Registry

	requests  *prometheus.CounterVec
	durations *prometheus.HistogramVec
	// series caches the children of requests and durations per route,
	// method and status (a vector's WithLabelValues hashes its labels and
	// allocates on every call). The map is copied on write under mu:
	// series are few and made once, and readers on every core then share
	// no lock's cache line.
	mu     sync.Mutex
	series atomic.Pointer[map[seriesKey]*series]

	watchOpen    prometheus.Gauge
	watchDropped *prometheus.CounterVec
}

type seriesKey struct {
	route, method string
	status        int
}

type series struct {
	count prometheus.Counter
	took  prometheus.Observer
}

// New returns Metrics with the Go runtime and process collectors
// registered; Register adds the store's, sign-ins' and plugins'.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "svc_http_request_duration_seconds",
			Help:    "Time from a request's arrival at the API to its answer, by route pattern and method; watch streams are counted, not timed.",
			Buckets: requestBuckets,
		}, []string{"route", "method"}),
		watchOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "svc_watch_streams_open",
			Help: "Watch streams (WebSockets) open now.",
		}),
		watchDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_watch_streams_dropped_total",
			Help: "Watch streams the server ended because the client fell behind (slow) or stopped answering (unresponsive).",
		}, []string{"reason"}),
	}
	m.series.Store(&map[seriesKey]*series{})
	// Both reasons exist from the start, so a rate over them is never
	// missing a series.
	m.watchDropped.WithLabelValues(api.WatchDroppedSlow)
	m.watchDropped.WithLabelValues(api.WatchDroppedUnresponsive)
	m.reg.MustRegister(m.requests, m.durations, m.watchOpen, m.watchDropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds collectors (Store.Collector, Authn, Plugins) to the
// registry.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Routes serves GET /metrics; access control decides who may ask
// before routing, as for every route.
func (m *Metrics) Routes(r gin.IRouter) {
	r.GET(Path, gin.WrapH(m.Handler()))
}

// Request implements api.Observer.
func (m *Metrics) Request(route, method string, status int, took time.Duration) {
	k := seriesKey{route, methodLabel(method), status}
	s := (*m.series.Load())[k]
	if s == nil {
		s = m.newSeries(k)
	}
	s.count.Inc()
	if status != http.StatusSwitchingProtocols { // a watch stream's life is no latency
		s.took.Observe(took.Seconds())
	}
}

func (m *Metrics) newSeries(k seriesKey) *series {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if s := old[k]; s != nil {
		return s
	}
	route := k.route
	if route == "" {
		route = Unmatched
	}
	s := &series{
		count: m.requests.WithLabelValues(route, k.method, strconv.Itoa(k.status)),
		took:  m.durations.WithLabelValues(route, k.method),
	}
	next := make(map[seriesKey]*series, len(old)+1)
	maps.Copy(next, old)
	next[k] = s
	m.series.Store(&next)
	return s
}

// methodLabel keeps the method label to the standard methods: any other
// is "OTHER", so clients cannot mint series.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// WatchOpened implements api.Observer.
func (m *Metrics) WatchOpened() { m.watchOpen.Inc() }

// WatchClosed implements api.Observer.
func (m *Metrics) WatchClosed(dropped string) {
	m.watchOpen.Dec()
	if dropped != "" {
		m.watchDropped.WithLabelValues(dropped).Inc()
	}
}

var _ api.Observer = (*Metrics)(nil)
