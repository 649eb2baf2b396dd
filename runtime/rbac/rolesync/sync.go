package rolesync

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/watch"
)

// Sync feeds r with the roles and bindings of the store until ctx ends,
// then returns nil. It calls ready once, when r reflects at least the
// state both models had when Sync started, so that a server can wait for
// it before serving. A watch dropped for falling behind is opened again
// with initial events, and objects that went away meanwhile are removed
// from r. Any other failure (the store closing, an object that does not
// decode) ends Sync with an error; r then keeps its last state.
func Sync(ctx context.Context, roles *core.RoleClient, bindings *core.RoleBindingClient, r *rbac.Resolver, ready func()) error {
	return syncer{}.run(ctx, roles, bindings, r, ready)
}

// SyncWithProgress is Sync that also records in p what it has applied, so
// that writers can wait for the resolver (Progress.WaitCurrent).
func SyncWithProgress(ctx context.Context, roles *core.RoleClient, bindings *core.RoleBindingClient, r *rbac.Resolver, p *Progress, ready func()) error {
	return syncer{progress: p}.run(ctx, roles, bindings, r, ready)
}

// syncer is Sync with hooks for tests.
type syncer struct {
	// resubscribed, if set, is called with the model's kind each time a
	// dropped watch is opened again.
	resubscribed func(kind string)
	// progress, if set, records what was applied.
	progress *Progress
}

func (s syncer) run(ctx context.Context, roles *core.RoleClient, bindings *core.RoleBindingClient, r *rbac.Resolver, ready func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var waiting atomic.Int32
	waiting.Store(2)
	caughtUp := func() {
		if waiting.Add(-1) == 0 && ready != nil {
			ready()
		}
	}
	roleKind, bindingKind := roles.Model().Kind, bindings.Model().Kind
	roleSink := sink[*core.Role]{
		put: func(o *core.Role) {
			r.PutRole(ToRole(o))
			s.putDone(roleKind, &o.Metadata)
		},
		del: func(name string) {
			r.DeleteRole(name)
			s.delDone(roleKind, name)
		},
	}
	bindingSink := sink[*core.RoleBinding]{
		put: func(o *core.RoleBinding) {
			// Halo ignores bindings being deleted; so do we, rather than
			// grant until the finalizers are done.
			if o.Metadata.DeletionTimestamp != nil {
				r.DeleteBinding(o.Metadata.Name)
			} else {
				r.PutBinding(toBinding(o))
			}
			s.putDone(bindingKind, &o.Metadata)
		},
		del: func(name string) {
			r.DeleteBinding(name)
			s.delDone(bindingKind, name)
		},
	}
	errc := make(chan error, 2)
	go func() { errc <- follow(ctx, roles, roleSink, caughtUp, s.resubscribed) }()
	go func() { errc <- follow(ctx, bindings, bindingSink, caughtUp, s.resubscribed) }()
	// The first to return either saw ctx end or failed; either way the
	// other has nothing left to do.
	err := <-errc
	cancel()
	if err2 := <-errc; err == nil {
		err = err2
	}
	return err
}

func (s syncer) putDone(kind string, md *object.Metadata) {
	if s.progress != nil {
		s.progress.put(kind, md)
	}
}

func (s syncer) delDone(kind, name string) {
	if s.progress != nil {
		s.progress.del(kind, name)
	}
}

// sink applies the objects of one model to the resolver.
type sink[T object.Object] struct {
	put func(T)
	del func(name string)
}

// follow keeps one model's objects flowing into s. It calls caughtUp once,
// after the first snapshot is applied, and returns nil when ctx ends.
func follow[T object.Object](ctx context.Context, c *client.Client[T], s sink[T], caughtUp func(), resubscribed func(string)) error {
	f := &follower[T]{c: c, sink: s, known: map[string]struct{}{}, caughtUp: caughtUp}
	for {
		err := f.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, watch.ErrSlow) {
			return err
		}
		if resubscribed != nil {
			resubscribed(c.Model().Kind)
		}
	}
}

type follower[T object.Object] struct {
	c    *client.Client[T]
	sink sink[T]
	// known holds the names put into the resolver and not deleted since,
	// to find what vanished while a watch was down.
	known    map[string]struct{}
	caughtUp func() // nil once called
}

// mark is the state of an object a list saw: the watch has caught up on it
// once it delivers that incarnation (same creation time) at that version
// or later.
type mark struct {
	created time.Time
	version int64
}

func markOf(m *object.Metadata) mark {
	var created time.Time
	if m.CreationTimestamp != nil {
		created = *m.CreationTimestamp
	}
	return mark{created: created, version: m.GetVersion()}
}

func (k mark) reachedBy(m *object.Metadata) bool {
	got := markOf(m)
	return got.created.Equal(k.created) && got.version >= k.version
}

// once runs one watch until it fails. The watch's initial events sit at
// the head of its stream, but nothing marks where they end; so a list taken
// just after subscribing names the state every object must reach, and
// once the stream has delivered all of them the snapshot is applied: then
// names known from an earlier watch that this one has not mentioned are
// gone, and are deleted.
func (f *follower[T]) once(ctx context.Context) error {
	kind := f.c.Model().Kind
	w, err := f.c.Watch(ctx, client.WatchOptions{SendInitialEvents: true})
	if err != nil {
		return fmt.Errorf("rolesync: watch %s: %w", kind, err)
	}
	defer w.Stop()
	list, err := f.c.List(ctx, client.ListOptions{})
	if err != nil {
		return fmt.Errorf("rolesync: list %s: %w", kind, err)
	}
	pending := make(map[string]mark, len(list.Items))
	for _, o := range list.Items {
		md := &o.GetEnvelope().Metadata
		pending[md.Name] = markOf(md)
	}
	seen := map[string]struct{}{}
	snapshotDone := false
	checkSnapshot := func() {
		if snapshotDone || len(pending) > 0 {
			return
		}
		snapshotDone = true
		for name := range f.known {
			if _, ok := seen[name]; !ok {
				f.sink.del(name)
				delete(f.known, name)
			}
		}
		if f.caughtUp != nil {
			f.caughtUp()
			f.caughtUp = nil
		}
	}
	checkSnapshot()
	for {
		ev, err := w.Next(ctx)
		if err != nil {
			return fmt.Errorf("rolesync: watch %s: %w", kind, err)
		}
		md := &ev.Object.GetEnvelope().Metadata
		seen[md.Name] = struct{}{}
		if ev.Type == watch.Deleted {
			f.sink.del(md.Name)
			delete(f.known, md.Name)
		} else {
			f.sink.put(ev.Object)
			f.known[md.Name] = struct{}{}
		}
		if k, ok := pending[md.Name]; ok && k.reachedBy(md) {
			delete(pending, md.Name)
			checkSnapshot()
		}
	}
}

// ToRole is the resolver's view of a stored role.
func ToRole(o *core.Role) rbac.Role {
	rules := make([]rbac.PolicyRule, len(o.Rules))
	for i, p := range o.Rules {
		rules[i] = rbac.PolicyRule{APIGroups: p.APIGroups, Resources: p.Resources, ResourceNames: p.ResourceNames, NonResourceURLs: p.NonResourceURLs, Verbs: p.Verbs}
	}
	md := &o.Metadata
	return rbac.Role{Name: md.Name, Rules: rules, Labels: md.Labels, Annotations: md.Annotations, Deleting: md.DeletionTimestamp != nil}
}

// toBinding is the resolver's view of a stored binding: only subjects of
// kind User count. The schema admits no other roleRef kind.
func toBinding(o *core.RoleBinding) rbac.Binding {
	b := rbac.Binding{Name: o.Metadata.Name, RoleRef: o.RoleRef.Name}
	for _, s := range o.Subjects {
		if s.Kind == "User" {
			b.Users = append(b.Users, s.Name)
		}
	}
	return b
}
