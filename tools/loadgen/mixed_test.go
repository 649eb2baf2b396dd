package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/server/servertest"
)

// TestMixedAgainstARealServer runs the soak's scenario briefly against the
// example server in process (so the server's pid is this test's): every
// operation does work without errors, every watcher gets every create,
// the resource samples hold real figures, and the store is back to the
// preloaded persons afterwards.
func TestMixedAgainstARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	srv := servertest.Start(t, servertest.Options{AdminPassword: "pw"})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config{
		URL: u, User: "admin", Password: "pw", Concurrency: 8, Duration: 2 * time.Second, Rate: 300,
		Objects: 100, Prefix: "m", Scenarios: []string{"mixed"}, Watchers: 3, Mix: defaultMix,
		ServerPID: os.Getpid(), JSON: true, Strict: true,
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "start/middle/end of the run: rss ") {
		t.Errorf("no resource summary in the output:\n%s", out)
	}
	var rep report
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	seen := map[string]*result{}
	var sent int64
	for _, r := range rep.Results {
		seen[r.Scenario] = r
		if r.Scenario != "preload" && r.Scenario != "mixed:events" {
			sent += r.Requests
		}
	}
	for _, op := range mixOps {
		r := seen["mixed:"+op]
		switch {
		case r == nil:
			t.Errorf("%s: no result\n%s", op, out)
		case r.Requests == 0 || r.Errors != 0:
			t.Errorf("%s: %d requests, %d errors (%v)", op, r.Requests, r.Errors, r.ErrorKinds)
		case r.P99Ms <= 0:
			t.Errorf("%s: p99 %v ms", op, r.P99Ms)
		}
	}
	// 600 requests are due in 2 s at 300/s; on a busy machine (or under
	// -race) many may be cut off, but never more are sent.
	if sent > 600 {
		t.Errorf("open loop at 300/s for 2 s sent %d requests", sent)
	}
	ev := seen["mixed:events"]
	if ev == nil || ev.Mixed == nil {
		t.Fatalf("no mixed:events row with the details:\n%s", out)
	}
	st := ev.Mixed
	// A create cut off at the end is not counted but may have been made:
	// watchers may get more events than expected, never fewer.
	if creates := seen["mixed:create"]; creates != nil && (st.Expected != creates.Requests*int64(cfg.Watchers) || st.Delivered < st.Expected || st.Dropped != 0 || ev.Errors != 0) {
		t.Errorf("watchers: %d of %d events delivered (%d creates, %d watchers), %d dropped", st.Delivered, st.Expected, creates.Requests, cfg.Watchers, st.Dropped)
	}
	// Samples at the start, every 200 ms and at the end.
	if len(st.Samples) < 5 {
		t.Errorf("%d samples, want the start, several in between and the end", len(st.Samples))
	}
	if !st.Samples[len(st.Samples)-1].AfterRun {
		t.Error("the last sample is not marked as taken after the run")
	}
	for _, s := range st.Samples {
		if s.Err != "" || s.RSSKiB < 1024 || s.FDs < 5 || s.HeapMB != -1 ||
			s.Persons < int64(cfg.Objects) || s.Persons > int64(cfg.Objects+maxChurn) {
			t.Errorf("sample %+v: want no error, RSS and descriptors of a live process, no heap without a trace, %d to %d persons",
				s, cfg.Objects, cfg.Objects+maxChurn)
		}
	}
	if n := countPersons(t, srv.URL); n != cfg.Objects {
		t.Errorf("after the run the store holds %d persons, want the %d preloaded", n, cfg.Objects)
	}
}

func TestParseMix(t *testing.T) {
	w, err := parseMix(" get=3, delete=1 ,watch=0")
	if err != nil || len(w) != len(mixOps) || w[0] != 3 || w[4] != 1 || w[1]+w[2]+w[3]+w[5] != 0 {
		t.Errorf("parseMix = %v, %v", w, err)
	}
	for _, bad := range []string{"", "get=0", "get", "get=x", "post=1", "get=-1", "get=1001"} {
		if _, err := parseMix(bad); err == nil {
			t.Errorf("parseMix(%q): want an error", bad)
		}
	}
	// Every draw in [0, 4) lands by weight: 0..2 get, 3 delete.
	for r, want := range []int{0, 0, 0, 4} {
		if got := pickOp(w, r); got != want {
			t.Errorf("pickOp(%v, %d) = %s, want %s", w, r, mixOps[got], mixOps[want])
		}
	}
	if _, err := parseFlags([]string{"--scenarios", "mixed", "--mix", "get=1", "--server-pid", "12"}, io.Discard); err != nil {
		t.Errorf("mixed flags: %v", err)
	}
	if _, err := parseFlags([]string{"--mix", "get=1,bogus=2"}, io.Discard); err == nil {
		t.Error("a bad --mix was accepted")
	}
}

func TestLastLiveHeap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	if h, err := lastLiveHeap(path); err == nil || h != -1 {
		t.Errorf("missing file: %d, %v", h, err)
	}
	// As the Go runtime prints them, between the server's own lines.
	trace := `time=2026-11-26T07:00:00Z level=INFO msg="store recovered"
gc 1 @0.012s 2%: 0.010+1.2+0.003 ms clock, 0.021+0.40/1.0/0.88+0.007 ms cpu, 3->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P
gc 2 @1.503s 1%: 0.030+2.5+0.004 ms clock, 0.061+0.1/2.2/3.1+0.009 ms cpu, 41->43->27 MB, 44 MB goal, 0 MB stacks, 0 MB globals, 2 P
time=2026-11-26T07:00:02Z level=INFO msg=request
`
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := lastLiveHeap(path); err != nil || h != 27 {
		t.Errorf("lastLiveHeap = %d, %v; want 27 (the last collection's live heap)", h, err)
	}
	if err := os.WriteFile(path, []byte("no collections yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := lastLiveHeap(path); err != nil || h != -1 {
		t.Errorf("no gc lines: %d, %v; want -1", h, err)
	}
}

func TestProcStatsOfThisProcess(t *testing.T) {
	rss, fds, err := procStats(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, fds2, err := procStats(os.Getpid())
	if err != nil || rss < 1024 || fds2 != fds+1 {
		t.Errorf("rss %d KiB, fds %d then %d after opening one file (%v)", rss, fds, fds2, err)
	}
}
