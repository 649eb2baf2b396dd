package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/server/servertest"
)

// TestEveryScenarioAgainstARealServer runs the whole tool, briefly, against
// the example server in process: every scenario must do work and see no
// errors, and every watcher must receive every event.
func TestEveryScenarioAgainstARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	srv := servertest.Start(t, servertest.Options{AdminPassword: "pw"})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config{
		URL: u, User: "admin", Password: "pw", Concurrency: 4, Duration: time.Second,
		Objects: 200, Prefix: "t", Scenarios: allScenarios, Watchers: 10, WatchRate: 20, JSON: true,
		ServerPID: os.Getpid(), // the server runs in this process
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if regexp.MustCompile(`loadgen: scenario \w+: `).MatchString(stderr.String()) {
		t.Fatalf("a scenario failed:\n%s", stderr.String())
	}
	// The JSON report follows the table.
	out := stdout.String()
	var rep report
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	seen := map[string]*result{}
	for _, r := range rep.Results {
		seen[r.Scenario] = r
	}
	for _, name := range append([]string{"preload"}, allScenarios...) {
		r := seen[name]
		switch {
		case r == nil:
			t.Errorf("%s: no result\n%s", name, stderr.String())
		case r.Requests == 0 || r.Errors != 0:
			t.Errorf("%s: %d requests, %d errors (%v)", name, r.Requests, r.Errors, r.ErrorKinds)
		case name != "preload" && !(r.ServerCPUPerReqUs > 0 && r.ServerCPUPerReqUs < 1e6):
			t.Errorf("%s: server CPU per request %v µs, want a figure from /proc", name, r.ServerCPUPerReqUs)
		}
	}
	// What the create and watch scenarios made is gone: the store holds
	// the preloaded persons only.
	if !strings.Contains(stderr.String(), "loadgen: deleted the ") {
		t.Errorf("no cleanup reported:\n%s", stderr.String())
	}
	if n := countPersons(t, srv.URL); n != cfg.Objects {
		t.Errorf("after the run the store holds %d persons, want the %d preloaded", n, cfg.Objects)
	}
	// A second run trusts the first one's persons: no preload, gets that
	// find them, on an open loop of 200 requests/s.
	cfg.SkipPreload, cfg.Scenarios, cfg.Duration, cfg.Rate = true, []string{"get"}, 500*time.Millisecond, 200
	stdout.Reset()
	if err := run(ctx, cfg, &stdout, &stderr); err != nil {
		t.Fatalf("second run: %v", err)
	}
	out = stdout.String()
	var again report
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &again); err != nil {
		t.Fatalf("second report: %v\n%s", err, out)
	}
	if len(again.Results) != 1 || again.Results[0].Scenario != "get" || again.Results[0].Requests == 0 || again.Results[0].Errors != 0 {
		t.Errorf("second run with --skip-preload: %+v", again.Results)
	} else if r := again.Results[0]; r.Requests > 100 || r.OfferedPerSec != 200 || again.Rate != 200 {
		// 100 are due in 500 ms; a few may be cut off at the end.
		t.Errorf("open loop at 200/s for 500 ms: %d requests, offered %v/s, report rate %v", r.Requests, r.OfferedPerSec, again.Rate)
	}
	cfg.Rate = 0
	// With --keep-created, what a create run made stays.
	cfg.Scenarios, cfg.KeepCreated, cfg.JSON = []string{"create"}, true, false
	stdout.Reset()
	if err := run(ctx, cfg, &stdout, &stderr); err != nil {
		t.Fatalf("run with --keep-created: %v", err)
	}
	if n := countPersons(t, srv.URL); n <= cfg.Objects {
		t.Errorf("after a create run with --keep-created the store holds %d persons, want more than %d", n, cfg.Objects)
	}
	if w := seen["watch"]; w == nil || w.Watch == nil {
		t.Error("the report lacks the watch scenario's details")
	} else {
		if w.Watch.Connected != cfg.Watchers || w.Watch.Delivered != w.Watch.Expected || w.Watch.Expected == 0 {
			t.Errorf("watch: %d of %d connected, %d of %d events delivered", w.Watch.Connected, cfg.Watchers, w.Watch.Delivered, w.Watch.Expected)
		}
		// The first watcher times every acknowledged write's event.
		if int64(w.Watch.AckLagSamples) != w.Watch.WritesOK {
			t.Errorf("watch: ack→event lag of %d writes, want all %d", w.Watch.AckLagSamples, w.Watch.WritesOK)
		}
	}
}

// countPersons returns the total of a list of every person.
func countPersons(t *testing.T, base string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+collectionPath+"?size=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", "pw")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Total int `json:"total"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("count persons: %d, %v", res.StatusCode, err)
	}
	return list.Total
}
