package queue

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// wait is how long a test waits for something that should happen at once;
// generous, because a loaded 2-core machine can stall a goroutine.
const wait = 10 * time.Second

// get calls q.Get with a deadline.
func get(t *testing.T, q *Queue) string {
	t.Helper()
	type res struct {
		name     string
		shutdown bool
	}
	c := make(chan res, 1)
	go func() {
		n, s := q.Get()
		c <- res{n, s}
	}()
	select {
	case r := <-c:
		if r.shutdown {
			t.Fatal("Get reported shutdown")
		}
		return r.name
	case <-time.After(wait):
		t.Fatal("Get did not return")
	}
	return ""
}

func TestDedup(t *testing.T) {
	q := New(time.Millisecond, time.Second)
	defer q.ShutDown()
	for _, n := range []string{"a", "b", "a", "a", "c", "b"} {
		q.Add(n)
	}
	if got := q.Len(); got != 3 {
		t.Fatalf("Len after adding a,b,a,a,c,b = %d, want 3", got)
	}
	for _, want := range []string{"a", "b", "c"} {
		if got := get(t, q); got != want {
			t.Fatalf("Get = %q, want %q (FIFO)", got, want)
		}
		q.Done(want)
	}
	if got := q.Len(); got != 0 {
		t.Fatalf("Len at the end = %d, want 0", got)
	}
}

func TestReAddWhileProcessing(t *testing.T) {
	q := New(time.Millisecond, time.Second)
	defer q.ShutDown()
	q.Add("a")
	if got := get(t, q); got != "a" {
		t.Fatalf("Get = %q, want a", got)
	}
	// Added twice while being processed: not handed out meanwhile, once after.
	q.Add("a")
	q.Add("a")
	if got := q.Len(); got != 0 {
		t.Fatalf("Len while a is processed = %d, want 0", got)
	}
	q.Add("b")
	if got := get(t, q); got != "b" {
		t.Fatalf("Get = %q, want b (a is still being processed)", got)
	}
	q.Done("b")
	q.Done("a")
	if got := q.Len(); got != 1 {
		t.Fatalf("Len after Done(a) = %d, want 1", got)
	}
	if got := get(t, q); got != "a" {
		t.Fatalf("Get = %q, want a again", got)
	}
	q.Done("a")
	if got := q.Len(); got != 0 {
		t.Fatalf("Len at the end = %d, want 0", got)
	}
}

// TestNoConcurrentProcessing hammers a few names from many adders and
// workers and checks that no name is ever held by two workers.
func TestNoConcurrentProcessing(t *testing.T) {
	q := New(time.Millisecond, time.Second)
	names := []string{"a", "b", "c", "d"}
	var (
		mu       sync.Mutex
		busy     = map[string]bool{}
		overlaps atomic.Int64
		handled  atomic.Int64
	)
	var workers sync.WaitGroup
	for range 8 {
		workers.Go(func() {
			for {
				n, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				if busy[n] {
					overlaps.Add(1)
				}
				busy[n] = true
				mu.Unlock()
				time.Sleep(10 * time.Microsecond)
				mu.Lock()
				busy[n] = false
				mu.Unlock()
				handled.Add(1)
				q.Done(n)
			}
		})
	}
	var adders sync.WaitGroup
	for i := range 8 {
		adders.Go(func() {
			for j := range 2000 {
				q.Add(names[(i+j)%len(names)])
			}
		})
	}
	adders.Wait()
	deadline := time.Now().Add(wait)
	for q.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	q.ShutDown()
	workers.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d times a name was processed by two workers at once", n)
	}
	if handled.Load() == 0 {
		t.Fatal("nothing was processed")
	}
}

func TestBackoff(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name      string
		base, max time.Duration
		n         int
		want      time.Duration
	}{
		{"first", 5 * ms, 30 * time.Second, 1, 5 * ms},
		{"second", 5 * ms, 30 * time.Second, 2, 10 * ms},
		{"fifth", 5 * ms, 30 * time.Second, 5, 80 * ms},
		{"capped", 5 * ms, 30 * time.Second, 20, 30 * time.Second},
		{"huge count does not overflow", 5 * ms, 30 * time.Second, 10000, 30 * time.Second},
		{"max not a power of two", 5 * ms, 12 * ms, 3, 12 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := backoff(c.base, c.max, c.n); got != c.want {
				t.Fatalf("backoff(%v, %v, %d) = %v, want %v", c.base, c.max, c.n, got, c.want)
			}
		})
	}
}

func TestWhenGrowsAndForgetResets(t *testing.T) {
	q := New(5*time.Millisecond, 40*time.Millisecond)
	defer q.ShutDown()
	var got []time.Duration
	for range 5 {
		got = append(got, q.When("a"))
	}
	want := []time.Duration{5, 10, 20, 40, 40}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("When after %d failures: %v, want %v ms", i+1, got, want)
		}
	}
	if d := q.When("b"); d != 5*time.Millisecond {
		t.Fatalf("When(b) = %v, want 5ms: backoff is per name", d)
	}
	if n := q.Failures("a"); n != 5 {
		t.Fatalf("Failures(a) = %d, want 5", n)
	}
	q.Forget("a")
	if n := q.Failures("a"); n != 0 {
		t.Fatalf("Failures(a) after Forget = %d, want 0", n)
	}
	if d := q.When("a"); d != 5*time.Millisecond {
		t.Fatalf("When(a) after Forget = %v, want 5ms", d)
	}
}

func TestAddRateLimited(t *testing.T) {
	q := New(20*time.Millisecond, time.Second)
	defer q.ShutDown()
	start := time.Now()
	q.AddRateLimited("a")
	if got := get(t, q); got != "a" {
		t.Fatalf("Get = %q, want a", got)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("a came back after %v, before its 20ms backoff", el)
	}
	q.Done("a")
}

func TestAddAfter(t *testing.T) {
	q := New(time.Millisecond, time.Second)
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("late", 300*time.Millisecond)
	q.AddAfter("soon", 30*time.Millisecond)
	q.AddAfter("now", 0)
	if got := q.Len(); got != 1 {
		t.Fatalf("Len right after the adds = %d, want 1 (only the undelayed one)", got)
	}
	for _, want := range []string{"now", "soon", "late"} {
		if got := get(t, q); got != want {
			t.Fatalf("Get = %q, want %q", got, want)
		}
		q.Done(want)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("late came back after %v, before its 300ms delay", el)
	}
}

func TestAddAfterKeepsEarliest(t *testing.T) {
	q := New(time.Millisecond, time.Second)
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("a", time.Hour)
	q.AddAfter("a", 20*time.Millisecond)
	q.AddAfter("a", time.Hour) // later: ignored
	if got := get(t, q); got != "a" {
		t.Fatalf("Get = %q, want a", got)
	}
	if el := time.Since(start); el > wait {
		t.Fatalf("a came back after %v; the earliest delay was 20ms", el)
	}
	q.Done("a")
	q.mu.Lock()
	n := len(q.waiting)
	q.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d delayed adds remain, want 0 (one per name)", n)
	}
}

func TestDelayedAddOfQueuedNameIsDeduplicated(t *testing.T) {
	q := New(time.Millisecond, time.Second)
	defer q.ShutDown()
	q.Add("a")
	q.AddAfter("a", 10*time.Millisecond)
	deadline := time.Now().Add(wait)
	for {
		q.mu.Lock()
		n := len(q.waiting)
		q.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delayed add never fired")
		}
		time.Sleep(time.Millisecond)
	}
	if got := q.Len(); got != 1 {
		t.Fatalf("Len = %d, want 1: a was already waiting", got)
	}
}

func TestShutDown(t *testing.T) {
	t.Run("wakes blocked getters", func(t *testing.T) {
		q := New(time.Millisecond, time.Second)
		results := make(chan bool, 4)
		for range 4 {
			go func() {
				_, shutdown := q.Get()
				results <- shutdown
			}()
		}
		q.ShutDown()
		for range 4 {
			select {
			case s := <-results:
				if !s {
					t.Fatal("a blocked Get returned a name after ShutDown of an empty queue")
				}
			case <-time.After(wait):
				t.Fatal("Get did not return after ShutDown")
			}
		}
	})
	t.Run("drains nothing", func(t *testing.T) {
		q := New(time.Millisecond, time.Second)
		q.Add("a")
		q.Add("b")
		q.AddAfter("c", time.Millisecond)
		if got := get(t, q); got != "a" {
			t.Fatalf("Get = %q, want a", got)
		}
		q.Add("a") // re-added while processing
		q.ShutDown()
		if n, s := q.Get(); !s {
			t.Fatalf("Get after ShutDown = %q, want shutdown (b was waiting)", n)
		}
		q.Done("a") // allowed after ShutDown; does not re-queue a
		q.Add("y")
		q.AddAfter("z", time.Millisecond)
		time.Sleep(20 * time.Millisecond) // let c's and z's delays pass
		if got := q.Len(); got != 0 {
			t.Fatalf("Len after ShutDown = %d, want 0", got)
		}
		if n, s := q.Get(); !s {
			t.Fatalf("Get after ShutDown = %q, want shutdown", n)
		}
		if !q.ShuttingDown() {
			t.Fatal("ShuttingDown = false after ShutDown")
		}
	})
}

// TestDrainedQueueReturnsItsRoom: a first pass queues every object's name
// at once; once they are all handed out and done, the queue holds no room
// for them (a Go map keeps its size when emptied).
func TestDrainedQueueReturnsItsRoom(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	q := New(time.Millisecond, time.Second)
	names := make([]string, 100_000)
	for i := range names {
		names[i] = fmt.Sprint("object-", i)
	}
	before := heap()
	for _, n := range names {
		q.Add(n)
	}
	for range names {
		n, _ := q.Get()
		q.Done(n)
	}
	if grew := int64(heap()) - int64(before); grew > 256<<10 {
		t.Errorf("the drained queue still holds %d KB", grew>>10)
	}
	runtime.KeepAlive(names)
	q.Add("again") // still works
	if n, _ := q.Get(); n != "again" {
		t.Errorf("Get = %q after the queue was drained", n)
	}
}
