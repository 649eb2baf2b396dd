package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// gatedPerson decodes like a Person but waits for a gate first, which
// holds an index build open so the not-ready window can be observed.
type gatedPerson struct{ storetest.Person }

var gate = make(chan struct{})

func (g *gatedPerson) UnmarshalJSON(b []byte) error {
	<-gate
	return json.Unmarshal(b, &g.Person)
}

const adminPassword = "test-admin-password"

// authGet is a GET as the first administrator.
func authGet(u string) (*http.Response, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth("admin", adminPassword)
	return http.DefaultClient.Do(req)
}

func TestNotReadyWhileIndexesBuild(t *testing.T) {
	t.Setenv("SVC_ADMIN_PASSWORD", adminPassword)
	dir := t.TempDir()
	m := storetest.PersonModel()
	st := storetest.Open(t, store.Options{Dir: dir}, m)
	if _, err := st.Create(context.Background(), m, storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann"})); err != nil {
		t.Fatal(err)
	}
	st.Close()

	gated := storetest.PersonModel()
	gated.New = func() object.Object { return &gatedPerson{} }
	gated.Validate = nil
	gated.IndexVersion = "" // never reuse persisted keys: decode, through the gate
	for i := range gated.Indexes {
		keys := gated.Indexes[i].Keys
		gated.Indexes[i].Keys = func(o object.Object, dst []model.Key) []model.Key {
			return keys(&o.(*gatedPerson).Person, dst)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(context.Background(), server.Flags{DataDir: dir}, server.Config{Models: []*model.Model{gated}}, slog.New(slog.DiscardHandler), ln)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	if res, err := http.Get(url + "/apis/people.example.com/v1alpha1/persons/ann"); err != nil || res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") != `Basic realm="svc"` {
		t.Fatalf("anonymous get = %v %v, want 401 with a Basic challenge", res, err)
	}
	for _, path := range []string{"/readyz", "/apis/people.example.com/v1alpha1/persons/ann"} {
		res, err := authGet(url + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s while building = %d (Retry-After %q), want 503 with Retry-After", path, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	for _, path := range []string{"/healthz", "/openapi.json", "/swagger-ui/"} {
		if res, _ := http.Get(url + path); res == nil || res.StatusCode != 200 {
			t.Errorf("%s while building: %v", path, res)
		}
	}
	close(gate)
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := http.Get(url + "/readyz")
		if err == nil && res.StatusCode == 200 {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := authGet(url + "/apis/people.example.com/v1alpha1/persons/ann")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("get after ready = %v %v", res, err)
	}
	res.Body.Close()
	if err := srv.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

// runOnce runs the server with args (and a fresh data directory) until it
// has created one person, then cancels it, and returns its output.
func runOnce(t *testing.T, args ...string) (addr, stdout, stderr string) {
	t.Helper()
	t.Setenv("SVC_ADMIN_PASSWORD", adminPassword)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, append([]string{"--addr", addr, "--data-dir", t.TempDir()}, args...), &out, &errOut,
			server.Config{Models: []*model.Model{storetest.PersonModel()}})
	}()
	var res *http.Response
	for range 200 {
		req, _ := http.NewRequest("POST", "http://"+addr+"/apis/people.example.com/v1alpha1/persons",
			strings.NewReader(`{"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("admin", adminPassword)
		if res, err = http.DefaultClient.Do(req); err == nil && res.StatusCode != 503 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create = %v %v", res, err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	return addr, out.String(), errOut.String()
}

func TestRunServesUntilCancelled(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	addr, stdout, stderr := runOnce(t, "--cpu-profile", prof)
	if !strings.Contains(stdout, "listening on http://"+addr) || strings.Contains(stdout, "password") {
		t.Errorf("stdout = %q", stdout)
	}
	for _, want := range []string{`"msg":"request"`, `"status":201`, `"msg":"server stopped"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	// The profile is written at shutdown: a gzip'ed pprof protobuf.
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpu-profile wrote %d bytes (%v), want a gzip'ed profile", len(b), err)
	}
	err := server.Run(context.Background(), []string{"--addr", "127.0.0.1:0", "--memory", "--cpu-profile", filepath.Join(t.TempDir(), "no", "such", "dir")}, io.Discard, io.Discard, server.Config{})
	if err == nil || !strings.Contains(err.Error(), "--cpu-profile") {
		t.Errorf("Run with an unwritable --cpu-profile = %v, want an error naming the flag", err)
	}
}

// TestHeapSamplingOnlyWithPprof: without --pprof nothing can read a heap
// profile, so the server stops sampling allocations for one; with it, the
// rate is left as the process set it.
func TestHeapSamplingOnlyWithPprof(t *testing.T) {
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	runtime.MemProfileRate = 4096
	runOnce(t, "--pprof")
	if runtime.MemProfileRate != 4096 {
		t.Errorf("with --pprof the heap sampling rate is %d, want 4096 as set", runtime.MemProfileRate)
	}
	runOnce(t)
	if runtime.MemProfileRate != 0 {
		t.Errorf("without --pprof the heap sampling rate is %d, want 0", runtime.MemProfileRate)
	}
}

// TestRunAtWarnLogsNoRequests: above info, no access line is written.
func TestRunAtWarnLogsNoRequests(t *testing.T) {
	_, _, stderr := runOnce(t, "--log-level", "warn")
	if strings.Contains(stderr, `"msg":"request"`) {
		t.Errorf("--log-level warn wrote access lines: %s", stderr)
	}
}

func TestFlags(t *testing.T) {
	t.Setenv("SVC_BRAND_DOMAIN", "halo.run")
	f, err := server.ParseFlags(nil, io.Discard)
	if err != nil || f.Addr != "127.0.0.1:8090" || f.DataDir != "./data" || f.BrandDomain != "halo.run" {
		t.Errorf("defaults = %+v, %v", f, err)
	}
	f, err = server.ParseFlags([]string{"--brand-domain", "example.org", "--addr", ":1"}, io.Discard)
	if err != nil || f.BrandDomain != "example.org" || f.Addr != ":1" {
		t.Errorf("flags = %+v, %v", f, err)
	}
	if _, err := server.ParseFlags([]string{"--nope"}, io.Discard); err == nil {
		t.Error("unknown flag accepted")
	}
}

// --memory-limit takes IEC and SI sizes; a value that is not one, or is
// too small to run in, is refused naming the flag.
func TestMemoryLimitFlag(t *testing.T) {
	for v, want := range map[string]int64{"512MiB": 512 << 20, "2GB": 2_000_000_000, "1.5GiB": 3 << 29, "100000000": 100_000_000, "64 mib": 64 << 20} {
		f, err := server.ParseFlags([]string{"--memory-limit", v}, io.Discard)
		if err != nil || f.MemoryLimit != want {
			t.Errorf("--memory-limit %s = %d, %v; want %d", v, f.MemoryLimit, err, want)
		}
	}
	if f, err := server.ParseFlags(nil, io.Discard); err != nil || f.MemoryLimit != 0 {
		t.Errorf("no --memory-limit = %d, %v; want 0 (the runtime's own, GOMEMLIMIT)", f.MemoryLimit, err)
	}
	for _, v := range []string{"lots", "-1GiB", "10MiB", "0", ""} {
		_, err := server.ParseFlags([]string{"--memory-limit", v}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "memory-limit") {
			t.Errorf("--memory-limit %q: %v, want an error naming the flag", v, err)
		}
	}
}

// A server run with --memory-limit sets the runtime's limit and logs it.
func TestMemoryLimitIsSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	_, _, stderr := runOnce(t, "--memory-limit", "3GiB")
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("the runtime's memory limit = %d, want %d", got, int64(3<<30))
	}
	if !strings.Contains(stderr, `"msg":"memory limit","bytes":3221225472`) {
		t.Errorf("no log line of the memory limit in\n%s", stderr)
	}
}

// TestFailedStartReleasesTheDataDir: a start that fails after opening the
// store closes what the earlier steps opened, so the directory's lock is
// free for the next attempt.
func TestFailedStartReleasesTheDataDir(t *testing.T) {
	t.Setenv("SVC_ADMIN_PASSWORD", adminPassword)
	person := storetest.PersonModel()
	clash := func(r gin.IRouter, _ api.Handlers) {
		r.GET("/clash/:a", func(*gin.Context) {})
		r.GET("/clash/:b/x", func(*gin.Context) {})
	}
	for _, tc := range []struct {
		name    string
		cfg     server.Config
		wantErr string
	}{
		{"models step: a kind registered twice", server.Config{Models: []*model.Model{storetest.PersonModel(), storetest.PersonModel()}}, "already registered"},
		{"HTTP API step: clashing routes", server.Config{Models: []*model.Model{person}, Routes: map[*model.Model]api.ModelRoutes{person: clash}}, "clash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			_, err = server.Start(context.Background(), server.Flags{DataDir: dir}, tc.cfg, slog.New(slog.DiscardHandler), ln)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Start = %v, want an error with %q", err, tc.wantErr)
			}
			st, err := store.Open(store.Options{Dir: dir})
			if err != nil {
				t.Fatalf("the data directory after a failed start: %v", err)
			}
			st.Close()
		})
	}
}
