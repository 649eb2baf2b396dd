package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// requestTimeout bounds a request that no scenario deadline bounds
// (preload, the writes of the watch scenario).
const requestTimeout = 30 * time.Second

// tally is what one worker counts; workers merge theirs at the end.
type tally struct {
	hist      Histogram
	requests  int64
	errors    int64
	conflicts int64
	kinds     map[string]int64  // error breakdown
	subs      map[string]*tally // per operation, in the mixed scenario
}

// sub returns the tally of one operation of the mixed scenario.
func (t *tally) sub(op string) *tally {
	if t.subs == nil {
		t.subs = map[string]*tally{}
	}
	s := t.subs[op]
	if s == nil {
		s = &tally{}
		t.subs[op] = s
	}
	return s
}

func (t *tally) fail(kind string) {
	t.errors++
	if t.kinds == nil {
		t.kinds = map[string]int64{}
	}
	t.kinds[kind]++
}

func (t *tally) merge(o *tally) {
	t.hist.Merge(&o.hist)
	t.requests += o.requests
	t.errors += o.errors
	t.conflicts += o.conflicts
	for k, v := range o.kinds {
		if t.kinds == nil {
			t.kinds = map[string]int64{}
		}
		t.kinds[k] += v
	}
	for op, s := range o.subs {
		t.sub(op).merge(s)
	}
}

// observe records one finished request that started at start. A request
// cut off because the scenario's time was up is not counted at all. It
// reports whether the status was want; a 409 is a conflict, not an error,
// when conflictOK.
func (t *tally) observe(ctx context.Context, start time.Time, status int, err error, want int, conflictOK bool, what string) bool {
	if err != nil && ctx.Err() != nil {
		return false
	}
	t.requests++
	t.hist.Record(time.Since(start))
	switch {
	case err != nil:
		t.fail(what + errKind(0, err))
	case status == want:
		return true
	case status == http.StatusConflict && conflictOK:
		t.conflicts++
	default:
		t.fail(what + errKind(status, nil))
	}
	return false
}

// result is one line of the report.
type result struct {
	Scenario  string  `json:"scenario"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	Conflicts int64   `json:"conflicts"`
	Seconds   float64 `json:"seconds"`
	PerSec    float64 `json:"perSec"`
	// OfferedPerSec is the schedule's rate in an open loop (--rate): a
	// PerSec well below it means the requests could not go out on time.
	OfferedPerSec float64 `json:"offeredPerSec,omitempty"`
	P50Ms         float64 `json:"p50Ms"`
	P99Ms         float64 `json:"p99Ms"`
	MaxMs         float64 `json:"maxMs"`
	MeanMs        float64 `json:"meanMs"`
	// ServerCPUPerReqUs is the server's CPU time (user + system) during
	// the scenario divided by its requests, in µs (--server-pid).
	ServerCPUPerReqUs float64          `json:"serverCpuPerReqUs,omitempty"`
	ErrorKinds        map[string]int64 `json:"errorKinds,omitempty"`
	Notes             string           `json:"notes,omitempty"`
	Watch             *watchStats      `json:"watch,omitempty"`
	Mixed             *mixedStats      `json:"mixed,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// newResult summarises a tally; rate is count per elapsed second.
func newResult(name string, t *tally, count int64, elapsed time.Duration) *result {
	r := &result{
		Scenario: name, Requests: t.requests, Errors: t.errors, Conflicts: t.conflicts,
		Seconds: elapsed.Seconds(),
		P50Ms:   ms(t.hist.Quantile(0.50)), P99Ms: ms(t.hist.Quantile(0.99)),
		MaxMs: ms(t.hist.Max()), MeanMs: ms(t.hist.Mean()),
		ErrorKinds: t.kinds,
	}
	if elapsed > 0 {
		r.PerSec = float64(count) / elapsed.Seconds()
	}
	return r
}

// runTimed runs op in n workers until d has passed (or ctx ends) and
// merges their tallies. op does one operation and records it.
//
// With rate 0 the loop is closed: each worker sends its next request as
// soon as the last one is answered, and due is zero. With a rate the loop
// is open: request i is due at start + i/rate, a worker waits for the next
// due request, and op measures latency from when it was due, not from when
// it was sent, so that a request held back because every worker was busy
// counts its wait (no "coordinated omission").
func runTimed(ctx context.Context, n int, d time.Duration, rate float64, op func(ctx context.Context, t *tally, buf *bytes.Buffer, due time.Time)) (*tally, time.Duration) {
	start := time.Now()
	end := start.Add(d)
	sctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	tallies := make([]tally, n)
	var wg sync.WaitGroup
	var next atomic.Int64 // the next request's number, open loop only
	for w := range n {
		wg.Go(func() {
			var buf bytes.Buffer
			if rate <= 0 {
				for sctx.Err() == nil {
					op(sctx, &tallies[w], &buf, time.Time{})
				}
				return
			}
			timer := time.NewTimer(0)
			defer timer.Stop()
			for ctx.Err() == nil {
				due := dueAt(start, next.Add(1)-1, rate)
				if !due.Before(end) {
					return
				}
				if wait := time.Until(due); wait > 0 {
					timer.Reset(wait)
					select {
					case <-timer.C:
					case <-sctx.Done():
					}
				}
				// Every request due before the end is handed to op, even
				// when the worker reaches it late: op does not count one
				// that sctx cut off, and it returns at once.
				op(sctx, &tallies[w], &buf, due)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := &tally{}
	for i := range tallies {
		total.merge(&tallies[i])
	}
	return total, elapsed
}

// dueAt is when request i of an open loop at rate per second starting at
// start is due.
func dueAt(start time.Time, i int64, rate float64) time.Time {
	return start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
}

// sentAt is the start of a request's latency: when it was due in an open
// loop, now in a closed one.
func sentAt(due time.Time) time.Time {
	if due.IsZero() {
		return time.Now()
	}
	return due
}

// preload creates the persons prefix-0 .. prefix-(objects-1) that do not
// exist yet; a 409 means the person is already there.
func preload(ctx context.Context, c *client, cfg *config, stderr io.Writer) (*result, error) {
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, created, existing, failed atomic.Int64
	n := int64(cfg.Objects)
	tallies := make([]tally, cfg.Concurrency)
	start := time.Now()

	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		last, lastAt := int64(0), start
		for {
			select {
			case <-stopProgress:
				return
			case now := <-tick.C:
				done := created.Load() + existing.Load() + failed.Load()
				fmt.Fprintf(stderr, "loadgen: preload %d/%d (created %d, existing %d, errors %d), %.0f/s now, %.0f/s average\n",
					done, n, created.Load(), existing.Load(), failed.Load(),
					float64(done-last)/now.Sub(lastAt).Seconds(), float64(done)/now.Sub(start).Seconds())
				last, lastAt = done, now
			}
		}
	}()

	var wg sync.WaitGroup
	for w := range cfg.Concurrency {
		wg.Go(func() {
			t := &tallies[w]
			for pctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				name := preloadName(cfg.Prefix, int(i))
				body := preloadBody(name, int(i), cfg.PreloadSize)
				rctx, rcancel := context.WithTimeout(pctx, requestTimeout)
				t0 := time.Now()
				status, err := c.do(rctx, http.MethodPost, c.coll, body, nil)
				rcancel()
				if err != nil && pctx.Err() != nil {
					return
				}
				switch ok := t.observe(pctx, t0, status, err, http.StatusCreated, true, ""); {
				case ok:
					created.Add(1)
				case err == nil && status == http.StatusConflict:
					existing.Add(1)
				default:
					// A server that fails most requests will not get better.
					if f := failed.Add(1); f >= 1000 && f > created.Load()+existing.Load() {
						cancel(fmt.Errorf("preload: %d errors (last: %s), giving up", f, errKind(status, err)))
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	<-progressDone

	total := &tally{}
	for i := range tallies {
		total.merge(&tallies[i])
	}
	r := newResult("preload", total, total.requests, elapsed)
	r.Notes = fmt.Sprintf("created=%d existing=%d", created.Load(), existing.Load())
	fmt.Fprintf(stderr, "loadgen: preload done in %s: %d created, %d already there, %d errors (%.0f/s)\n",
		elapsed.Round(time.Millisecond), created.Load(), existing.Load(), failed.Load(), r.PerSec)
	if cause := context.Cause(pctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return r, cause
	}
	return r, ctx.Err()
}

var errNoObjects = errors.New("needs preloaded objects (--objects > 0)")

// runGet reads random preloaded persons.
func runGet(ctx context.Context, c *client, cfg *config) (*result, error) {
	if cfg.Objects == 0 {
		return nil, errNoObjects
	}
	t, elapsed := runTimed(ctx, cfg.Concurrency, cfg.Duration, cfg.Rate, func(ctx context.Context, t *tally, _ *bytes.Buffer, due time.Time) {
		url := c.coll + "/" + preloadName(cfg.Prefix, rand.IntN(cfg.Objects))
		t0 := sentAt(due)
		status, err := c.do(ctx, http.MethodGet, url, nil, nil)
		t.observe(ctx, t0, status, err, http.StatusOK, false, "")
	})
	return newResult("get", t, t.requests, elapsed), nil
}

// runCreate creates new persons with names unique to this run.
func runCreate(ctx context.Context, c *client, cfg *config) (*result, error) {
	var seq atomic.Int64
	t, elapsed := runTimed(ctx, cfg.Concurrency, cfg.Duration, cfg.Rate, func(ctx context.Context, t *tally, _ *bytes.Buffer, due time.Time) {
		i := seq.Add(1)
		name := fmt.Sprintf("%s-c-%s-%d", cfg.Prefix, c.runID, i)
		labels := map[string]string{"team": "t" + strconv.Itoa(rand.IntN(10)), runLabel: c.runID}
		body := personBody(name, int(i), labels, nil)
		t0 := sentAt(due)
		status, err := c.do(ctx, http.MethodPost, c.coll, body, nil)
		t.observe(ctx, t0, status, err, http.StatusCreated, false, "")
	})
	r := newResult("create", t, t.requests, elapsed)
	r.Notes = "names " + cfg.Prefix + "-c-" + c.runID + "-*"
	return r, nil
}

// runUpdate reads a random preloaded person and writes it back with a new
// age and the version it read. One request of the report is this GET+PUT
// cycle, and its latency is the whole cycle. A 409 (someone else wrote
// in between) is a conflict, not an error.
func runUpdate(ctx context.Context, c *client, cfg *config) (*result, error) {
	if cfg.Objects == 0 {
		return nil, errNoObjects
	}
	t, elapsed := runTimed(ctx, cfg.Concurrency, cfg.Duration, cfg.Rate, func(ctx context.Context, t *tally, buf *bytes.Buffer, due time.Time) {
		url := c.coll + "/" + preloadName(cfg.Prefix, rand.IntN(cfg.Objects))
		t0 := sentAt(due)
		status, err := c.do(ctx, http.MethodGet, url, nil, buf)
		if err != nil || status != http.StatusOK {
			t.observe(ctx, t0, status, err, http.StatusOK, false, "get:")
			return
		}
		body, err := withNewAge(buf.Bytes(), 18+rand.IntN(60))
		if err != nil {
			t.requests++
			t.hist.Record(time.Since(t0))
			t.fail("decode")
			return
		}
		status, err = c.do(ctx, http.MethodPut, url, body, nil)
		t.observe(ctx, t0, status, err, http.StatusOK, true, "put:")
	})
	r := newResult("update", t, t.requests, elapsed)
	r.Notes = fmt.Sprintf("GET+PUT cycles; conflicts=%d", t.conflicts)
	return r, nil
}

// withNewAge returns the stored object with spec.age replaced; everything
// else, metadata.version included, is sent back as it was read.
func withNewAge(stored []byte, age int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(stored))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return nil, errors.New("object has no spec")
	}
	spec["age"] = age
	return json.Marshal(obj)
}

// listURL is the list query of the list scenario.
func (c *client) listURL(team, page int) string {
	return c.coll + "?labelSelector=team%3Dt" + strconv.Itoa(team) + "&sort=spec.age,desc&size=20&page=" + strconv.Itoa(page)
}

// runList pages through the persons of random teams, sorted by age.
func runList(ctx context.Context, c *client, cfg *config) (*result, error) {
	// One checked request first, so the report says what a page holds.
	var buf bytes.Buffer
	status, err := c.do(ctx, http.MethodGet, c.listURL(0, 1), nil, &buf)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("list: status %d: %s", status, strings.TrimSpace(buf.String()))
	}
	var page struct {
		Total int64             `json:"total"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(buf.Bytes(), &page); err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	t, elapsed := runTimed(ctx, cfg.Concurrency, cfg.Duration, cfg.Rate, func(ctx context.Context, t *tally, _ *bytes.Buffer, due time.Time) {
		url := c.listURL(rand.IntN(10), 1+rand.IntN(5))
		t0 := sentAt(due)
		status, err := c.do(ctx, http.MethodGet, url, nil, nil)
		t.observe(ctx, t0, status, err, http.StatusOK, false, "")
	})
	r := newResult("list", t, t.requests, elapsed)
	r.Notes = fmt.Sprintf("team t0: total=%d, %d items/page", page.Total, len(page.Items))
	return r, nil
}

// printTable writes one aligned line per result.
func printTable(w io.Writer, results []*result) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(w, "%-12s %9s %7s %9s %9s %9s %9s %15s  %s\n", "scenario", "requests", "errors", "req/s", "p50(ms)", "p99(ms)", "max(ms)", "srv-cpu/req(µs)", "notes")
	for _, r := range results {
		notes := r.Notes
		if len(r.ErrorKinds) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(r.ErrorKinds)) {
				parts = append(parts, fmt.Sprintf("%s×%d", k, r.ErrorKinds[k]))
			}
			notes = strings.TrimSpace(notes + " errors: " + strings.Join(parts, ","))
		}
		cpu := "-"
		if r.ServerCPUPerReqUs > 0 {
			cpu = strconv.FormatFloat(r.ServerCPUPerReqUs, 'f', 1, 64)
		}
		fmt.Fprintf(w, "%-12s %9d %7d %9.1f %9.3f %9.3f %9.3f %15s  %s\n",
			r.Scenario, r.Requests, r.Errors, r.PerSec, r.P50Ms, r.P99Ms, r.MaxMs, cpu, notes)
	}
}
