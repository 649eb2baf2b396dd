// Package servertest runs a real svc server in process for tests: the
// whole composition of runtime/server on a loopback port, shut down when
// the test ends, plus the polling that asynchronous state (plugin phases)
// needs. Tests drive it over HTTP with their own request helpers.
package servertest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/store"
)

// Options say what to run.
type Options struct {
	// Dir is the data directory; empty keeps everything in memory.
	Dir   string
	Brand string // default svc.run
	// AdminPassword is the first administrator's (SVC_ADMIN_PASSWORD).
	AdminPassword string
	// Plugins run in the server; nil means every registered one.
	Plugins []plugin.Plugin
	// Log receives the server's JSON logs; nil discards them.
	Log io.Writer
	// Flags, when set, adjusts the server's flags (timeouts, limits).
	Flags func(*server.Flags)
}

// EtcdEnv names the environment variable that runs every test server on
// the etcd backend: comma-separated endpoints of a cluster the test run
// started (make test's second pass, docs/deployment.md).
const EtcdEnv = "SVC_TEST_ETCD"

// EtcdPrefix is the etcd prefix standing in for data directory dir on
// the backend matrix: one per directory, so a server restarted on dir
// finds its data, and a fresh one per memory-only server.
func EtcdPrefix(dir string) string {
	if dir == "" {
		var b [8]byte
		rand.Read(b[:])
		return fmt.Sprintf("/test/mem-%x/", b)
	}
	return fmt.Sprintf("/test/%x/", sha256.Sum256([]byte(dir)))
}

// Server is a running server.
type Server struct {
	*server.Server
	// URL is the base URL, http://127.0.0.1:<port>.
	URL string
	t   testing.TB
	pw  string
}

// Start runs a server until the test ends (or Shutdown).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	t.Setenv("SVC_ADMIN_PASSWORD", opts.AdminPassword)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := opts.Log
	if w == nil {
		w = io.Discard
	}
	f := server.Flags{DataDir: opts.Dir, BrandDomain: opts.Brand, Memory: opts.Dir == ""}
	if ep := os.Getenv(EtcdEnv); ep != "" {
		// The backend matrix (make test): the same tests on etcd.
		f.Memory, f.DataDir = false, ""
		f.Etcd.Endpoints = strings.Split(ep, ",")
		f.Etcd.Prefix = EtcdPrefix(opts.Dir)
		f.Etcd.MaxObjectBytes = store.DefaultEtcdMaxValueBytes
	}
	if opts.Flags != nil {
		opts.Flags(&f)
	}
	srv, err := server.Start(context.Background(), f, server.Config{Plugins: opts.Plugins, Out: io.Discard}, slog.New(slog.NewJSONHandler(w, nil)), ln)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	return &Server{Server: srv, URL: "http://" + ln.Addr().String(), t: t, pw: opts.AdminPassword}
}

// Eventually polls check until it passes, failing the test with check's
// last report after a deadline generous enough for a loaded machine.
func Eventually(t testing.TB, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, got := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s", what, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Phase returns a plugin's status.phase and status.message, read as the
// administrator.
func (s *Server) Phase(name string) (phase, message string) {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.URL+"/api/v1alpha1/plugins/"+name, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.SetBasicAuth("admin", s.pw)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	var obj struct {
		Status struct{ Phase, Message string } `json:"status"`
	}
	_ = json.NewDecoder(res.Body).Decode(&obj)
	return obj.Status.Phase, obj.Status.Message
}

// WaitPhase waits until a plugin reaches phase and returns its message.
func (s *Server) WaitPhase(name, phase string) string {
	s.t.Helper()
	var msg string
	Eventually(s.t, "plugin "+name+" phase", func() (bool, string) {
		ph, m := s.Phase(name)
		msg = m
		return ph == phase, fmt.Sprintf("%q (%s), want %s", ph, m, phase)
	})
	return msg
}
