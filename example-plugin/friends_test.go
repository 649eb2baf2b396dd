package example_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// friendWait bounds waits for the counts to converge: generous, because a
// loaded 2-core machine running -race can be very slow.
const friendWait = 60 * time.Second

type friendEnv struct {
	t       *testing.T
	st      *store.Store
	persons *example.PersonClient
}

func newFriendEnv(t *testing.T) *friendEnv {
	t.Helper()
	m := example.PersonModel()
	st := storetest.Open(t, store.Options{}, m)
	return &friendEnv{t: t, st: st, persons: example.NewPersonClient(st, m)}
}

// run starts the friend controller until the test ends.
func (e *friendEnv) run() {
	e.t.Helper()
	c := example.NewFriendController(e.st, e.persons.Model(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				e.t.Errorf("controller Start returned %v", err)
			}
		case <-time.After(friendWait):
			e.t.Error("controller did not stop")
		}
	})
}

// create makes a Person named name whose friend is friend ("" for none).
func (e *friendEnv) create(name, friend string, finalizers ...string) {
	e.t.Helper()
	p := example.NewPerson(name)
	p.Spec.Name = name
	if friend != "" {
		p.Spec.Friend = &friend
	}
	p.Metadata.Finalizers = finalizers
	if _, err := e.persons.Create(context.Background(), p); err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
}

// edit applies fn to the current name and writes it, retrying conflicts
// with the controller's status writes.
func (e *friendEnv) edit(name string, fn func(*example.Person)) error {
	for {
		p, err := e.persons.Get(context.Background(), name)
		if err != nil {
			return err
		}
		fn(p)
		_, err = e.persons.Update(context.Background(), p)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		return err
	}
}

func (e *friendEnv) setFriend(name, friend string) {
	e.t.Helper()
	err := e.edit(name, func(p *example.Person) {
		p.Spec.Friend = nil
		if friend != "" {
			p.Spec.Friend = &friend
		}
	})
	if err != nil {
		e.t.Fatalf("set friend of %s to %q: %v", name, friend, err)
	}
}

func (e *friendEnv) delete(name string) {
	e.t.Helper()
	if _, err := e.persons.Delete(context.Background(), name); err != nil {
		e.t.Fatalf("delete %s: %v", name, err)
	}
}

// counts returns every Person's status.friendCount (-1 when unset).
func (e *friendEnv) counts() map[string]int64 {
	e.t.Helper()
	res, err := e.persons.List(context.Background(), client.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range res.Items {
		out[p.Metadata.Name] = -1
		if p.Status != nil && p.Status.FriendCount != nil {
			out[p.Metadata.Name] = *p.Status.FriendCount
		}
	}
	return out
}

// bruteForce counts, over every stored Person, the Persons not being
// deleted that name each one.
func (e *friendEnv) bruteForce() map[string]int64 {
	e.t.Helper()
	res, err := e.persons.List(context.Background(), client.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range res.Items {
		out[p.Metadata.Name] += 0
	}
	for _, p := range res.Items {
		if p.Spec.Friend == nil || p.Metadata.DeletionTimestamp != nil {
			continue
		}
		if _, ok := out[*p.Spec.Friend]; ok {
			out[*p.Spec.Friend]++
		}
	}
	return out
}

// waitCounts polls until the stored counts equal want.
func (e *friendEnv) waitCounts(what string, want map[string]int64) {
	e.t.Helper()
	e.waitFor(what, func() map[string]int64 { return want })
}

// waitFor polls until the stored counts equal what want returns.
func (e *friendEnv) waitFor(what string, want func() map[string]int64) {
	e.t.Helper()
	deadline := time.Now().Add(friendWait)
	for {
		got, w := e.counts(), want()
		if maps.Equal(got, w) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: counts did not converge within %v\n got: %v\nwant: %v", what, friendWait, sorted(got), sorted(w))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func sorted(m map[string]int64) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s += fmt.Sprintf("%s=%d ", k, m[k])
	}
	return s
}

func TestFriendCountInitial(t *testing.T) {
	e := newFriendEnv(t)
	e.create("ann", "bob")
	e.create("bob", "ann")
	e.create("cat", "bob")
	e.create("dan", "")
	e.create("eve", "ghost") // names nobody that exists
	e.run()
	e.waitCounts("pre-existing persons", map[string]int64{"ann": 1, "bob": 2, "cat": 0, "dan": 0, "eve": 0})
}

func TestFriendCountLinkChanges(t *testing.T) {
	e := newFriendEnv(t)
	e.create("ann", "bob")
	e.create("bob", "")
	e.create("cat", "")
	e.run()
	e.waitCounts("start", map[string]int64{"ann": 0, "bob": 1, "cat": 0})

	e.setFriend("ann", "cat")
	e.waitCounts("ann's friend bob → cat", map[string]int64{"ann": 0, "bob": 0, "cat": 1})
	e.setFriend("ann", "")
	e.waitCounts("ann's friend cleared", map[string]int64{"ann": 0, "bob": 0, "cat": 0})
	e.setFriend("bob", "cat")
	e.setFriend("ann", "cat")
	e.waitCounts("ann and bob name cat", map[string]int64{"ann": 0, "bob": 0, "cat": 2})
	e.create("dan", "ann")
	e.waitCounts("a new person naming ann", map[string]int64{"ann": 1, "bob": 0, "cat": 2, "dan": 0})
	e.create("ghost", "")
	e.setFriend("cat", "ghost")
	e.waitCounts("a friend that exists only later", map[string]int64{"ann": 1, "bob": 0, "cat": 2, "dan": 0, "ghost": 1})
}

func TestFriendCountDeletion(t *testing.T) {
	e := newFriendEnv(t)
	e.create("ann", "bob")
	e.create("bob", "")
	e.create("cat", "bob")
	e.run()
	e.waitCounts("start", map[string]int64{"ann": 0, "bob": 2, "cat": 0})

	e.delete("ann")
	e.waitCounts("ann deleted", map[string]int64{"bob": 1, "cat": 0})

	// A finalizer keeps dan, being deleted, in the store and the index;
	// it no longer counts.
	e.create("dan", "bob", "example.com/hold")
	e.waitCounts("dan names bob", map[string]int64{"bob": 2, "cat": 0, "dan": 0})
	e.delete("dan")
	e.waitCounts("dan being deleted", map[string]int64{"bob": 1, "cat": 0, "dan": 0})
	if err := e.edit("dan", func(p *example.Person) { p.Metadata.Finalizers = nil }); err != nil {
		t.Fatalf("release dan: %v", err)
	}
	e.waitCounts("dan gone", map[string]int64{"bob": 1, "cat": 0})

	// A target being deleted, held by a finalizer, is still a Person: its
	// count follows the links to it.
	e.create("eve", "", "example.com/hold")
	e.create("fay", "eve")
	e.waitCounts("fay names eve", map[string]int64{"bob": 1, "cat": 0, "eve": 1, "fay": 0})
	e.delete("eve")
	e.create("gus", "eve")
	e.delete("fay")
	e.create("hal", "eve")
	e.waitCounts("links to eve being deleted", map[string]int64{"bob": 1, "cat": 0, "eve": 2, "gus": 0, "hal": 0})
	if err := e.edit("eve", func(p *example.Person) { p.Metadata.Finalizers = nil }); err != nil {
		t.Fatalf("release eve: %v", err)
	}
	for _, n := range []string{"gus", "hal"} {
		e.delete(n)
	}
	e.waitCounts("eve, gus and hal gone", map[string]int64{"bob": 1, "cat": 0})

	// A deleted target counts again when it comes back.
	e.delete("bob")
	e.waitCounts("bob deleted", map[string]int64{"cat": 0})
	e.create("bob", "")
	e.waitCounts("bob back", map[string]int64{"bob": 1, "cat": 0})
}

func TestFriendCountSelf(t *testing.T) {
	e := newFriendEnv(t)
	e.create("ann", "ann")
	e.create("bob", "")
	e.run()
	e.waitCounts("ann names herself", map[string]int64{"ann": 1, "bob": 0})
	e.setFriend("ann", "bob")
	e.waitCounts("ann names bob", map[string]int64{"ann": 0, "bob": 1})
	e.setFriend("bob", "bob")
	e.waitCounts("bob names himself too", map[string]int64{"ann": 0, "bob": 2})
	e.delete("bob")
	e.waitCounts("bob deleted", map[string]int64{"ann": 0})
}

func TestFriendCountConcurrentEdits(t *testing.T) {
	e := newFriendEnv(t)
	const n = 30
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p%02d", i)
		e.create(names[i], names[(i+1)%n])
	}
	e.run()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 42))
			for range 60 {
				name := names[rng.IntN(n)]
				var friend *string
				switch k := rng.IntN(n + 3); {
				case k < n:
					friend = &names[k] // sometimes name itself
				case k == n:
					ghost := "ghost"
					friend = &ghost
				}
				if err := e.edit(name, func(p *example.Person) { p.Spec.Friend = friend }); err != nil {
					errs <- fmt.Errorf("edit %s: %w", name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e.waitFor("after concurrent edits", e.bruteForce)
}

// TestFriendCountSettles drives Reconcile by hand through the race its
// settle rule exists for: a target counted while a link passes through it
// unseen by the link's own reconcile.
func TestFriendCountSettles(t *testing.T) {
	e := newFriendEnv(t)
	ctx := context.Background()
	fc := example.NewFriendCounter(e.persons)
	var queued []string
	fc.SetEnqueue(func(name string) { queued = append(queued, name) })
	reconcile := func(name string) controller.Result {
		t.Helper()
		res, err := fc.Reconcile(ctx, controller.Request{Name: name})
		if err != nil {
			t.Fatalf("reconcile %s: %v", name, err)
		}
		return res
	}
	for _, p := range []string{"bob", "cat", "dan"} {
		e.create(p, "")
	}
	e.create("ann", "bob")
	for _, p := range []string{"ann", "bob", "cat", "dan"} {
		reconcile(p)
	}
	queued = nil

	e.setFriend("ann", "cat") // ann's reconcile is late…
	if res := reconcile("cat"); res.RequeueAfter <= 0 {
		t.Fatalf("cat counted with ann's move unseen: Result %+v, want a RequeueAfter", res)
	}
	e.setFriend("ann", "dan") // …and sees dan, not cat
	reconcile("ann")
	if want := []string{"bob", "dan"}; !slices.Equal(queued, want) {
		t.Fatalf("ann's reconcile queued %v, want %v", queued, want)
	}
	for _, p := range queued {
		reconcile(p)
	}
	if res := reconcile("cat"); res.RequeueAfter != 0 {
		t.Fatalf("cat recounted after the links settled: Result %+v, want zero", res)
	}
	if got, want := e.counts(), map[string]int64{"ann": 0, "bob": 0, "cat": 0, "dan": 1}; !maps.Equal(got, want) {
		t.Fatalf("counts %v, want %v", sorted(got), sorted(want))
	}
}

// TestAdmitTakesTheCountOnCreate: a Person the API creates carries its
// count from the start, persons being deleted left out and a count sent
// in the body replaced; updates pass as they are.
func TestAdmitTakesTheCountOnCreate(t *testing.T) {
	e := newFriendEnv(t)
	admit := example.AdmitFriendCount(e.persons)
	e.create("ann", "zed")
	e.create("bob", "zed")
	e.create("cat", "zed", "example.com/hold")
	e.delete("cat") // held by its finalizer: being deleted, not counted
	e.create("dan", "ann")

	cases := []struct {
		name, sent string
		body       *int64
		want       int64
	}{
		{"named by two", "zed", nil, 2},
		{"a count in the body is replaced", "zed", storetest.Int64(7), 2},
		{"named by one", "ann", nil, 1},
		{"named by none", "bob", nil, 0},
		{"generated name", "", storetest.Int64(3), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := example.NewPerson(c.sent)
			if c.body != nil {
				p.Status = &example.PersonStatus{FriendCount: c.body}
			}
			if err := admit(context.Background(), nil, p); err != nil {
				t.Fatal(err)
			}
			if p.Status == nil || p.Status.FriendCount == nil || *p.Status.FriendCount != c.want {
				t.Fatalf("status after admission = %+v, want friendCount %d", p.Status, c.want)
			}
		})
	}

	old := example.NewPerson("zed")
	p := example.NewPerson("zed")
	p.Status = &example.PersonStatus{FriendCount: storetest.Int64(9)}
	if err := admit(context.Background(), old, p); err != nil {
		t.Fatal(err)
	}
	if *p.Status.FriendCount != 9 {
		t.Errorf("an update's status was changed to %d", *p.Status.FriendCount)
	}
}
