package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"
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
