package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestSettledWaitsForTheStartAndItsAllocations: the start-up release waits
// for every part to start and then for a tick that allocated little (the
// controllers' first pass is over), and gives up waiting after wait.
func TestSettledWaitsForTheStartAndItsAllocations(t *testing.T) {
	const tick = time.Millisecond
	var started atomic.Bool
	var ticks atomic.Int64 // ticks seen since started
	busy := int64(20)      // ticks of heavy allocation once started
	allocated := func() uint64 {
		n := ticks.Add(1)
		return uint64(min(n, busy)) * 2 * settleBytes
	}
	go func() {
		time.Sleep(20 * tick)
		started.Store(true)
	}()
	begin := time.Now()
	if !settled(context.Background(), started.Load, allocated, tick, time.Minute) {
		t.Fatal("settled = false without a cancelled context")
	}
	if !started.Load() {
		t.Fatal("settled before the start")
	}
	if n := ticks.Load(); n < busy+1 {
		t.Fatalf("settled after %d ticks of a start allocating for %d", n, busy)
	}
	if time.Since(begin) > 10*time.Second {
		t.Fatal("settled took far too long")
	}

	// A start that never settles is released after wait.
	never := func() uint64 { return uint64(ticks.Add(1)) * 2 * settleBytes }
	begin = time.Now()
	if !settled(context.Background(), func() bool { return true }, never, tick, 50*time.Millisecond) {
		t.Fatal("settled = false at its deadline")
	}
	if d := time.Since(begin); d < 50*time.Millisecond {
		t.Fatalf("settled after %v, before its deadline", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if settled(ctx, func() bool { return false }, never, tick, time.Minute) {
		t.Fatal("settled = true for a cancelled context")
	}
}
