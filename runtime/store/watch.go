package store

import (
	"context"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/plan"
	"github.com/svcrun/svc/runtime/watch"
)

// Event is a change delivered to a watcher.
type Event = watch.Event[*Record]

// Subscription is a live watch; see watch.Subscription.
type Subscription = watch.Subscription[*Record]

// WatchOptions narrow a watch.
type WatchOptions struct {
	// Query's label and field selectors filter events; paging and sort
	// are ignored.
	Query Query
	// Name, when set, watches one object.
	Name string
	// SendInitial first delivers an Added event for every current match.
	SendInitial bool
	// After, when set (and SendInitial not), first delivers the changes
	// after that revision (the last a client saw, maybe on another
	// replica) that the store still holds, or fails with watch.ErrTooOld
	// (HTTP 410: list again).
	After int64
}

// Watch streams the changes of m's objects in commit order. The initial
// events and the subscription are taken between two commits, so no change
// is missed or seen twice. A watcher that falls behind by more than the
// store's WatchBuffer events is dropped (watch.ErrSlow).
func (s *Store) Watch(ctx context.Context, m *model.Model, opts WatchOptions) (*Subscription, error) {
	if _, _, err := s.ready(m); err != nil {
		return nil, err
	}
	p, err := plan.Compile(m, opts.Query)
	if err != nil {
		return nil, err
	}
	match := func(r *Record) bool {
		return (opts.Name == "" || r.Name == opts.Name) && p.Matches(r)
	}
	var sub *Subscription
	err = s.submit(ctx, &op{control: true, apply: func(*batch) error {
		_, st, err := s.ready(m)
		if err != nil {
			return err
		}
		if opts.SendInitial && opts.Name != "" {
			// One object: looked up, not listed.
			var initial []Event
			v := st.current(0) // memdb alone: no tree needed
			if r := v.Names().Get(string(model.StringKey(opts.Name))); r != nil && match(r) {
				initial = append(initial, Event{Type: watch.Added, Object: r})
			}
			sub = st.hub.Subscribe(match, initial)
			return nil
		}
		if opts.SendInitial {
			// Only the view is taken here, between two commits; the
			// listing runs on the subscription's goroutine as the watcher
			// takes the events, so neither the committer nor memory waits
			// on a watcher of a large table.
			p.ByName()
			v := st.current(p.Need())
			sub = st.hub.SubscribeFrom(match, func(yield func(Event) bool) error {
				items, _, err := p.Run(context.Background(), v, 1, 0)
				if err != nil {
					return err
				}
				for _, r := range items {
					if match(r) && !yield(Event{Type: watch.Added, Object: r}) {
						return nil
					}
				}
				return nil
			})
			return nil
		}
		if opts.After > 0 {
			sub, err = st.hub.SubscribeAfter(match, opts.After)
			return err
		}
		sub = st.hub.Subscribe(match, nil)
		return nil
	}})
	return sub, err
}
