package watch

import (
	"errors"
	"sync"
)

// EventType is the kind of a watch event, as on the wire.
type EventType string

// Event types.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Event is what a subscriber receives. Rev is the revision of the change
// (0 where the publisher does not number its changes).
type Event[T any] struct {
	Type   EventType
	Object T
	Rev    int64
}

// Change is a committed change of one object: Old is absent for a create
// and New for a final removal. Rev numbers it; a publisher that numbers
// its changes publishes them in increasing order.
type Change[T any] struct {
	Old, New       T
	HasOld, HasNew bool
	Rev            int64
}

// ErrTooOld is a resume from a revision the hub no longer holds the
// changes after: the subscriber must list again and watch from there.
var ErrTooOld = errors.New("watch: revision too old; list again and watch from the list's revision")

// ErrSlow is reported for a subscriber dropped because its buffer was full.
var ErrSlow = errors.New("watch: subscriber too slow, events were dropped")

// ErrClosed is reported for a subscriber whose hub shut down.
var ErrClosed = errors.New("watch: closed")

// Subscription receives events on C until it is closed; then Err says why.
type Subscription[T any] struct {
	C     <-chan Event[T]
	c     chan Event[T]
	match func(T) bool
	hub   *Hub[T]
	err   error
	done  bool
	// pumping: a pump (SubscribeFrom) is still sending initial events on
	// c, so Publish queues changes in pending (up to the hub's buffer),
	// and drop closes stop instead of c, which the pump then closes.
	pumping bool
	pending []Event[T]
	stop    chan struct{}
}

// Err returns why C was closed: nil after Close, ErrSlow or ErrClosed.
func (s *Subscription[T]) Err() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.err
}

// Close stops the subscription; C is closed.
func (s *Subscription[T]) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.drop(s, nil)
}

// Hub fans changes of one model out to its subscribers.
type Hub[T any] struct {
	mu     sync.Mutex
	subs   map[*Subscription[T]]struct{}
	buffer int
	closed bool
	// history holds the last changes (a ring of up to buffer), so a
	// subscriber can resume after a revision it saw (SubscribeAfter);
	// since is the revision from which history is complete.
	history []Change[T]
	next    int
	since   int64
}

// NewHub returns a hub whose subscribers buffer up to buffer events.
func NewHub[T any](buffer int) *Hub[T] {
	return &Hub[T]{subs: map[*Subscription[T]]struct{}{}, buffer: max(buffer, 1)}
}

// Since sets the revision the hub's history starts after: the state its
// publisher had when the hub was made. Call it before the first Publish.
func (h *Hub[T]) Since(rev int64) {
	h.mu.Lock()
	h.since = rev
	h.mu.Unlock()
}

// SubscribeAfter is Subscribe preceded by every retained change after
// revision after that match accepts, as events: a subscriber that saw
// everything up to after misses nothing and sees nothing twice. It fails
// with ErrTooOld when changes after after are no longer held.
func (h *Hub[T]) SubscribeAfter(match func(T) bool, after int64) (*Subscription[T], error) {
	h.mu.Lock()
	oldest := h.since
	n := len(h.history)
	if n == cap(h.history) && n > 0 {
		// Full ring: what it dropped ends just before its oldest entry.
		oldest = h.history[h.next].Rev - 1
	}
	if after < oldest {
		h.mu.Unlock()
		return nil, ErrTooOld
	}
	probe := &Subscription[T]{match: match}
	var initial []Event[T]
	for i := range n {
		ch := h.history[(h.next+i)%n]
		if ch.Rev <= after {
			continue
		}
		if ev, ok := probe.translate(ch); ok {
			initial = append(initial, ev)
		}
	}
	h.mu.Unlock()
	// Nothing is published between the replay and the subscription: the
	// store subscribes between two commits.
	return h.Subscribe(match, initial), nil
}

// Subscribe registers a subscriber that sees the objects match accepts (nil
// accepts all). An object that starts matching arrives as Added and one
// that stops matching as Deleted, so the subscriber's view stays exact.
// Initial events, if any, are queued first; the channel grows to hold them.
func (h *Hub[T]) Subscribe(match func(T) bool, initial []Event[T]) *Subscription[T] {
	c := make(chan Event[T], h.buffer+len(initial))
	s := &Subscription[T]{C: c, c: c, match: match, hub: h}
	for _, e := range initial {
		c <- e
	}
	h.add(s)
	return s
}

// add registers s, or drops it with ErrClosed and reports false if h is
// closed.
func (h *Hub[T]) add(s *Subscription[T]) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		h.drop(s, ErrClosed)
		return false
	}
	h.subs[s] = struct{}{}
	return true
}

// SubscribeFrom is Subscribe with initial events that initial yields,
// run on a goroutine of the subscription's own as the subscriber takes
// them: a subscriber to a large table is not handed room for all of it
// at once, and whoever subscribes does not wait for the listing. Changes
// published meanwhile wait behind them, up to the hub's buffer, so a
// subscriber that falls further behind while it takes the initial events
// is dropped (ErrSlow) as any other. An error from initial ends the
// subscription: C is closed and Err returns it.
func (h *Hub[T]) SubscribeFrom(match func(T) bool, initial func(yield func(Event[T]) bool) error) *Subscription[T] {
	c := make(chan Event[T], h.buffer)
	s := &Subscription[T]{C: c, c: c, match: match, hub: h, pumping: true, stop: make(chan struct{})}
	// Added before the pump starts: a pump whose initial events fail at
	// once drops s, and an add after that would keep a dropped
	// subscription in the hub for good.
	if !h.add(s) {
		close(s.c) // dropped, with no pump to leave it to
		return s
	}
	go s.pump(initial)
	return s
}

// pump sends the initial events on c, then the changes queued meanwhile;
// once none is left (checked under the hub's lock) Publish sends on c
// itself. If the subscription is dropped first, pump closes c.
func (s *Subscription[T]) pump(initial func(yield func(Event[T]) bool) error) {
	h := s.hub
	send := func(ev Event[T]) bool {
		select {
		case s.c <- ev:
			return true
		case <-s.stop:
			return false
		}
	}
	ok := true
	if err := initial(func(ev Event[T]) bool {
		ok = send(ev)
		return ok
	}); err != nil {
		h.mu.Lock()
		h.drop(s, err)
		h.mu.Unlock()
		ok = false
	}
	for ok {
		h.mu.Lock()
		if s.done {
			h.mu.Unlock()
			break
		}
		if len(s.pending) == 0 {
			s.pending, s.pumping = nil, false
			h.mu.Unlock()
			return
		}
		ev := s.pending[0]
		s.pending[0] = Event[T]{}
		s.pending = s.pending[1:]
		h.mu.Unlock()
		ok = send(ev)
	}
	close(s.c) // dropped while pumping: drop left c to us
}

// Len returns the number of live subscribers.
func (h *Hub[T]) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Publish delivers one change to every interested subscriber without
// blocking; a subscriber whose buffer is full is dropped with ErrSlow.
func (h *Hub[T]) Publish(ch Change[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch.Rev != 0 {
		if len(h.history) < h.buffer {
			if h.history == nil {
				h.history = make([]Change[T], 0, h.buffer)
			}
			h.history = append(h.history, ch)
		} else {
			h.history[h.next] = ch
			h.next = (h.next + 1) % len(h.history)
		}
	}
	for s := range h.subs {
		ev, ok := s.translate(ch)
		if !ok {
			continue
		}
		if s.pumping {
			if len(s.pending) >= h.buffer {
				h.drop(s, ErrSlow)
			} else {
				s.pending = append(s.pending, ev)
			}
			continue
		}
		select {
		case s.c <- ev:
		default:
			h.drop(s, ErrSlow)
		}
	}
}

// Close drops every subscriber with ErrClosed and refuses new ones.
func (h *Hub[T]) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.drop(s, ErrClosed)
	}
}

// drop must be called with h.mu held.
func (h *Hub[T]) drop(s *Subscription[T], err error) {
	if s.done {
		return
	}
	s.done = true
	s.err = err
	delete(h.subs, s)
	if s.pumping {
		close(s.stop) // the pump may be sending on c: it closes c
		return
	}
	close(s.c)
}

func (s *Subscription[T]) translate(ch Change[T]) (Event[T], bool) {
	oldOK := ch.HasOld && (s.match == nil || s.match(ch.Old))
	newOK := ch.HasNew && (s.match == nil || s.match(ch.New))
	switch {
	case oldOK && newOK:
		return Event[T]{Modified, ch.New, ch.Rev}, true
	case newOK:
		return Event[T]{Added, ch.New, ch.Rev}, true
	case oldOK && ch.HasNew:
		return Event[T]{Deleted, ch.New, ch.Rev}, true
	case oldOK:
		return Event[T]{Deleted, ch.Old, ch.Rev}, true
	}
	return Event[T]{}, false
}
