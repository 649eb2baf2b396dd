package store_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query/selector"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/etcdtest"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/watch"
)

// replicas opens n stores on one etcd prefix, each with m registered.
func replicas(t *testing.T, endpoints []string, prefix string, n int, m *model.Model) []*store.Store {
	t.Helper()
	out := make([]*store.Store, n)
	for i := range out {
		out[i] = storetest.Open(t, store.Options{Etcd: &store.EtcdOptions{Endpoints: endpoints, Prefix: prefix}}, m)
	}
	return out
}

func TestSharedReadYourWritesAcrossReplicas(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	rs := replicas(t, c.Endpoints(), "/rw/", 2, m)
	a, b := rs[0], rs[1]
	rec, err := a.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann", Email: "ann@example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	// The writer has applied its own write when Create returns.
	if got, err := a.Get(ctx, m, "ann"); err != nil || string(got.Data) != string(rec.Data) {
		t.Fatalf("A after its create: %v %v", got, err)
	}
	if a.Revision() == 0 {
		t.Fatal("A's revision is 0 after a write")
	}
	// B has it once it reaches A's revision.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.WaitRevision(wctx, a.Revision()); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, m, "ann")
	if err != nil || string(got.Data) != string(rec.Data) {
		t.Fatalf("B at A's revision: %v %v, want %s", got, err, rec.Data)
	}
	fs, err := selector.ParseFields([]string{"spec.email=ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.List(ctx, m, store.Query{Fields: fs})
	if err != nil || res.Total != 1 {
		t.Fatalf("B's index: total %d, %v", res.Total, err)
	}
	// A name taken on A is taken on B, whatever B has applied.
	_, err = b.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Other"}))
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("create of a taken name on B: %v, want already exists", err)
	}
}

// Two replicas update one object at the same version, many times: each
// round exactly one succeeds and the other gets a version conflict.
func TestSharedConcurrentUpdatesOneWins(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	rs := replicas(t, c.Endpoints(), "/upd/", 2, m)
	if _, err := rs[0].Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann"})); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 40; round++ {
		// Both replicas must be at the newest version before the race.
		var version int64
		for _, r := range rs {
			if err := r.WaitRevision(ctx, maxRev(rs)); err != nil {
				t.Fatal(err)
			}
			cur, err := r.Get(ctx, m, "ann")
			if err != nil {
				t.Fatal(err)
			}
			version = cur.Version
		}
		var wg sync.WaitGroup
		errs := make([]error, len(rs))
		for i, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := storetest.NewPerson("ann", Spec{Name: fmt.Sprintf("r%d-%d", round, i)})
				p.Metadata.Version = &version
				_, errs[i] = r.Update(ctx, m, p)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d: %v, want a conflict", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d updates succeeded (%v), want exactly 1", round, wins, errs)
		}
	}
	for _, r := range rs {
		if err := r.WaitRevision(ctx, maxRev(rs)); err != nil {
			t.Fatal(err)
		}
		if cur, _ := r.Get(ctx, m, "ann"); cur.Version != 40 {
			t.Fatalf("version %d after 40 rounds, want 40", cur.Version)
		}
	}
}

func maxRev(rs []*store.Store) int64 {
	var m int64
	for _, r := range rs {
		m = max(m, r.Revision())
	}
	return m
}

// Creates racing for one unique value on two replicas: exactly one wins.
func TestSharedUniqueValueClaimedOnce(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	rs := replicas(t, c.Endpoints(), "/uniq/", 2, m)
	for round := 0; round < 30; round++ {
		email := fmt.Sprintf("u%d@example.com", round)
		var wg sync.WaitGroup
		errs := make([]error, len(rs))
		for i, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = r.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("p%d-%d", round, i), Spec{Name: "x", Email: email}))
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			var ue *store.UniqueError
			switch {
			case err == nil:
				wins++
			case !errors.As(err, &ue) || ue.Index != "spec.email" || ue.Value != email:
				t.Fatalf("round %d: %v, want a unique error on spec.email", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d creates won, want 1", round, wins)
		}
	}
	// A value freed by a removal can be claimed again, and a changed value
	// frees the old one.
	a := rs[0]
	if _, err := a.Delete(ctx, m, "p0-0"); err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := a.Delete(ctx, m, "p0-1"); err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := rs[1].Create(ctx, m, storetest.NewPerson("again", Spec{Name: "x", Email: "u0@example.com"})); err != nil {
		t.Fatalf("claim a freed value: %v", err)
	}
	cur, _ := rs[1].Get(ctx, m, "again")
	p := storetest.NewPerson("again", Spec{Name: "x", Email: "moved@example.com"})
	p.Metadata.Version = &cur.Version
	if _, err := rs[1].Update(ctx, m, p); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, m, storetest.NewPerson("third", Spec{Name: "x", Email: "u0@example.com"})); err != nil {
		t.Fatalf("claim a value given up by an update: %v", err)
	}
}

// A watcher on B sees every change made on A and C, in revision order,
// with removals carrying the same final state as on the writer.
func TestSharedWatchSeesOtherReplicasInOrder(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	rs := replicas(t, c.Endpoints(), "/watch/", 3, m)
	w, err := rs[1].Watch(ctx, m, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const n = 50
	var wg sync.WaitGroup
	for w, r := range []*store.Store{rs[0], rs[2]} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				if _, err := r.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("w%d-%d", w, i), Spec{Name: "x"})); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	var lastRev int64
	timeout := time.After(10 * time.Second)
	for len(seen) < 2*n {
		select {
		case ev, ok := <-w.C:
			if !ok {
				t.Fatalf("watch closed after %d events: %v", len(seen), w.Err())
			}
			if ev.Type != watch.Added {
				t.Fatalf("event %v, want added", ev.Type)
			}
			if seen[ev.Object.Name] {
				t.Fatalf("duplicate event for %s", ev.Object.Name)
			}
			if ev.Rev <= lastRev {
				t.Fatalf("event %s at revision %d after %d: out of order", ev.Object.Name, ev.Rev, lastRev)
			}
			lastRev = ev.Rev
			seen[ev.Object.Name] = true
		case <-timeout:
			t.Fatalf("saw %d of %d creates", len(seen), 2*n)
		}
	}
}

// A replica whose revision etcd has compacted away loads again and ends
// in the cluster's state, with no restart.
func TestSharedCompactionReloads(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	rs := replicas(t, c.Endpoints(), "/compact/", 2, m)
	a, b := rs[0], rs[1]
	if _, err := a.Create(ctx, m, storetest.NewPerson("keep", Spec{Name: "x"})); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, m, storetest.NewPerson("gone", Spec{Name: "x"})); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitRevision(ctx, a.Revision()); err != nil {
		t.Fatal(err)
	}
	b.PauseFeedForTest(true)
	if _, err := a.Delete(ctx, m, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, m, storetest.NewPerson("new", Spec{Name: "x"})); err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Compact(ctx, a.Revision()); err != nil {
		t.Fatal(err)
	}
	b.PauseFeedForTest(false)
	storetestEventually(t, func() bool {
		_, e1 := b.Get(ctx, m, "gone")
		_, e2 := b.Get(ctx, m, "new")
		return errors.Is(e1, store.ErrNotFound) && e2 == nil
	})
	if b.Revision() < a.Revision() {
		t.Fatalf("B at %d after reload, A at %d", b.Revision(), a.Revision())
	}
}

func storetestEventually(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A watcher that drops off one replica resumes on another after the last
// revision it saw: every later change once, none it already had.
func TestSharedWatchResumesOnAnotherReplica(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	rs := replicas(t, c.Endpoints(), "/resume/", 3, m)
	w, err := rs[1].Watch(ctx, m, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := rs[0].Create(ctx, m, storetest.NewPerson(fmt.Sprintf("a%d", i), Spec{Name: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	var last int64
	for i := range 3 { // read three of five, then go away
		ev := <-w.C
		if ev.Rev <= last {
			t.Fatalf("event %d at revision %d after %d", i, ev.Rev, last)
		}
		last = ev.Rev
	}
	w.Close()
	for i := 5; i < 8; i++ {
		if _, err := rs[0].Create(ctx, m, storetest.NewPerson(fmt.Sprintf("a%d", i), Spec{Name: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	if err := rs[2].WaitRevision(ctx, rs[0].Revision()); err != nil {
		t.Fatal(err)
	}
	w2, err := rs[2].Watch(ctx, m, store.WatchOptions{After: last})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	for i := 3; i < 8; i++ {
		select {
		case ev := <-w2.C:
			if want := fmt.Sprintf("a%d", i); ev.Object.Name != want || ev.Rev <= last {
				t.Fatalf("resumed event %s at %d, want %s after %d", ev.Object.Name, ev.Rev, want, last)
			}
			last = ev.Rev
		case <-time.After(5 * time.Second):
			t.Fatalf("resumed watch stopped before a%d", i)
		}
	}
	select {
	case ev := <-w2.C:
		t.Fatalf("unexpected event %s", ev.Object.Name)
	case <-time.After(100 * time.Millisecond):
	}
	late := replicas(t, c.Endpoints(), "/resume/", 1, m)[0]
	if _, err := late.Watch(ctx, m, store.WatchOptions{After: last - 1}); !errors.Is(err, watch.ErrTooOld) {
		t.Fatalf("resume from before a replica's start: %v, want ErrTooOld", err)
	}
	if w3, err := late.Watch(ctx, m, store.WatchOptions{After: late.Revision()}); err != nil {
		t.Fatalf("resume from a replica's own revision: %v", err)
	} else {
		w3.Close()
	}
}

// A revision no object change reached (another prefix's write) is
// reached through etcd's progress notification.
func TestSharedWaitForARevisionOfAnotherPrefix(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	a := replicas(t, c.Endpoints(), "/mine/", 1, m)[0]
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	resp, err := cli.Put(ctx, "/other/key", "v")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := a.WaitRevision(wctx, resp.Header.Revision); err != nil {
		t.Fatalf("waiting for revision %d of another prefix: %v", resp.Header.Revision, err)
	}
}

// Under write load: a member down (quorum kept) stops nothing; quorum
// lost refuses writes at once with an unavailable error while reads go
// on; quorum back, writes resume with no restart; every acknowledged
// write is there.
func TestSharedMemberDownAndQuorumLoss(t *testing.T) {
	c := etcdtest.Start(t, 3)
	m := storetest.PersonModel()
	a := replicas(t, c.Endpoints(), "/faults/", 1, m)[0]
	var mu sync.Mutex
	var acked []string
	var refused int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", g, i)
				_, err := a.Create(ctx, m, storetest.NewPerson(name, Spec{Name: "x"}))
				mu.Lock()
				switch {
				case err == nil:
					acked = append(acked, name)
				case errors.Is(err, store.ErrUnavailable):
					refused++
				default:
					mu.Unlock()
					t.Errorf("create %s: %v", name, err)
					return
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	grows := func(what string) {
		t.Helper()
		n := count()
		storetestEventually(t, func() bool { return count() > n+20 })
		t.Logf("%s: %d writes acknowledged", what, count())
	}
	grows("three members")
	c.Stop(2)
	grows("one member down")
	c.Restart(2)
	c.WaitHealthy()
	grows("member back")

	// Quorum lost: writes are refused, reads go on.
	c.Stop(1)
	c.Stop(2)
	mu.Lock()
	refusedBefore := refused
	mu.Unlock()
	storetestEventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return refused > refusedBefore+3 })
	if a.Degraded() == nil {
		storetestEventually(t, func() bool { return a.Degraded() != nil })
	}
	mu.Lock()
	first := acked[0]
	mu.Unlock()
	if _, err := a.Get(ctx, m, first); err != nil {
		t.Fatalf("read without quorum: %v", err)
	}
	start := time.Now()
	_, err := a.Create(ctx, m, storetest.NewPerson("no-quorum", Spec{Name: "x"}))
	var ue *store.UnavailableError
	if !errors.As(err, &ue) || !ue.Cluster {
		t.Fatalf("write without quorum: %v, want an unavailable cluster", err)
	}
	t.Logf("a write without quorum was refused in %v", time.Since(start))

	c.Restart(1)
	c.Restart(2)
	c.WaitHealthy()
	grows("quorum back")
	storetestEventually(t, func() bool { return a.Degraded() == nil })
	close(stop)
	wg.Wait()
	if err := a.WaitRevision(ctx, a.Revision()); err != nil {
		t.Fatal(err)
	}
	// A second replica loads from etcd: it has every acknowledged write.
	b := replicas(t, c.Endpoints(), "/faults/", 1, m)[0]
	for _, name := range acked {
		if _, err := b.Get(ctx, m, name); err != nil {
			t.Fatalf("acknowledged %s: %v", name, err)
		}
	}
}

// An object larger than the etcd backend takes is refused with a
// *TooLargeError naming the limit (HTTP 413), and nothing is written.
func TestSharedObjectTooLarge(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{Etcd: &store.EtcdOptions{Endpoints: c.Endpoints(), Prefix: "/big/", MaxValueBytes: 4096}}, m)
	p := storetest.NewPerson("big", Spec{Name: "x"})
	p.Metadata.Annotations = map[string]string{"pad": strings.Repeat("x", 5000)}
	_, err := s.Create(ctx, m, p)
	var te *store.TooLargeError
	if !errors.As(err, &te) || te.Max != 4096 {
		t.Fatalf("create of a 5 KB object under a 4 KB limit: %v, want *TooLargeError", err)
	}
	if got := problem.From(err); got.Status != http.StatusRequestEntityTooLarge || !strings.Contains(got.Detail, "etcd-max-object-bytes") {
		t.Fatalf("problem %d %q, want 413 naming the limit", got.Status, got.Detail)
	}
	if _, err := s.Get(ctx, m, "big"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after a refused create: %v, want not found", err)
	}
}
