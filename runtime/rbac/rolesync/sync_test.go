package rolesync

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

const brand = "svc.run"

type fixture struct {
	roles    *core.RoleClient
	bindings *core.RoleBindingClient
}

func newFixture(t *testing.T, opts store.Options) fixture {
	t.Helper()
	rm, bm := core.RoleModel(), core.RoleBindingModel()
	st := storetest.Open(t, opts, rm, bm)
	return fixture{roles: core.NewRoleClient(st, rm), bindings: core.NewRoleBindingClient(st, bm)}
}

func newRole(name string, rules ...core.PolicyRule) *core.Role {
	r := core.NewRole(name)
	r.Rules = rules
	return r
}

func newBinding(name, role string, users ...string) *core.RoleBinding {
	b := core.NewRoleBinding(name)
	b.RoleRef = core.RoleBindingRoleRef{Kind: "Role", Name: role}
	for _, u := range users {
		b.Subjects = append(b.Subjects, core.RoleBindingSubjectsItem{Kind: "User", Name: u})
	}
	return b
}

func rule(verbs ...string) core.PolicyRule {
	return core.PolicyRule{APIGroups: []string{"g"}, Resources: []string{"things"}, Verbs: verbs}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// start runs Sync until the test ends and waits for ready.
func start(t *testing.T, f fixture, s syncer) *rbac.Resolver {
	t.Helper()
	r := rbac.NewResolver(brand)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	var calls atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- s.run(ctx, f.roles, f.bindings, r, func() { calls.Add(1); close(ready) })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Sync returned %v after its context ended, want nil", err)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("ready called %d times, want once", n)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Sync ended before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Sync not ready after 10s")
	}
	return r
}

func TestSyncFollowsStore(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, store.Options{Dir: t.TempDir()})
	if _, err := f.roles.Create(ctx, newRole("viewer", rule("get"))); err != nil {
		t.Fatal(err)
	}
	if _, err := f.bindings.Create(ctx, newBinding("ann-viewer", "viewer", "ann")); err != nil {
		t.Fatal(err)
	}
	r := start(t, f, syncer{})

	get := rbac.ParseRequestInfo("GET", "/apis/g/v1/things/t1", nil, false)
	list := rbac.ParseRequestInfo("GET", "/apis/g/v1/things", nil, false)
	allowed := func(user string, info rbac.RequestInfo, want bool) func() bool {
		return func() bool { return r.Authorize(user, &info) == want }
	}
	// Ready means the snapshot is in: no waiting needed.
	if !r.Authorize("ann", &get) {
		t.Fatal("ann's stored binding not applied when ready was called")
	}

	steps := []struct {
		name   string
		change func() error
		user   string
		info   rbac.RequestInfo
		want   bool
	}{
		{"binding created", func() error {
			_, err := f.bindings.Create(ctx, newBinding("bob-viewer", "viewer", "bob"))
			return err
		}, "bob", get, true},
		{"role rules edited", func() error {
			v, err := f.roles.Get(ctx, "viewer")
			if err != nil {
				return err
			}
			v.Rules = []core.PolicyRule{rule("list")}
			_, err = f.roles.Update(ctx, v)
			return err
		}, "ann", get, false},
		{"edited rules apply", func() error { return nil }, "ann", list, true},
		{"aggregated role created", func() error {
			a := newRole("viewer-get", rule("get"))
			a.Metadata.Labels = map[string]string{"rbac.authorization." + brand + "/aggregate-to-viewer": "true"}
			_, err := f.roles.Create(ctx, a)
			return err
		}, "ann", get, true},
		{"aggregated role deleted", func() error {
			_, err := f.roles.Delete(ctx, "viewer-get")
			return err
		}, "ann", get, false},
		{"dependency added", func() error {
			if _, err := f.roles.Create(ctx, newRole("getter", rule("get"))); err != nil {
				return err
			}
			v, err := f.roles.Get(ctx, "viewer")
			if err != nil {
				return err
			}
			v.Metadata.Annotations = map[string]string{"rbac.authorization." + brand + "/dependencies": `["getter"]`}
			_, err = f.roles.Update(ctx, v)
			return err
		}, "bob", get, true},
		{"binding deleted", func() error {
			_, err := f.bindings.Delete(ctx, "bob-viewer")
			return err
		}, "bob", list, false},
		{"bound role deleted", func() error {
			_, err := f.roles.Delete(ctx, "viewer")
			return err
		}, "ann", list, false},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("step %q: %v", s.name, err)
		}
		eventually(t, fmt.Sprintf("step %q: Authorize(%s, %s %s) = %v", s.name, s.user, s.info.Verb, s.info.Path, s.want), allowed(s.user, s.info, s.want))
	}
}

// TestSyncDeletingObjects: a role or binding held by a finalizer stays in
// the store with a deletionTimestamp, and grants nothing meanwhile.
func TestSyncDeletingObjects(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, store.Options{})
	role := newRole("held", rule("get"))
	role.Metadata.Finalizers = []string{"example.com/keep"}
	if _, err := f.roles.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	other := newRole("other", rule("list"))
	if _, err := f.roles.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := f.bindings.Create(ctx, newBinding("ann-held", "held", "ann")); err != nil {
		t.Fatal(err)
	}
	b := newBinding("ann-other", "other", "ann")
	b.Metadata.Finalizers = []string{"example.com/keep"}
	if _, err := f.bindings.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	r := start(t, f, syncer{})
	get := rbac.ParseRequestInfo("GET", "/apis/g/v1/things/t1", nil, false)
	list := rbac.ParseRequestInfo("GET", "/apis/g/v1/things", nil, false)
	if !r.Authorize("ann", &get) || !r.Authorize("ann", &list) {
		t.Fatal("ann's roles not granted before the deletes")
	}
	if _, err := f.roles.Delete(ctx, "held"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.bindings.Delete(ctx, "ann-other"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the role being deleted grants nothing", func() bool { return !r.Authorize("ann", &get) })
	eventually(t, "the binding being deleted grants nothing", func() bool { return !r.Authorize("ann", &list) })
	if _, err := f.roles.Get(ctx, "held"); err != nil {
		t.Fatalf("the held role should still be stored: %v", err)
	}
}

// fakeSink records what follow applies and can hold it inside put, so
// that the watch falls behind at a chosen moment.
type fakeSink struct {
	mu      sync.Mutex
	objects map[string]int64 // name → version
	hold    atomic.Bool
	entered chan string
	release chan struct{}
}

func newFakeSink() *fakeSink {
	return &fakeSink{objects: map[string]int64{}, entered: make(chan string), release: make(chan struct{})}
}

func (s *fakeSink) sink() sink[*core.Role] {
	return sink[*core.Role]{
		put: func(o *core.Role) {
			if s.hold.Load() {
				s.hold.Store(false)
				s.entered <- o.Metadata.Name
				<-s.release
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			s.objects[o.Metadata.Name] = o.Metadata.GetVersion()
		},
		del: func(name string) {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.objects, name)
		},
	}
}

func (s *fakeSink) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.objects))
}

// TestFollowReconcilesAfterDrop makes the watch fall behind while a delete
// is among the dropped events: the fresh snapshot must remove the object.
func TestFollowReconcilesAfterDrop(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, store.Options{WatchBuffer: 1})
	for _, n := range []string{"a", "b"} {
		if _, err := f.roles.Create(ctx, newRole(n, rule("get"))); err != nil {
			t.Fatal(err)
		}
	}
	s := newFakeSink()
	var resubscribed atomic.Int32
	caughtUp := make(chan struct{})
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- follow(fctx, f.roles, s.sink(), func() { close(caughtUp) }, func(string) { resubscribed.Add(1) })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("follow returned %v after its context ended, want nil", err)
		}
	})
	<-caughtUp
	if got := s.names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after the snapshot the sink holds %v, want [a b]", got)
	}

	// Hold the follower inside put for a's update, then overflow its
	// buffer (one event, plus room for the two initial ones) with creates,
	// so that b's delete after them is lost.
	s.hold.Store(true)
	a, err := f.roles.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	a.Rules = []core.PolicyRule{rule("list")}
	if _, err := f.roles.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := <-s.entered; got != "a" {
		t.Fatalf("held on %q, want a", got)
	}
	for _, n := range []string{"c1", "c2", "c3", "c4"} {
		if _, err := f.roles.Create(ctx, newRole(n, rule("get"))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.roles.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	close(s.release)

	eventually(t, "the sink matches the store after the drop", func() bool {
		return slices.Equal(s.names(), []string{"a", "c1", "c2", "c3", "c4"})
	})
	if n := resubscribed.Load(); n != 1 {
		t.Errorf("resubscribed %d times, want 1", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, want := s.objects["a"], int64(1); v != want {
		t.Errorf("sink holds a at version %d, want %d", v, want)
	}
}

// TestSyncAfterDrop runs the whole Sync on a store whose watchers fall
// behind on any burst: the resolver still ends up matching the store.
func TestSyncAfterDrop(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, store.Options{WatchBuffer: 1})
	var resubscribed atomic.Int32
	r := start(t, f, syncer{resubscribed: func(string) { resubscribed.Add(1) }})
	burst := func(n int, op func(i int) error) {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() { errs <- op(i) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	burst(40, func(i int) error {
		_, err := f.roles.Create(ctx, newRole(fmt.Sprintf("r%d", i), rule("get")))
		return err
	})
	burst(40, func(i int) error {
		_, err := f.bindings.Create(ctx, newBinding(fmt.Sprintf("b%d", i), fmt.Sprintf("r%d", i), fmt.Sprintf("u%d", i%4)))
		return err
	})
	burst(20, func(i int) error {
		if _, err := f.roles.Delete(ctx, fmt.Sprintf("r%d", 2*i)); err != nil {
			return err
		}
		_, err := f.bindings.Delete(ctx, fmt.Sprintf("b%d", 2*i+1))
		return err
	})
	var want []string
	for i := 1; i < 40; i += 2 {
		want = append(want, fmt.Sprintf("r%d", i))
	}
	slices.Sort(want)
	eventually(t, "the resolver's roles match the store", func() bool { return slices.Equal(r.RoleNames(), want) })
	// Bindings of odd roles are gone, those of even roles remain (naming
	// deleted roles).
	for u := range 4 {
		user := fmt.Sprintf("u%d", u)
		var bound []string
		for i := u; i < 40; i += 4 {
			if i%2 == 0 {
				bound = append(bound, fmt.Sprintf("r%d", i))
			}
		}
		slices.Sort(bound)
		eventually(t, user+"'s bound roles match the store", func() bool { return slices.Equal(r.BoundRoles(user), bound) })
	}
	t.Logf("watches reopened %d times", resubscribed.Load())
}
