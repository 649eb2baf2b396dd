package main

import (
	"context"
	"testing"
	"time"
)

// fakeTicks runs paceWith at 1000/s on a clock that moves step per tick,
// for ticks ticks, and returns what was sent and skipped.
func fakeTicks(t *testing.T, ticks int, step time.Duration, send func(n int) bool) (sent []int, skipped int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// paceWith reads the clock once at its start and once per tick, in
	// its own goroutine: a sequence it pops needs no lock.
	calls := 0
	now := func() time.Time {
		k := min(calls, ticks)
		calls++
		return time.Unix(0, 0).Add(time.Duration(k) * step)
	}
	ch := make(chan time.Time)
	done := make(chan int64)
	go func() {
		done <- paceWith(ctx, 1000, ch, now, func(n int) bool {
			if !send(n) {
				return false
			}
			sent = append(sent, n)
			return true
		})
	}()
	// One tick more than asked, at the same time as the last: once it is
	// taken, the last tick's writes are sent.
	for range ticks + 1 {
		ch <- time.Time{}
	}
	cancel()
	return sent, <-done
}

// A loop that sees one tick per 10 ms (the other nine dropped by a busy
// machine) still sends the ten writes each 10 ms is due.
func TestPaceSendsWhatIsDueWhenTicksAreMissed(t *testing.T) {
	sent, skipped := fakeTicks(t, 30, 10*time.Millisecond, func(int) bool { return true })
	if len(sent) != 300 || skipped != 0 {
		t.Fatalf("sent %d, skipped %d after 300ms at 1000/s: want 300, 0", len(sent), skipped)
	}
	for i, n := range sent {
		if n != i+1 {
			t.Fatalf("write %d sent as %d", i+1, n)
		}
	}
}

// What cannot be sent is counted as skipped, and the schedule goes on.
func TestPaceCountsWhatItCouldNotSend(t *testing.T) {
	sent, skipped := fakeTicks(t, 30, 10*time.Millisecond, func(n int) bool { return n%10 != 5 })
	// Per tick: writes 1-4 sent, 5 refused, 6-10 skipped with it.
	if len(sent) != 120 || skipped != 180 {
		t.Fatalf("sent %d, skipped %d: want 120, 180", len(sent), skipped)
	}
}

func TestPaceRealClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	n := 0
	start := time.Now()
	pace(ctx, 500, func(int) bool { n++; return true })
	// A loaded machine may see the deadline late: bound by what was due
	// when pace returned, not by the 200 ms asked for.
	if due := int(time.Since(start).Seconds()*500) + 1; n < 50 || n > due {
		t.Fatalf("sent %d in %v at 500/s (due %d)", n, time.Since(start), due)
	}
}
