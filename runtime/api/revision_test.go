package api_test

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
)

// Every answer carries the store's revision; a write's is at least the
// write's; a read that asks for a revision ahead waits for it and is
// stamped with it (or later); a bad value is a 400 naming it.
func TestRevisionHeaderAndMinimumRevision(t *testing.T) {
	e := newEnv(t)
	rev := func(r resp) int64 {
		t.Helper()
		v, err := strconv.ParseInt(r.header.Get("X-Svc-Revision"), 10, 64)
		if err != nil {
			t.Fatalf("X-Svc-Revision %q: %v", r.header.Get("X-Svc-Revision"), err)
		}
		return v
	}
	w := e.do("POST", base, "application/json", `{"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`)
	if w.status != http.StatusCreated || rev(w) < 1 {
		t.Fatalf("create: %d, revision %s", w.status, w.header.Get("X-Svc-Revision"))
	}
	after := rev(w)
	// A read asking for the next revision waits for the write that makes it.
	go func() {
		time.Sleep(100 * time.Millisecond)
		e.do("POST", base, "application/json", `{"metadata":{"name":"bob"},"spec":{"name":"Bob"}}`)
	}()
	req, _ := http.NewRequest("GET", e.srv.URL+base+"/bob", nil)
	req.Header.Set("X-Svc-Min-Revision", strconv.FormatInt(after+1, 10))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	got, _ := strconv.ParseInt(res.Header.Get("X-Svc-Revision"), 10, 64)
	if res.StatusCode != http.StatusOK || got < after+1 {
		t.Fatalf("get at revision %d: %d, stamped %d", after+1, res.StatusCode, got)
	}
	expectProblem(t, e.do("GET", base+"?minRevision=-1", "", ""), http.StatusBadRequest, "minRevision")
}

// A request for at least a revision is decided only once access control
// has caught up with that revision (Settle), so a grant made on another
// replica applies to it; a request without one never waits for it.
func TestMinimumRevisionWaitsForAccessControl(t *testing.T) {
	settled := make(chan struct{})
	var calls atomic.Int32
	var guardSawSettled atomic.Bool
	e := newEnvWith(t, api.Options{
		Settle: func(ctx context.Context) error {
			calls.Add(1)
			select {
			case <-settled:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Guard: func(c *gin.Context) error {
			select {
			case <-settled:
				guardSawSettled.Store(true)
			default:
			}
			return nil
		},
	})
	if r := e.do("POST", base, "application/json", `{"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`); r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r := e.do("GET", base, "", ""); r.status != http.StatusOK || calls.Load() != 0 {
		t.Fatalf("a read without a minimum revision: %d, Settle called %d times", r.status, calls.Load())
	}
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", e.srv.URL+base, nil)
		req.Header.Set("X-Svc-Min-Revision", strconv.FormatInt(e.st.Revision(), 10))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}()
	select {
	case st := <-done:
		t.Fatalf("answered %d before access control settled", st)
	case <-time.After(200 * time.Millisecond):
	}
	close(settled)
	if st := <-done; st != http.StatusOK || !guardSawSettled.Load() || calls.Load() != 1 {
		t.Fatalf("after settling: %d, guard after settle %v, Settle called %d times", st, guardSawSettled.Load(), calls.Load())
	}
}
