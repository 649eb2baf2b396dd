package metrics_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/metrics"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

func scrape(t testing.TB, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape = %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestRequestLabelsStayBounded: the route label is the pattern or
// "unmatched", the method one of the standard ones or OTHER, and a watch
// stream (101) is counted but not timed.
func TestRequestLabelsStayBounded(t *testing.T) {
	m := metrics.New()
	m.Request("/api/v1alpha1/roles/:name", "GET", 200, time.Millisecond)
	m.Request("", "GET", 404, time.Millisecond)
	m.Request("", "BREW", 405, time.Millisecond)
	m.Request("", "PROPFIND", 405, time.Millisecond)
	m.Request("/api/v1alpha1/roles", "GET", 101, time.Hour)
	body := scrape(t, m)
	for _, want := range []string{
		`svc_http_requests_total{code="200",method="GET",route="/api/v1alpha1/roles/:name"} 1`,
		`svc_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`svc_http_requests_total{code="405",method="OTHER",route="unmatched"} 2`,
		`svc_http_requests_total{code="101",method="GET",route="/api/v1alpha1/roles"} 1`,
		`svc_http_request_duration_seconds_count{method="GET",route="/api/v1alpha1/roles"} 0`,
		`svc_http_request_duration_seconds_count{method="GET",route="/api/v1alpha1/roles/:name"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s in\n%s", want, grep(body, "svc_http_"))
		}
	}
}

// TestWatchStreams: open streams go up and down; only streams the server
// ended are counted as dropped, by reason.
func TestWatchStreams(t *testing.T) {
	m := metrics.New()
	m.WatchOpened()
	m.WatchOpened()
	m.WatchOpened()
	m.WatchClosed("")
	m.WatchClosed(api.WatchDroppedSlow)
	body := scrape(t, m)
	for _, want := range []string{
		"svc_watch_streams_open 1",
		`svc_watch_streams_dropped_total{reason="slow"} 1`,
		`svc_watch_streams_dropped_total{reason="unresponsive"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s in\n%s", want, grep(body, "svc_watch_"))
		}
	}
}

// TestSeveralServersApart: each Metrics has its own registry.
func TestSeveralServersApart(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.Request("/x", "GET", 200, time.Millisecond)
	if body := scrape(t, b); strings.Contains(body, `route="/x"`) {
		t.Errorf("a request on one server shows on another:\n%s", grep(body, "svc_http_"))
	}
}

// TestStoreCollector: objects per model, batches and fsyncs of a durable
// store, read through the registry.
func TestStoreCollector(t *testing.T) {
	m := storetest.PersonModel()
	st := storetest.New(t, m)
	reg := metrics.New()
	if err := reg.Register(st.Collector()); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := st.Create(context.Background(), m, storetest.NewPerson(fmt.Sprintf("p-%d", i), storetest.PersonSpec{Name: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	body := scrape(t, reg)
	if want := fmt.Sprintf(`svc_store_objects{resource=%q} 5`, m.StorageKey()); !strings.Contains(body, want) {
		t.Errorf("missing %s in\n%s", want, grep(body, "svc_store_objects"))
	}
	positive(t, body, "after 5 durable creates", "svc_store_fsync_duration_seconds_count", "svc_store_batch_writes_sum", "svc_store_batch_bytes_sum", "svc_store_wal_bytes")
	// A removal is logged too, and its bytes count.
	before := sample(body, "svc_store_batch_bytes_sum")
	if _, err := st.Delete(context.Background(), m, "p-0"); err != nil {
		t.Fatal(err)
	}
	if after := sample(scrape(t, reg), "svc_store_batch_bytes_sum"); after <= before {
		t.Errorf("svc_store_batch_bytes_sum = %v after a removal, %v before", after, before)
	}
	if err := st.Snapshot(); err != nil {
		t.Fatal(err)
	}
	positive(t, scrape(t, reg), "after a snapshot", "svc_store_snapshot_duration_seconds_count", "svc_store_snapshot_bytes")
}

// positive checks that each named sample of body is above 0.
func positive(t *testing.T, body, when string, names ...string) {
	t.Helper()
	for _, name := range names {
		if v := sample(body, name); v <= 0 {
			t.Errorf("%s = %v %s, want > 0", name, v, when)
		}
	}
}

// sample returns the value of the unlabelled sample name in body, -1
// when there is none.
func sample(body, name string) float64 {
	v := -1.0
	for l := range strings.Lines(body) {
		if s, ok := strings.CutPrefix(l, name+" "); ok {
			fmt.Sscan(s, &v)
		}
	}
	return v
}

func grep(body, prefix string) string {
	var out []string
	for l := range strings.Lines(body) {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestRequestAllocs: once a series exists, observing a request allocates
// nothing.
func TestRequestAllocs(t *testing.T) {
	m := metrics.New()
	m.Request("/apis/people.example.com/v1alpha1/persons/:name", "GET", 200, time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() {
		m.Request("/apis/people.example.com/v1alpha1/persons/:name", "GET", 200, time.Millisecond)
	}); n != 0 {
		t.Errorf("Request allocates %v times", n)
	}
}

// BenchmarkRequest is the per-request cost of the HTTP metrics.
func BenchmarkRequest(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request("/apis/people.example.com/v1alpha1/persons/:name", "GET", 200, 40*time.Microsecond)
		}
	})
}

// BenchmarkGetHTTP is a get through the whole HTTP layer in process,
// without and with the metrics observer.
func BenchmarkGetHTTP(b *testing.B) {
	m := storetest.PersonModel()
	st := storetest.Open(b, store.Options{}, m)
	if _, err := st.Create(context.Background(), m, storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann"})); err != nil {
		b.Fatal(err)
	}
	reg := model.NewRegistry()
	reg.Register(m)
	path := api.BasePath(m) + "/ann"
	for _, observed := range []bool{false, true} {
		opts := api.Options{Store: st, Registry: reg}
		if observed {
			opts.Observer = metrics.New()
		}
		a := api.New(opts)
		b.Run(fmt.Sprintf("metrics=%v", observed), func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec := httptest.NewRecorder()
					a.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
					if rec.Code != 200 {
						b.Fatal(rec.Code)
					}
				}
			})
			// CPU per get: steadier than ns/op on a machine shared with
			// other work.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
