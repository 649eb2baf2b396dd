package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/server/servertest"
)

// client calls a test server with one kind of credentials.
type client struct {
	t    *testing.T
	url  string
	auth func(*http.Request)
}

func withBasic(user, pw string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pw) }
}

func bearerAuth(token string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

func (c client) do(method, path, body string) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != nil {
		c.auth(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return res.StatusCode, b
}

// scrape reads /metrics and parses it as the Prometheus text format.
func (c client) scrape() map[string]*dto.MetricFamily {
	c.t.Helper()
	st, body := c.do("GET", "/metrics", "")
	if st != 200 {
		c.t.Fatalf("GET /metrics = %d %s", st, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		c.t.Fatalf("/metrics is not the Prometheus text format: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the series of fams[name] whose labels
// include labels (counter, gauge, or a histogram's count); -1 if none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics: /metrics is closed to anonymous callers and to users
// without a role granting it, open to the administrator and to a token
// holding only metrics-reader, and its counts follow what the server did.
func TestMetrics(t *testing.T) {
	srv := servertest.Start(t, servertest.Options{Dir: t.TempDir(), AdminPassword: adminPassword})
	onEtcd := os.Getenv(servertest.EtcdEnv) != ""
	anon := client{t, srv.URL, nil}
	admin := client{t, srv.URL, withBasic("admin", adminPassword)}
	const console = "/apis/api.console.svc.run/v1alpha1"

	if st, body := anon.do("GET", "/metrics", ""); st != 401 || !strings.Contains(string(body), `"status":401`) {
		t.Errorf("anonymous GET /metrics = %d %s, want a 401 problem", st, body)
	}
	if st, body := admin.do("POST", console+"/users", `{"name":"carol","displayName":"Carol","password":"carol-secret"}`); st != 201 {
		t.Fatalf("create carol = %d %s", st, body)
	}
	carol := client{t, srv.URL, withBasic("carol", "carol-secret")}
	if st, body := carol.do("GET", "/metrics", ""); st != 403 || !strings.Contains(string(body), `"status":403`) {
		t.Errorf("carol (no roles) GET /metrics = %d %s, want a 403 problem", st, body)
	}
	// A scraper's user holds metrics-reader, and its token only that.
	if st, body := admin.do("POST", console+"/users", `{"name":"prometheus","displayName":"Prometheus","password":"prometheus-secret","roles":["metrics-reader"]}`); st != 201 {
		t.Fatalf("create user prometheus = %d %s", st, body)
	}
	st, body := (client{t, srv.URL, withBasic("prometheus", "prometheus-secret")}).do("POST", console+"/users/-/personalaccesstokens", `{"metadata":{"name":"scraper"},"spec":{"roles":["metrics-reader"]}}`)
	if st != 201 {
		t.Fatalf("create token = %d %s", st, body)
	}
	var tok struct {
		Metadata struct{ Annotations map[string]string } `json:"metadata"`
	}
	if err := json.Unmarshal(body, &tok); err != nil {
		t.Fatal(err)
	}
	scraper := client{t, srv.URL, bearerAuth(tok.Metadata.Annotations["security.svc.run/access-token"])}
	admin.scrape() // super-role reaches it too
	before := scraper.scrape()
	if st, _ := scraper.do("GET", "/api/v1alpha1/roles", ""); st != 403 {
		t.Errorf("metrics-reader token lists roles = %d, want 403: it grants /metrics only", st)
	}

	// Requests by route pattern, never the raw path.
	for range 3 {
		if st, _ := admin.do("GET", "/api/v1alpha1/roles/guest", ""); st != 200 {
			t.Fatalf("get role = %d", st)
		}
	}
	admin.do("GET", "/no/such/path/x1", "")
	// Objects stored, and durable writes.
	for i := range 4 {
		if st, body := admin.do("POST", "/api/v1alpha1/roles", fmt.Sprintf(`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"metrics-test-%d"},"rules":[]}`, i)); st != 201 {
			t.Fatalf("create role = %d %s", st, body)
		}
	}
	// Failed sign-ins.
	for range 2 {
		if st, _ := (client{t, srv.URL, withBasic("admin", "wrong")}).do("GET", "/api/v1alpha1/roles", ""); st != 401 {
			t.Fatalf("wrong password = %d, want 401", st)
		}
	}

	after := scraper.scrape()
	getRole := map[string]string{"route": "/api/v1alpha1/roles/:name", "method": "GET", "code": "200"}
	if d := value(after, "svc_http_requests_total", getRole) - max(value(before, "svc_http_requests_total", getRole), 0); d != 3 {
		t.Errorf("GET role requests grew by %v, want 3", d)
	}
	if v := value(after, "svc_http_request_duration_seconds", map[string]string{"route": "/api/v1alpha1/roles/:name", "method": "GET"}); v < 3 {
		t.Errorf("GET role latency observations = %v, want >= 3", v)
	}
	if v := value(after, "svc_http_requests_total", map[string]string{"route": "unmatched", "code": "404"}); v < 1 {
		t.Errorf("unmatched 404s = %v, want >= 1", v)
	}
	for _, m := range after["svc_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && strings.Contains(l.GetValue(), "x1") {
				t.Errorf("a raw path became a route label: %v", m)
			}
		}
	}
	roles := map[string]string{"resource": "roles"}
	if d := value(after, "svc_store_objects", roles) - value(before, "svc_store_objects", roles); d != 4 {
		t.Errorf("stored roles grew by %v, want 4 (before %v)", d, value(before, "svc_store_objects", roles))
	}
	if !onEtcd {
		if d := value(after, "svc_store_fsync_duration_seconds", nil) - value(before, "svc_store_fsync_duration_seconds", nil); d < 1 {
			t.Errorf("fsyncs grew by %v after 4 durable writes, want >= 1", d)
		}
		if v := value(after, "svc_store_batch_writes", nil); v < 1 {
			t.Errorf("batches = %v", v)
		}
		if v := value(after, "svc_store_wal_bytes", nil); v <= 0 {
			t.Errorf("WAL bytes = %v, want > 0", v)
		}
	}
	failed := map[string]string{"method": "basic", "result": "failure"}
	if d := value(after, "svc_authn_signins_total", failed) - value(before, "svc_authn_signins_total", failed); d != 2 {
		t.Errorf("failed basic sign-ins grew by %v, want 2", d)
	}
	if v := value(after, "svc_authn_signins_total", map[string]string{"method": "bearer", "result": "success"}); v < 2 {
		t.Errorf("bearer successes = %v, want >= 2 (the scrapes)", v)
	}
	if v := value(after, "svc_plugin_phase", map[string]string{"plugin": "content", "phase": "STARTED"}); v != 1 {
		t.Errorf("content plugin STARTED = %v, want 1", v)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if after[name] == nil && (name != "process_resident_memory_bytes" || onLinux()) {
			t.Errorf("%s missing: the Go and process collectors are not registered", name)
		}
	}

	// Watch streams open and close.
	open := func() float64 { return value(scraper.scrape(), "svc_watch_streams_open", nil) }
	if v := open(); v != 0 {
		t.Errorf("watch streams open = %v before any", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hdr := http.Header{"Authorization": {"Basic " + basicAuth("admin", adminPassword)}}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/api/v1alpha1/roles?watch=true", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, "watch stream counted open", func() (bool, string) { v := open(); return v == 1, fmt.Sprint(v) })
	ws.Close(websocket.StatusNormalClosure, "")
	servertest.Eventually(t, "watch stream counted closed", func() (bool, string) { v := open(); return v == 0, fmt.Sprint(v) })
	for _, reason := range []string{"slow", "unresponsive"} {
		if v := value(scraper.scrape(), "svc_watch_streams_dropped_total", map[string]string{"reason": reason}); v != 0 {
			t.Errorf("dropped (%s) = %v after a client closed its stream", reason, v)
		}
	}
}

func onLinux() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// TestPprof: /debug/pprof/ is not served without --pprof; with it, only
// super-role reaches it (not metrics-reader), a CPU profile outlives a
// write timeout shorter than it, and a bad seconds is a 400 naming the
// parameter.
func TestPprof(t *testing.T) {
	off := servertest.Start(t, servertest.Options{AdminPassword: adminPassword})
	if st, _ := (client{t, off.URL, withBasic("admin", adminPassword)}).do("GET", "/debug/pprof/", ""); st != 404 {
		t.Errorf("admin GET /debug/pprof/ without --pprof = %d, want 404", st)
	}

	srv := servertest.Start(t, servertest.Options{AdminPassword: adminPassword, Flags: func(f *server.Flags) { f.Pprof = true }})
	admin := client{t, srv.URL, withBasic("admin", adminPassword)}
	if st, body := admin.do("POST", "/apis/api.console.svc.run/v1alpha1/users", `{"name":"mona","displayName":"Mona","password":"mona-secret","roles":["metrics-reader"]}`); st != 201 {
		t.Fatalf("create mona = %d %s", st, body)
	}
	mona := client{t, srv.URL, withBasic("mona", "mona-secret")}
	if st, _ := mona.do("GET", "/metrics", ""); st != 200 {
		t.Errorf("metrics-reader GET /metrics = %d, want 200", st)
	}
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
		if st, _ := mona.do("GET", p, ""); st != 403 {
			t.Errorf("metrics-reader GET %s = %d, want 403", p, st)
		}
		if st, _ := (client{t, srv.URL, nil}).do("GET", p, ""); st != 401 {
			t.Errorf("anonymous GET %s = %d, want 401", p, st)
		}
	}
	if st, body := admin.do("GET", "/debug/pprof/", ""); st != 200 || !strings.Contains(string(body), "goroutine") {
		t.Errorf("admin GET /debug/pprof/ = %d %.200s", st, body)
	}
	if st, body := admin.do("GET", "/debug/pprof/heap", ""); st != 200 || len(body) == 0 {
		t.Errorf("admin heap profile = %d, %d bytes", st, len(body))
	}
	for _, bad := range []string{"0", "-1", "x", "301"} {
		st, body := admin.do("GET", "/debug/pprof/profile?seconds="+bad, "")
		if st != 400 || !strings.Contains(string(body), `"field":"seconds"`) {
			t.Errorf("profile?seconds=%s = %d %s, want a 400 naming seconds", bad, st, body)
		}
	}
	// Two seconds of CPU profile on a server whose write timeout is one
	// second. Its one request: the first sign-in's bcrypt, slow under the
	// race detector, happens before the profile's handler moves the
	// deadline.
	short := servertest.Start(t, servertest.Options{AdminPassword: adminPassword, Flags: func(f *server.Flags) {
		f.Pprof = true
		f.WriteTimeout = time.Second
	}})
	start := time.Now()
	st, body := (client{t, short.URL, withBasic("admin", adminPassword)}).do("GET", "/debug/pprof/profile?seconds=2", "")
	took := time.Since(start)
	if st != 200 || len(body) == 0 {
		t.Fatalf("2 s profile = %d, %d bytes: %.300s", st, len(body), body)
	}
	if took < 2*time.Second {
		t.Errorf("2 s profile answered after %v: cut short", took)

	}
	if !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		t.Errorf("profile is not gzipped pprof data: % x", body[:min(len(body), 8)])
	}
}
