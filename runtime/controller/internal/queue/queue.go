package queue

import (
	"container/heap"
	"sync"
	"time"
)

// Queue is a de-duplicating, rate-limited queue of names. Create it with
// New; it is safe for concurrent use.
type Queue struct {
	base, max time.Duration
	now       func() time.Time

	mu         sync.Mutex
	cond       sync.Cond
	ready      []string            // FIFO of names to hand out
	dirty      map[string]struct{} // names waiting to be handed out (in ready, or to be re-added by Done)
	dirtyPeak  int                 // the most names dirty held since it was last made afresh
	processing map[string]struct{} // names handed out and not yet Done
	failures   map[string]int
	waiting    waitHeap // delayed adds, earliest first
	waitByName map[string]*waitItem
	timer      *time.Timer // fires at the earliest delayed add
	shutdown   bool
}

// shrinkAfter is how many names the dirty set must have held before it is
// made afresh once empty.
const shrinkAfter = 1024

// New returns a queue whose retries wait base, 2·base, 4·base, … up to max.
// A non-positive base is one millisecond; a max below base is base.
func New(base, maxDelay time.Duration) *Queue {
	if base <= 0 {
		base = time.Millisecond
	}
	q := &Queue{
		base:       base,
		max:        max(maxDelay, base),
		now:        time.Now,
		dirty:      map[string]struct{}{},
		processing: map[string]struct{}{},
		failures:   map[string]int{},
		waitByName: map[string]*waitItem{},
	}
	q.cond.L = &q.mu
	return q
}

// Add queues name unless it is already waiting. A name being processed is
// handed out again after its Done. After ShutDown, Add does nothing.
func (q *Queue) Add(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(name)
}

func (q *Queue) addLocked(name string) {
	if q.shutdown {
		return
	}
	if _, ok := q.dirty[name]; ok {
		return
	}
	q.dirty[name] = struct{}{}
	q.dirtyPeak = max(q.dirtyPeak, len(q.dirty))
	if _, ok := q.processing[name]; ok {
		return // Done re-queues it
	}
	q.ready = append(q.ready, name)
	q.cond.Signal()
}

// AddAfter adds name once d has passed (at once if d <= 0). If name already
// has a delayed add, the earlier of the two is kept.
func (q *Queue) AddAfter(name string, d time.Duration) {
	if d <= 0 {
		q.Add(name)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	at := q.now().Add(d)
	if it, ok := q.waitByName[name]; ok {
		if at.Before(it.at) {
			it.at = at
			heap.Fix(&q.waiting, it.index)
			q.armLocked()
		}
		return
	}
	it := &waitItem{name: name, at: at}
	heap.Push(&q.waiting, it)
	q.waitByName[name] = it
	q.armLocked()
}

// AddRateLimited counts a failure of name and adds it after the backoff
// that count earns.
func (q *Queue) AddRateLimited(name string) {
	q.AddAfter(name, q.When(name))
}

// When counts a failure of name and returns its backoff: base·2^(n-1) for
// the n-th failure since the last Forget, capped at the maximum.
func (q *Queue) When(name string) time.Duration {
	q.mu.Lock()
	q.failures[name]++
	n := q.failures[name]
	q.mu.Unlock()
	return backoff(q.base, q.max, n)
}

// Forget resets the failure count of name.
func (q *Queue) Forget(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.failures, name)
}

// Failures returns how many failures of name are counted.
func (q *Queue) Failures(name string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[name]
}

// Get blocks until a name is ready and marks it as being processed; the
// caller must call Done with it. shutdown is true once ShutDown was called,
// even if names were still waiting.
func (q *Queue) Get() (name string, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.ready) == 0 && !q.shutdown {
		q.cond.Wait()
	}
	if q.shutdown {
		return "", true
	}
	name = q.ready[0]
	q.ready[0] = ""
	q.ready = q.ready[1:]
	if len(q.ready) == 0 {
		q.ready = nil // the emptied slice would keep its array (room for every name of a first pass)
	}
	delete(q.dirty, name)
	if len(q.dirty) == 0 && q.dirtyPeak > shrinkAfter {
		// A Go map never shrinks: after the first pass over every object
		// it would hold room for all of them for good.
		q.dirty, q.dirtyPeak = map[string]struct{}{}, 0
	}
	q.processing[name] = struct{}{}
	return name, false
}

// Done ends the processing of name; if it was added meanwhile, it is
// queued again.
func (q *Queue) Done(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, name)
	if _, ok := q.dirty[name]; ok && !q.shutdown {
		q.ready = append(q.ready, name)
		q.cond.Signal()
	}
}

// Len returns how many names are ready to be handed out (delayed adds and
// names being processed are not counted).
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ready)
}

// ShutDown drops every waiting and delayed name and wakes every Get, which
// then reports shutdown. Later adds are ignored.
func (q *Queue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	q.ready = nil
	clear(q.dirty)
	q.waiting = nil
	clear(q.waitByName)
	if q.timer != nil {
		q.timer.Stop()
	}
	q.cond.Broadcast()
}

// ShuttingDown reports whether ShutDown was called.
func (q *Queue) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shutdown
}

// armLocked points the timer at the earliest delayed add. A timer (rather
// than a goroutine) keeps the queue free of goroutines to own and stop.
func (q *Queue) armLocked() {
	if len(q.waiting) == 0 {
		if q.timer != nil {
			q.timer.Stop()
		}
		return
	}
	d := q.waiting[0].at.Sub(q.now())
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.fire)
		return
	}
	q.timer.Reset(d)
}

// fire moves the delayed adds that are due to the ready list. A stale
// firing (the timer was reset meanwhile) finds nothing due and re-arms.
func (q *Queue) fire() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	now := q.now()
	for len(q.waiting) > 0 && !q.waiting[0].at.After(now) {
		it := heap.Pop(&q.waiting).(*waitItem)
		delete(q.waitByName, it.name)
		q.addLocked(it.name)
	}
	q.armLocked()
}

// backoff returns base·2^(n-1) capped at max, without overflowing.
func backoff(base, maxDelay time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n; i++ {
		if d >= maxDelay/2 {
			return maxDelay
		}
		d *= 2
	}
	return min(d, maxDelay)
}

type waitItem struct {
	name  string
	at    time.Time
	index int
}

// waitHeap orders delayed adds by time (container/heap).
type waitHeap []*waitItem

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *waitHeap) Push(x any) {
	it := x.(*waitItem)
	it.index = len(*h)
	*h = append(*h, it)
}

func (h *waitHeap) Pop() any {
	old := *h
	n := len(old)
	it := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return it
}
