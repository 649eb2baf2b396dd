package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"
)

// recordDues runs runTimed with an op that records the due time it is
// handed, sleeping busy in each call.
func recordDues(t *testing.T, n int, d time.Duration, rate float64, busy time.Duration) []time.Time {
	t.Helper()
	var mu sync.Mutex
	var dues []time.Time
	tl, _ := runTimed(context.Background(), n, d, rate, func(ctx context.Context, tl *tally, _ *bytes.Buffer, due time.Time) {
		mu.Lock()
		dues = append(dues, due)
		mu.Unlock()
		tl.requests++
		time.Sleep(busy)
	})
	if tl.requests != int64(len(dues)) {
		t.Fatalf("merged tally counts %d requests, op saw %d", tl.requests, len(dues))
	}
	slices.SortFunc(dues, func(a, b time.Time) int { return a.Compare(b) })
	return dues
}

// checkSchedule asserts that dues are exactly want requests, interval
// apart.
func checkSchedule(t *testing.T, dues []time.Time, want int, interval time.Duration) {
	t.Helper()
	if len(dues) != want {
		t.Fatalf("%d requests were due, want %d", len(dues), want)
	}
	for i, due := range dues {
		if got := due.Sub(dues[0]); got != time.Duration(i)*interval {
			t.Fatalf("request %d due %v after the first, want %v", i, got, time.Duration(i)*interval)
		}
	}
}

func TestOpenLoopSendsEveryRequestOnSchedule(t *testing.T) {
	// 500/s for 200 ms: requests 0..99, 2 ms apart, spread over 4 workers.
	checkSchedule(t, recordDues(t, 4, 200*time.Millisecond, 500, 0), 100, 2*time.Millisecond)
}

// TestOpenLoopKeepsScheduleWhenBehind: a single worker whose requests take
// 30 ms cannot keep a 10 ms schedule, and the schedule does not slide
// with it: each request keeps its due time, so its latency (from sentAt)
// includes the time it waited for the worker.
func TestOpenLoopKeepsScheduleWhenBehind(t *testing.T) {
	dues := recordDues(t, 1, 100*time.Millisecond, 100, 30*time.Millisecond)
	checkSchedule(t, dues, 10, 10*time.Millisecond)
	if got := sentAt(dues[9]); !got.Equal(dues[9]) {
		t.Fatalf("sentAt(due) = %v, want the due time %v", got, dues[9])
	}
}

func TestClosedLoopHasNoSchedule(t *testing.T) {
	dues := recordDues(t, 2, 30*time.Millisecond, 0, time.Millisecond)
	if len(dues) == 0 {
		t.Fatal("no requests in 30 ms")
	}
	for _, due := range dues {
		if !due.IsZero() {
			t.Fatalf("closed loop handed op a due time %v", due)
		}
	}
	before := time.Now()
	if got := sentAt(time.Time{}); got.Before(before) {
		t.Fatalf("sentAt(zero) = %v, want now", got)
	}
}

func TestParseFlagsRate(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want float64
		ok   bool
	}{{"0", 0, true}, {"2500.5", 2500.5, true}, {"-1", 0, false}, {"NaN", 0, false}, {"+Inf", 0, false}, {"2e6", 0, false}} {
		cfg, err := parseFlags([]string{"--rate", c.arg}, io.Discard)
		switch {
		case c.ok && err != nil:
			t.Errorf("--rate %s: %v", c.arg, err)
		case c.ok && cfg.Rate != c.want:
			t.Errorf("--rate %s: rate %v, want %v", c.arg, cfg.Rate, c.want)
		case !c.ok && err == nil:
			t.Errorf("--rate %s: accepted, want an error", c.arg)
		}
	}
}
