package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/store/wal/waltest"
)

// newFaultEnv serves a store whose write-ahead log writes through fs.
func newFaultEnv(t *testing.T, fs *waltest.FaultFS) *env {
	t.Helper()
	m := storetest.PersonModel()
	st := storetest.Open(t, store.Options{Dir: t.TempDir(), WALFS: fs, LogRetry: 20 * time.Millisecond}, m)
	reg := model.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	a := api.New(api.Options{Store: st, Registry: reg})
	srv := httptest.NewServer(a)
	t.Cleanup(func() { a.Close(); srv.Close() })
	return &env{t: t, srv: srv, api: a, st: st, m: m}
}

// A full disk answers writes 507 (a failing fsync 503) with Retry-After
// and a problem body, and /readyz 503 saying why, until the disk takes
// writes again: then both recover without a restart.
func TestFullDiskAnswers507AndRecovers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject func(fs *waltest.FaultFS, err error)
		err    error
		status int
		detail string
	}{
		{"write", (*waltest.FaultFS).FailWrites, waltest.ErrNoSpace, http.StatusInsufficientStorage, "disk is full"},
		{"fsync", (*waltest.FaultFS).FailSyncs, syscall.EIO, http.StatusServiceUnavailable, "write-ahead log failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := waltest.New()
			e := newFaultEnv(t, fs)
			e.create(`{"metadata":{"name":"kept"},"spec":{"name":"Kept"}}`)
			if r := e.do("GET", "/readyz", "", ""); r.status != http.StatusOK {
				t.Fatalf("/readyz before the fault = %d %s", r.status, r.body)
			}

			tc.inject(fs, tc.err)
			for i, name := range []string{"lost", "refused"} { // the failing write, then one refused outright
				r := e.do("POST", base, "application/json", `{"metadata":{"name":"`+name+`"},"spec":{"name":"X"}}`)
				if r.status != tc.status || r.header.Get("Retry-After") != "1" || r.header.Get("Content-Type") != problem.ContentType ||
					!strings.Contains(r.json(t)["detail"].(string), tc.detail) {
					t.Fatalf("write %d with a failing %s = %d %v %s; want %d, Retry-After 1 and a problem saying %q",
						i, tc.name, r.status, r.header, r.body, tc.status, tc.detail)
				}
			}
			if r := e.do("GET", base+"/lost", "", ""); r.status != http.StatusNotFound {
				t.Fatalf("GET of the refused object = %d %s, want 404", r.status, r.body)
			}
			r := e.do("GET", "/readyz", "", "")
			if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "writes are refused") {
				t.Fatalf("/readyz while the log fails = %d %s, want 503 saying writes are refused", r.status, r.body)
			}

			tc.inject(fs, nil)
			deadline := time.Now().Add(10 * time.Second)
			for {
				r := e.do("GET", "/readyz", "", "")
				if r.status == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/readyz 10 s after the fault cleared = %d %s", r.status, r.body)
				}
				time.Sleep(10 * time.Millisecond)
			}
			e.create(`{"metadata":{"name":"later"},"spec":{"name":"Later"}}`)
		})
	}
}
