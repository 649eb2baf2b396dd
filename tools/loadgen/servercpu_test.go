package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseProcCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250, stime 50.
	stat := "4242 (my (server) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 1000000 500"
	got, err := parseProcCPU(stat)
	if err != nil || got != 3*time.Second {
		t.Errorf("parseProcCPU = %v, %v; want 3s", got, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if _, err := parseProcCPU(bad); err == nil {
			t.Errorf("parseProcCPU(%q): no error", bad)
		}
	}
	if d, err := procCPU(os.Getpid()); err != nil || d < 0 {
		t.Skipf("no /proc here: %v", err)
	}
}

// TestCPUProfileFetch checks that a scenario's profile is asked for with
// the run's credentials and its duration, and written under the
// scenario's name; and that a refusal is reported, not fatal.
func TestCPUProfileFetch(t *testing.T) {
	var gotAuth, gotSeconds string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" {
			http.NotFound(w, r)
			return
		}
		gotAuth, gotSeconds = r.Header.Get("Authorization"), r.URL.Query().Get("seconds")
		if user, pw, ok := r.BasicAuth(); !ok || user != "admin" || pw != "pw" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		w.Write([]byte("profile-bytes"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	prefix := filepath.Join(t.TempDir(), "cpu.pprof")
	cfg := &config{URL: u, User: "admin", Password: "pw", Concurrency: 1, Duration: 1500 * time.Millisecond, CPUProfile: prefix, ServerPID: os.Getpid()}
	m := startMeter(context.Background(), newClient(cfg), cfg, "create")
	r := &result{Requests: 10}
	var stderr bytes.Buffer
	m.stop(r, &stderr)
	data, err := os.ReadFile(prefix + ".create")
	if err != nil || string(data) != "profile-bytes" {
		t.Fatalf("profile file: %q, %v (stderr %s)", data, err, stderr.String())
	}
	if gotSeconds != "2" || !strings.HasPrefix(gotAuth, "Basic ") {
		t.Errorf("request: seconds=%q, Authorization %q; want 2 and Basic credentials", gotSeconds, gotAuth)
	}
	if r.ServerCPUPerReqUs < 0 {
		t.Errorf("server CPU per request %v", r.ServerCPUPerReqUs)
	}

	cfg.Password = "wrong"
	m = startMeter(context.Background(), newClient(cfg), cfg, "get")
	stderr.Reset()
	m.stop(&result{}, &stderr)
	if !strings.Contains(stderr.String(), "403") || !strings.Contains(stderr.String(), "--pprof") {
		t.Errorf("a refused profile: stderr %q, want the status and a hint", stderr.String())
	}
	if _, err := os.Stat(prefix + ".get"); err == nil {
		t.Error("a refused profile left a file")
	}
}
