package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// mixOps are the operations of the mixed scenario, in report order.
var mixOps = []string{"get", "list", "create", "update", "delete", "watch"}

// defaultMix is the share of each operation (weights, not percentages).
const defaultMix = "get=40,list=20,create=10,update=10,delete=10,watch=10"

// maxChurn bounds the persons the mixed scenario has created and not yet
// deleted: a create beyond it deletes instead, so the store stays within
// --objects + maxChurn whatever the draw of operations (equal create and
// delete weights alone are a random walk: +516 after a 10-minute soak).
const maxChurn = 100

// parseMix reads "op=weight,..." into weights indexed like mixOps.
func parseMix(s string) ([]int, error) {
	w := make([]int, len(mixOps))
	total := 0
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, v, ok := strings.Cut(part, "=")
		i := slices.Index(mixOps, strings.TrimSpace(name))
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case !ok || i < 0:
			return nil, fmt.Errorf("--mix: %q: want op=weight with op one of %s", part, strings.Join(mixOps, ", "))
		case err != nil || n < 0 || n > 1000:
			return nil, fmt.Errorf("--mix: %q: weight must be 0 to 1000", part)
		}
		w[i] = n
		total += n
	}
	if total == 0 {
		return nil, errors.New("--mix: every weight is 0")
	}
	return w, nil
}

// pickOp draws an operation index by weight; r is in [0, sum of weights).
func pickOp(weights []int, r int) int {
	for i, w := range weights {
		if r < w {
			return i
		}
		r -= w
	}
	return len(weights) - 1
}

// churn is the FIFO of persons the mixed scenario created, which its
// deletes take from the front.
type churn struct {
	mu    sync.Mutex
	names []string
}

func (c *churn) push(name string) {
	c.mu.Lock()
	c.names = append(c.names, name)
	c.mu.Unlock()
}

func (c *churn) pop() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.names) == 0 {
		return "", false
	}
	n := c.names[0]
	c.names = c.names[1:]
	return n, true
}

func (c *churn) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.names)
}

// sample is the server's resource use at one moment of the mixed run.
type sample struct {
	AtSeconds float64 `json:"atSeconds"`
	// RSSKiB is VmRSS of /proc/<pid>/status: resident memory.
	RSSKiB int64 `json:"rssKiB,omitempty"`
	// FDs counts the entries of /proc/<pid>/fd: open files and sockets.
	FDs int `json:"fds,omitempty"`
	// HeapMB is the live heap after the server's latest collection, the
	// last number of "A->B->C MB" in its GODEBUG=gctrace=1 output; -1
	// when no collection was logged yet.
	HeapMB int64 `json:"heapMB"`
	// Persons is the total of a list of every person.
	Persons int64  `json:"persons"`
	Err     string `json:"error,omitempty"`
	// AfterRun marks the sample taken once the requests stopped: requests
	// cut off at the end close their connections, so it shows fewer
	// descriptors than the run held.
	AfterRun bool `json:"afterRun,omitempty"`
}

// mixedStats is the mixed scenario's detail in the JSON report.
type mixedStats struct {
	Samples []sample `json:"samples"`
	// Watchers held open for the whole run, and the ADDED events of this
	// run's creates they should all have received.
	Watchers  int   `json:"watchers"`
	Connected int   `json:"connected"`
	Dropped   int   `json:"dropped"`
	Expected  int64 `json:"expectedDeliveries"`
	Delivered int64 `json:"delivered"`
}

// runMixed runs every operation of --mix at once, drawn at random per
// request, on the open loop of --rate (or closed, without it), while
// --watchers streams stay open and count this run's events, and samples
// the server's resources every tenth of --duration. Each operation gets
// its own line in the report, named mixed:<op>.
func runMixed(ctx context.Context, c *client, cfg *config, stderr io.Writer) ([]*result, *mixedStats, error) {
	if cfg.Objects == 0 {
		return nil, nil, errNoObjects
	}
	weights, err := parseMix(cfg.Mix)
	if err != nil {
		return nil, nil, err
	}
	st := &mixedStats{Watchers: cfg.Watchers}
	marker := []byte(`"` + runLabel + `":"` + c.runID + `"`)
	var lat delivery
	wctx, stopWatchers := context.WithCancel(ctx)
	defer stopWatchers()
	var watchers []*watcher
	for range cfg.Watchers {
		w, err := c.openWatch(wctx, marker, &lat, false)
		if err != nil {
			return nil, nil, fmt.Errorf("open watcher: %w", err)
		}
		watchers = append(watchers, w)
	}
	defer func() {
		stopWatchers()
		for _, w := range watchers {
			w.conn.CloseNow()
		}
	}()
	st.Connected = len(watchers)

	// Sample the server now, every tenth of the run, and at the end.
	sampleDone := make(chan struct{})
	var samples []sample
	start := time.Now()
	sampler := func() sample { return c.sampleServer(ctx, cfg, time.Since(start)) }
	samples = append(samples, sampler())
	sctx, stopSampling := context.WithCancel(ctx)
	go func() {
		defer close(sampleDone)
		tick := time.NewTicker(cfg.Duration / 10)
		defer tick.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tick.C:
				s := sampler()
				samples = append(samples, s)
				fmt.Fprintf(stderr, "loadgen: mixed: %s\n", s)
			}
		}
	}()

	sum := 0
	for _, w := range weights {
		sum += w
	}
	var seq atomic.Int64
	var created atomic.Int64 // creates answered 201: events every watcher should get
	var pending churn
	t, elapsed := runTimed(ctx, cfg.Concurrency, cfg.Duration, cfg.Rate, func(ctx context.Context, t *tally, buf *bytes.Buffer, due time.Time) {
		op := mixOps[pickOp(weights, rand.IntN(sum))]
		// Hold the store's size: a delete takes the oldest person this run
		// created (a create instead when there is none), and a create
		// beyond maxChurn deletes instead.
		var victim string
		if op == "create" && pending.len() >= maxChurn || op == "delete" {
			var ok bool
			if victim, ok = pending.pop(); ok {
				op = "delete"
			} else {
				op = "create"
			}
		}
		sub := t.sub(op)
		t0 := sentAt(due)
		switch op {
		case "get":
			status, err := c.do(ctx, http.MethodGet, c.coll+"/"+preloadName(cfg.Prefix, rand.IntN(cfg.Objects)), nil, nil)
			sub.observe(ctx, t0, status, err, http.StatusOK, false, "")
		case "list":
			status, err := c.do(ctx, http.MethodGet, c.listURL(rand.IntN(10), 1+rand.IntN(5)), nil, nil)
			sub.observe(ctx, t0, status, err, http.StatusOK, false, "")
		case "create":
			i := seq.Add(1)
			name := fmt.Sprintf("%s-m-%s-%d", cfg.Prefix, c.runID, i)
			labels := map[string]string{"team": "t" + strconv.Itoa(rand.IntN(10)), runLabel: c.runID}
			body := personBody(name, int(i), labels, map[string]string{sentAnnotation: strconv.FormatInt(time.Now().UnixNano(), 10)})
			status, err := c.do(ctx, http.MethodPost, c.coll, body, nil)
			if sub.observe(ctx, t0, status, err, http.StatusCreated, false, "") {
				created.Add(1)
				pending.push(name)
			}
		case "delete":
			status, err := c.do(ctx, http.MethodDelete, c.coll+"/"+victim, nil, nil)
			if !sub.observe(ctx, t0, status, err, http.StatusOK, false, "") && err != nil && ctx.Err() != nil {
				pending.push(victim) // cut off by the end of the run: the cleanup deletes it
			}
		case "update":
			url := c.coll + "/" + preloadName(cfg.Prefix, rand.IntN(cfg.Objects))
			status, err := c.do(ctx, http.MethodGet, url, nil, buf)
			if err != nil || status != http.StatusOK {
				sub.observe(ctx, t0, status, err, http.StatusOK, false, "get:")
				return
			}
			body, err := withNewAge(buf.Bytes(), 18+rand.IntN(60))
			if err != nil {
				sub.requests++
				sub.hist.Record(time.Since(t0))
				sub.fail("decode")
				return
			}
			status, err = c.do(ctx, http.MethodPut, url, body, nil)
			sub.observe(ctx, t0, status, err, http.StatusOK, true, "put:")
		case "watch":
			err := c.watchOnce(ctx, preloadName(cfg.Prefix, rand.IntN(cfg.Objects)))
			status := http.StatusSwitchingProtocols
			if err != nil {
				status = 0
			}
			sub.observe(ctx, t0, status, err, http.StatusSwitchingProtocols, false, "")
		}
	})
	stopSampling()
	<-sampleDone
	after := sampler()
	after.AfterRun = true
	samples = append(samples, after)
	st.Samples = samples

	// Let the watchers catch up with the last creates, then count.
	want := created.Load()
	drainStart := time.Now()
	for time.Since(drainStart) < drainLimit && ctx.Err() == nil {
		if !slices.ContainsFunc(watchers, func(w *watcher) bool { return !w.ended.Load() && w.received.Load() < want }) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopWatchers()
	for _, w := range watchers {
		st.Delivered += w.received.Load()
		if w.ended.Load() {
			st.Dropped++
		}
	}
	st.Expected = want * int64(len(watchers))

	var results []*result
	for _, op := range mixOps {
		sub := t.subs[op]
		if sub == nil {
			continue
		}
		r := newResult("mixed:"+op, sub, sub.requests, elapsed)
		if op == "update" {
			r.Notes = fmt.Sprintf("GET+PUT cycles; conflicts=%d", sub.conflicts)
		}
		if op == "watch" {
			r.Notes = "open a stream on one person with sendInitialEvents, read its ADDED event, close"
		}
		results = append(results, r)
	}
	lat.mu.Lock()
	h := lat.hist
	lat.mu.Unlock()
	ev := &tally{hist: h, requests: st.Delivered}
	for range st.Dropped {
		ev.fail("dropped")
	}
	// More than expected is no error: a create cut off at the end of the
	// run is not counted, yet the server may have made it.
	if missing := st.Expected - st.Delivered; missing > 0 && st.Dropped == 0 {
		for range min(missing, 1<<20) {
			ev.fail("missing")
		}
	}
	r := newResult("mixed:events", ev, st.Delivered, elapsed)
	r.Notes = fmt.Sprintf("latency=create sent→event received; %d watchers open throughout, events %d/%d", st.Connected, st.Delivered, st.Expected)
	r.Mixed = st
	results = append(results, r)
	return results, st, nil
}

// watchOnce opens a watch of one person with its initial state, reads
// that ADDED event and closes the stream normally.
func (c *client) watchOnce(ctx context.Context, name string) error {
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.coll, "http")+"/"+name+"?watch=true&sendInitialEvents=true",
		&websocket.DialOptions{HTTPClient: c.ws, HTTPHeader: c.authHeader()})
	if err != nil {
		if resp != nil {
			return fmt.Errorf("watch handshake: status %d: %w", resp.StatusCode, err)
		}
		return err
	}
	defer conn.CloseNow()
	_, data, err := conn.Read(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: first event: %w", name, err)
	}
	if !bytes.HasPrefix(data, addedPrefix) {
		return fmt.Errorf("watch %s: first event is not ADDED: %.100s", name, data)
	}
	return conn.Close(websocket.StatusNormalClosure, "")
}

// sampleServer reads the server's resident memory and open descriptors
// from /proc (given --server-pid), its live heap from its gctrace output
// (given --server-gctrace), and the number of persons it holds.
func (c *client) sampleServer(ctx context.Context, cfg *config, at time.Duration) sample {
	s := sample{AtSeconds: at.Seconds(), HeapMB: -1}
	var errs []string
	if cfg.ServerPID > 0 {
		rss, fds, err := procStats(cfg.ServerPID)
		s.RSSKiB, s.FDs = rss, fds
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if cfg.ServerGCTrace != "" {
		heap, err := lastLiveHeap(cfg.ServerGCTrace)
		s.HeapMB = heap
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	n, err := c.countPersons(ctx)
	s.Persons = n
	if err != nil {
		errs = append(errs, err.Error())
	}
	s.Err = strings.Join(errs, "; ")
	return s
}

func (s sample) String() string {
	out := fmt.Sprintf("at %5.0fs: rss %7.1f MiB, fds %4d, live heap %4d MB, persons %d", s.AtSeconds, float64(s.RSSKiB)/1024, s.FDs, s.HeapMB, s.Persons)
	if s.Err != "" {
		out += " (" + s.Err + ")"
	}
	if s.AfterRun {
		out += " (after the run)"
	}
	return out
}

// procStats returns VmRSS in KiB and the number of open descriptors of a
// process, read from Linux's /proc.
func procStats(pid int) (rssKiB int64, fds int, err error) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, fmt.Errorf("server pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v) // "123456 kB"
			if len(f) == 2 && f[1] == "kB" {
				rssKiB, err = strconv.ParseInt(f[0], 10, 64)
			}
			break
		}
	}
	if err != nil || rssKiB == 0 {
		return 0, 0, fmt.Errorf("server pid %d: no VmRSS in /proc status", pid)
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return rssKiB, 0, fmt.Errorf("server pid %d: %w", pid, err)
	}
	return rssKiB, len(ents), nil
}

// gcLine matches a GODEBUG=gctrace=1 line: "gc 12 @3.4s 1%: ... 4->5->2 MB, ...".
var gcLine = regexp.MustCompile(`^gc \d+ @[0-9.]+s .* (\d+)->(\d+)->(\d+) MB`)

// lastLiveHeap returns the live heap (MB) after the last collection the
// trace file logged, -1 when it logged none.
func lastLiveHeap(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return -1, fmt.Errorf("gctrace: %w", err)
	}
	defer f.Close()
	heap := int64(-1)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if m := gcLine.FindSubmatch(sc.Bytes()); m != nil {
			heap, _ = strconv.ParseInt(string(m[3]), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return heap, fmt.Errorf("gctrace %s: %w", path, err)
	}
	return heap, nil
}

// countPersons returns the total of a list of every person.
func (c *client) countPersons(ctx context.Context) (int64, error) {
	var buf bytes.Buffer
	status, err := c.do(ctx, http.MethodGet, c.coll+"?size=1", nil, &buf)
	if err != nil {
		return 0, fmt.Errorf("count persons: %w", err)
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("count persons: status %d", status)
	}
	var page struct {
		Total int64 `json:"total"`
	}
	if err := json.Unmarshal(buf.Bytes(), &page); err != nil {
		return 0, fmt.Errorf("count persons: %w", err)
	}
	return page.Total, nil
}

// printSamples writes the server's resource samples of a mixed run.
func printSamples(w io.Writer, samples []sample) {
	if len(samples) == 0 {
		return
	}
	fmt.Fprintf(w, "\nserver during the mixed run (rss: VmRSS, fds: /proc/<pid>/fd entries, heap: live heap after the last GC):\n")
	for _, s := range samples {
		fmt.Fprintf(w, "  %s\n", s)
	}
	// The end is the last sample taken while the requests ran.
	during := samples
	if len(during) > 2 && during[len(during)-1].AfterRun {
		during = during[:len(during)-1]
	}
	first, mid, last := during[0], during[len(during)/2], during[len(during)-1]
	fmt.Fprintf(w, "start/middle/end of the run: rss %.1f/%.1f/%.1f MiB, fds %d/%d/%d, heap %d/%d/%d MB, persons %d/%d/%d\n",
		float64(first.RSSKiB)/1024, float64(mid.RSSKiB)/1024, float64(last.RSSKiB)/1024,
		first.FDs, mid.FDs, last.FDs, first.HeapMB, mid.HeapMB, last.HeapMB, first.Persons, mid.Persons, last.Persons)
}
