package watch

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// item is the object type of these tests: a name and a colour the
// subscribers filter on.
type item struct {
	Name  string
	Color string
}

func isRed(i item) bool { return i.Color == "red" }

func create(i item) Change[item] { return Change[item]{New: i, HasNew: true} }
func update(old, new item) Change[item] {
	return Change[item]{Old: old, New: new, HasOld: true, HasNew: true}
}
func remove(i item) Change[item] { return Change[item]{Old: i, HasOld: true} }

// drain reads what is buffered on s.C without waiting and reports whether
// the channel was closed.
func drain(s *Subscription[item]) (got []Event[item], closed bool) {
	for {
		select {
		case ev, ok := <-s.C:
			if !ok {
				return got, true
			}
			got = append(got, ev)
		default:
			return got, false
		}
	}
}

func TestTranslate(t *testing.T) {
	// red1 and red2 are two versions of one red object; the hub is generic
	// and only needs them to differ.
	red1, red2, blue := item{"a", "red"}, item{"a-v2", "red"}, item{"a", "blue"}
	tests := []struct {
		name   string
		match  func(item) bool
		change Change[item]
		want   []Event[item] // nil: not delivered
	}{
		// No filter: the Change shape decides.
		{name: "no filter create", change: create(red1), want: []Event[item]{{Type: Added, Object: red1}}},
		{name: "no filter update", change: update(red1, blue), want: []Event[item]{{Type: Modified, Object: blue}}},
		{name: "no filter delete", change: remove(blue), want: []Event[item]{{Type: Deleted, Object: blue}}},
		{name: "no filter empty change", change: Change[item]{}, want: nil},
		// With a filter.
		{name: "create matching", match: isRed, change: create(red1), want: []Event[item]{{Type: Added, Object: red1}}},
		{name: "create not matching", match: isRed, change: create(blue), want: nil},
		{name: "update still matching", match: isRed, change: update(red1, red2), want: []Event[item]{{Type: Modified, Object: red2}}},
		{name: "update starts matching", match: isRed, change: update(blue, red1), want: []Event[item]{{Type: Added, Object: red1}}},
		{name: "update stops matching carries new object", match: isRed, change: update(red1, blue), want: []Event[item]{{Type: Deleted, Object: blue}}},
		{name: "update never matching", match: isRed, change: update(blue, blue), want: nil},
		{name: "delete matching", match: isRed, change: remove(red1), want: []Event[item]{{Type: Deleted, Object: red1}}},
		{name: "delete not matching", match: isRed, change: remove(blue), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub[item](4)
			s := h.Subscribe(tc.match, nil)
			h.Publish(tc.change)
			got, closed := drain(s)
			if closed {
				t.Fatalf("Publish(%+v): subscription closed (err %v), want it open", tc.change, s.Err())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Publish(%+v):\n got %+v\nwant %+v", tc.change, got, tc.want)
			}
		})
	}
}

func TestFilteredSequence(t *testing.T) {
	// One object's life seen through a "red only" filter: the subscriber's
	// view stays exact.
	h := NewHub[item](16)
	all := h.Subscribe(nil, nil)
	red := h.Subscribe(isRed, nil)
	steps := []Change[item]{
		create(item{"x", "blue"}),
		update(item{"x", "blue"}, item{"x", "red"}),
		update(item{"x", "red"}, item{"x", "red"}),
		update(item{"x", "red"}, item{"x", "green"}),
		update(item{"x", "green"}, item{"x", "red"}),
		remove(item{"x", "red"}),
		create(item{"y", "green"}),
		remove(item{"y", "green"}),
	}
	for _, c := range steps {
		h.Publish(c)
	}
	wantAll := []Event[item]{
		{Type: Added, Object: item{"x", "blue"}}, {Type: Modified, Object: item{"x", "red"}}, {Type: Modified, Object: item{"x", "red"}}, {Type: Modified, Object: item{"x", "green"}},
		{Type: Modified, Object: item{"x", "red"}}, {Type: Deleted, Object: item{"x", "red"}}, {Type: Added, Object: item{"y", "green"}}, {Type: Deleted, Object: item{"y", "green"}},
	}
	wantRed := []Event[item]{
		{Type: Added, Object: item{"x", "red"}}, {Type: Modified, Object: item{"x", "red"}}, {Type: Deleted, Object: item{"x", "green"}},
		{Type: Added, Object: item{"x", "red"}}, {Type: Deleted, Object: item{"x", "red"}},
	}
	for _, c := range []struct {
		name string
		s    *Subscription[item]
		want []Event[item]
	}{{"no filter", all, wantAll}, {"red filter", red, wantRed}} {
		t.Run(c.name, func(t *testing.T) {
			got, closed := drain(c.s)
			if closed || !reflect.DeepEqual(got, c.want) {
				t.Errorf("events (closed=%v):\n got %+v\nwant %+v", closed, got, c.want)
			}
		})
	}
}

func TestInitialEventsFirst(t *testing.T) {
	h := NewHub[item](2)
	// More initial events than the buffer holds: they still all fit.
	initial := []Event[item]{{Type: Added, Object: item{"a", "red"}}, {Type: Added, Object: item{"b", "red"}}, {Type: Added, Object: item{"c", "red"}}}
	s := h.Subscribe(isRed, initial)
	h.Publish(create(item{"d", "red"}))
	h.Publish(create(item{"e", "blue"}))
	h.Publish(update(item{"a", "red"}, item{"a", "blue"}))
	want := append(append([]Event[item]{}, initial...), Event[item]{Type: Added, Object: item{"d", "red"}}, Event[item]{Type: Deleted, Object: item{"a", "blue"}})
	got, closed := drain(s)
	if closed || !reflect.DeepEqual(got, want) {
		t.Errorf("events (closed=%v, err %v):\n got %+v\nwant %+v", closed, s.Err(), got, want)
	}
}

func TestSlowSubscriberDropped(t *testing.T) {
	h := NewHub[item](2)
	slow := h.Subscribe(nil, nil)
	fast := h.Subscribe(nil, nil)
	var fastGot []Event[item]
	for i := range 5 {
		done := make(chan struct{})
		go func() {
			h.Publish(create(item{Name: fmt.Sprint(i)}))
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Publish %d blocked on a full subscriber", i)
		}
		ev, ok := <-fast.C // the fast subscriber keeps up
		if !ok {
			t.Fatalf("fast subscriber closed after %d events: %v", i, fast.Err())
		}
		fastGot = append(fastGot, ev)
	}
	if len(fastGot) != 5 {
		t.Errorf("fast subscriber: got %d events, want 5", len(fastGot))
	}
	for i, ev := range fastGot {
		if want := (Event[item]{Type: Added, Object: item{Name: fmt.Sprint(i)}}); ev != want {
			t.Errorf("fast subscriber event %d: got %+v, want %+v", i, ev, want)
		}
	}
	if err := fast.Err(); err != nil {
		t.Errorf("fast subscriber Err(): got %v, want nil", err)
	}

	// The slow one got what fit in its buffer, then its channel closed.
	got, closed := drain(slow)
	want := []Event[item]{{Type: Added, Object: item{Name: "0"}}, {Type: Added, Object: item{Name: "1"}}}
	if !closed {
		t.Errorf("slow subscriber: channel still open, want it closed")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slow subscriber: got %+v, want the buffered %+v", got, want)
	}
	if err := slow.Err(); !errors.Is(err, ErrSlow) {
		t.Errorf("slow subscriber Err(): got %v, want ErrSlow", err)
	}
	if n := h.Len(); n != 1 {
		t.Errorf("Len() after dropping the slow subscriber: got %d, want 1", n)
	}
	slow.Close() // closing a dropped subscription is harmless and keeps the reason
	if err := slow.Err(); !errors.Is(err, ErrSlow) {
		t.Errorf("slow subscriber Err() after Close: got %v, want ErrSlow", err)
	}
}

func TestFilteredOutEventsDoNotFillBuffer(t *testing.T) {
	h := NewHub[item](1)
	s := h.Subscribe(isRed, nil)
	for range 10 {
		h.Publish(create(item{"b", "blue"}))
	}
	if got, closed := drain(s); closed || len(got) != 0 {
		t.Errorf("after 10 non-matching changes: got %+v (closed=%v, err %v), want nothing and open", got, closed, s.Err())
	}
}

func TestSubscriptionClose(t *testing.T) {
	h := NewHub[item](4)
	s := h.Subscribe(nil, nil)
	other := h.Subscribe(nil, nil)
	h.Publish(create(item{"a", "red"}))
	s.Close()
	s.Close() // twice is fine
	got, closed := drain(s)
	if !closed {
		t.Fatalf("after Close: channel open, want closed")
	}
	if want := []Event[item]{{Type: Added, Object: item{"a", "red"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("after Close: got %+v, want the buffered %+v", got, want)
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err() after Close: got %v, want nil", err)
	}
	if n := h.Len(); n != 1 {
		t.Errorf("Len() after one Close: got %d, want 1", n)
	}
	h.Publish(create(item{"b", "red"})) // must not send on the closed channel
	if got, _ := drain(other); len(got) != 2 {
		t.Errorf("other subscriber: got %d events, want 2", len(got))
	}
}

func TestHubClose(t *testing.T) {
	h := NewHub[item](4)
	subs := []*Subscription[item]{h.Subscribe(nil, nil), h.Subscribe(isRed, nil), h.Subscribe(nil, nil)}
	subs[2].Close()
	if n := h.Len(); n != 2 {
		t.Fatalf("Len(): got %d, want 2", n)
	}
	h.Close()
	if n := h.Len(); n != 0 {
		t.Errorf("Len() after Hub.Close: got %d, want 0", n)
	}
	for i, s := range subs[:2] {
		if _, closed := drain(s); !closed {
			t.Errorf("subscriber %d: channel open after Hub.Close", i)
		}
		if err := s.Err(); !errors.Is(err, ErrClosed) {
			t.Errorf("subscriber %d Err(): got %v, want ErrClosed", i, err)
		}
	}
	if err := subs[2].Err(); err != nil {
		t.Errorf("subscriber closed before Hub.Close: Err() = %v, want nil (it was closed by its owner)", err)
	}
	h.Close() // twice is fine
	h.Publish(create(item{"a", "red"}))

	t.Run("subscribe after close", func(t *testing.T) {
		initial := []Event[item]{{Type: Added, Object: item{"a", "red"}}}
		s := h.Subscribe(nil, initial)
		got, closed := drain(s)
		if !closed {
			t.Errorf("Subscribe after Hub.Close: channel open, want closed")
		}
		if !reflect.DeepEqual(got, initial) {
			t.Errorf("Subscribe after Hub.Close: got %+v, want the initial %+v", got, initial)
		}
		if err := s.Err(); !errors.Is(err, ErrClosed) {
			t.Errorf("Subscribe after Hub.Close: Err() = %v, want ErrClosed", err)
		}
		if n := h.Len(); n != 0 {
			t.Errorf("Len(): got %d, want 0", n)
		}
		s.Close()
		if err := s.Err(); !errors.Is(err, ErrClosed) {
			t.Errorf("Close after Hub.Close: Err() = %v, want ErrClosed kept", err)
		}
	})
}

func TestLen(t *testing.T) {
	h := NewHub[item](0) // buffer below 1 is raised to 1
	if n := h.Len(); n != 0 {
		t.Fatalf("new hub Len(): got %d, want 0", n)
	}
	var subs []*Subscription[item]
	for i := range 3 {
		subs = append(subs, h.Subscribe(nil, nil))
		if n := h.Len(); n != i+1 {
			t.Errorf("after %d Subscribe: Len() = %d", i+1, n)
		}
	}
	h.Publish(create(item{"a", ""}))
	for i, s := range subs {
		if got, closed := drain(s); closed || len(got) != 1 {
			t.Errorf("buffer 0 hub, subscriber %d: got %+v closed=%v, want one event (buffer raised to 1)", i, got, closed)
		}
	}
	for i, s := range subs {
		s.Close()
		if n := h.Len(); n != len(subs)-i-1 {
			t.Errorf("after %d Close: Len() = %d, want %d", i+1, n, len(subs)-i-1)
		}
	}
}

// TestConcurrent is meant for -race: the committer publishes while
// clients come and go and read.
func TestConcurrent(t *testing.T) {
	h := NewHub[item](8)
	stop := make(chan struct{})
	var pub sync.WaitGroup
	pub.Add(2)
	for p := range 2 {
		go func() {
			defer pub.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				h.Publish(update(item{fmt.Sprint(p), "red"}, item{fmt.Sprint(p), []string{"red", "blue"}[i%2]}))
			}
		}()
	}
	var clients sync.WaitGroup
	for c := range 8 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for i := range 50 {
				var match func(item) bool
				if (c+i)%2 == 0 {
					match = isRed
				}
				s := h.Subscribe(match, []Event[item]{{Type: Added, Object: item{"init", "red"}}})
				for range i % 4 {
					if _, ok := <-s.C; !ok {
						break
					}
				}
				_ = h.Len()
				s.Close()
				for range s.C { // closed: drains and ends
				}
				if err := s.Err(); err != nil && !errors.Is(err, ErrSlow) {
					t.Errorf("Err() after Close: got %v, want nil or ErrSlow", err)
				}
			}
		}()
	}
	clients.Wait()
	late := h.Subscribe(nil, nil)
	closer := make(chan struct{})
	go func() { h.Close(); close(closer) }()
	<-closer
	close(stop)
	pub.Wait()
	for range late.C {
	}
	if err := late.Err(); err != nil && !errors.Is(err, ErrSlow) && !errors.Is(err, ErrClosed) {
		t.Errorf("late subscriber Err(): got %v", err)
	}
	if n := h.Len(); n != 0 {
		t.Errorf("Len() after Hub.Close: got %d, want 0", n)
	}
}

// A subscriber resumes after the last revision it saw: it gets exactly
// the later changes it matches, then live ones; once the ring has
// dropped what it needs, it is told to list again.
func TestSubscribeAfterReplaysHistory(t *testing.T) {
	h := NewHub[item](4)
	h.Since(10)
	for i, color := range []string{"red", "blue", "red"} {
		h.Publish(Change[item]{New: item{fmt.Sprint(i), color}, HasNew: true, Rev: int64(11 + i)})
	}
	red := func(it item) bool { return it.Color == "red" }
	s, err := h.SubscribeAfter(red, 11)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-s.C; ev.Object.Name != "2" || ev.Rev != 13 || ev.Type != Added {
		t.Fatalf("replayed %+v, want object 2 at revision 13", ev)
	}
	h.Publish(Change[item]{New: item{"3", "red"}, HasNew: true, Rev: 14})
	if ev := <-s.C; ev.Object.Name != "3" || ev.Rev != 14 {
		t.Fatalf("live %+v, want object 3 at 14", ev)
	}
	if _, err := h.SubscribeAfter(red, 9); !errors.Is(err, ErrTooOld) {
		t.Fatalf("before the history: %v, want ErrTooOld", err)
	}
	h.Publish(Change[item]{New: item{"4", "red"}, HasNew: true, Rev: 15}) // the ring drops 11
	if _, err := h.SubscribeAfter(red, 10); !errors.Is(err, ErrTooOld) {
		t.Fatalf("after 10 once 11 is dropped: %v, want ErrTooOld", err)
	}
	s2, err := h.SubscribeAfter(nil, 11)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int64{12, 13, 14, 15} {
		if ev := <-s2.C; ev.Rev != want {
			t.Fatalf("replayed revision %d, want %d", ev.Rev, want)
		}
	}
}

// events yields n initial Added events named i0, i1, …, counting how many
// it was asked for.
func events(n int, asked *atomic.Int64) func(yield func(Event[item]) bool) error {
	return func(yield func(Event[item]) bool) error {
		for i := range n {
			asked.Store(int64(i + 1))
			if !yield(Event[item]{Type: Added, Object: item{fmt.Sprint("i", i), "red"}}) {
				return nil
			}
		}
		return nil
	}
}

// TestSubscribeFromStreamsTheInitialEvents: initial events are produced
// as the subscriber takes them, through a channel whose room does not
// grow with them, and changes published meanwhile follow them in order.
func TestSubscribeFromStreamsTheInitialEvents(t *testing.T) {
	h := NewHub[item](4)
	var asked atomic.Int64
	s := h.SubscribeFrom(isRed, events(10_000, &asked))
	defer s.Close()
	if c := cap(s.C); c > 4 {
		t.Fatalf("cap(C) = %d for 10,000 initial events and a buffer of 4", c)
	}
	h.Publish(create(item{"d", "red"}))
	h.Publish(create(item{"e", "blue"}))
	time.Sleep(20 * time.Millisecond)
	if asked.Load() > 4+2 {
		t.Errorf("%d initial events produced before the subscriber took one", asked.Load())
	}
	for i := range 10_000 {
		ev := <-s.C
		if ev.Object.Name != fmt.Sprint("i", i) || ev.Type != Added {
			t.Fatalf("initial event %d = %+v", i, ev)
		}
	}
	if ev := <-s.C; ev.Object.Name != "d" || ev.Type != Added {
		t.Fatalf("after the initial events: %+v, want d added", ev)
	}
	h.Publish(update(item{"d", "red"}, item{"d", "blue"}))
	if ev := <-s.C; ev.Object.Name != "d" || ev.Type != Deleted {
		t.Fatalf("a later change: %+v, want d deleted", ev)
	}
}

// TestSubscribeFromClosedMidway: a subscriber that closes while initial
// events are still coming stops their production; C is closed.
func TestSubscribeFromClosedMidway(t *testing.T) {
	h := NewHub[item](4)
	ended := make(chan struct{})
	s := h.SubscribeFrom(nil, func(yield func(Event[item]) bool) error {
		defer close(ended)
		for i := 0; ; i++ {
			if !yield(Event[item]{Type: Added, Object: item{fmt.Sprint("i", i), "red"}}) {
				return nil
			}
		}
	})
	<-s.C
	s.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the initial events went on after Close")
	}
	for range s.C { // closed once the pump stops
	}
	if err := s.Err(); err != nil || h.Len() != 0 {
		t.Errorf("Err = %v, %d subscribers", err, h.Len())
	}
}

// TestSubscribeFromDroppedWhileListing: more changes than the buffer holds
// while the initial events are taken drop the subscriber with ErrSlow,
// after what it was sent; and Close afterwards still releases the pump.
func TestSubscribeFromDroppedWhileListing(t *testing.T) {
	h := NewHub[item](2)
	var asked atomic.Int64
	s := h.SubscribeFrom(nil, events(1000, &asked))
	for i := range 3 {
		h.Publish(create(item{fmt.Sprint("late", i), "red"}))
	}
	n := 0
	for range s.C {
		n++
	}
	if !errors.Is(s.Err(), ErrSlow) || n > 3 {
		t.Errorf("Err = %v after %d events, want ErrSlow after at most the 2 the buffer held and the one the pump had in hand", s.Err(), n)
	}
	s.Close()

	// Dropped, then closed by a subscriber that stopped reading.
	s = h.SubscribeFrom(nil, events(1000, &asked))
	for i := range 3 {
		h.Publish(create(item{fmt.Sprint("late", i), "red"}))
	}
	<-s.C
	s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := <-s.C; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("C still open after Close")
		}
	}
}

// TestSubscribeFromErrorLeavesNoSubscriber: however fast the initial
// events fail, the subscription ends and leaves the hub (it used to be
// added after its pump started, so a pump that had already dropped it
// left a dead subscriber behind), and a hub already closed ends it too.
func TestSubscribeFromErrorLeavesNoSubscriber(t *testing.T) {
	h := NewHub[item](4)
	boom := errors.New("boom")
	for i := range 2000 {
		s := h.SubscribeFrom(nil, func(func(Event[item]) bool) error { return boom })
		for range s.C {
		}
		if !errors.Is(s.Err(), boom) || h.Len() != 0 {
			t.Fatalf("round %d: Err %v, %d subscribers left", i, s.Err(), h.Len())
		}
	}
	h.Close()
	s := h.SubscribeFrom(nil, func(func(Event[item]) bool) error { return nil })
	for range s.C {
	}
	if !errors.Is(s.Err(), ErrClosed) || h.Len() != 0 {
		t.Errorf("on a closed hub: Err %v, %d subscribers", s.Err(), h.Len())
	}
}

// TestSubscribeFromError: an error from the initial events ends the
// subscription with it.
func TestSubscribeFromError(t *testing.T) {
	h := NewHub[item](4)
	boom := errors.New("boom")
	s := h.SubscribeFrom(nil, func(yield func(Event[item]) bool) error {
		yield(Event[item]{Type: Added, Object: item{"a", "red"}})
		return boom
	})
	defer s.Close()
	var got []string
	for ev := range s.C {
		got = append(got, ev.Object.Name)
	}
	if !errors.Is(s.Err(), boom) || len(got) != 1 || h.Len() != 0 {
		t.Errorf("events %v, Err %v, %d subscribers", got, s.Err(), h.Len())
	}
}
