package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/watch"
)

// gate holds the syncer before its next log write until opened, so a test
// can look at the store while batches are applied but not durable.
type gate struct {
	entered chan struct{}
	open    chan struct{}
	once    sync.Once
}

func holdLog(s *store.Store) *gate {
	g := &gate{entered: make(chan struct{}, 1), open: make(chan struct{})}
	s.BeforeLogForTest(func() {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		<-g.open
	})
	return g
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// waitApplied waits until the committer has applied n writes.
func waitApplied(t *testing.T, s *store.Store, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.AppliedForTest() < n {
		if time.Now().After(deadline) {
			t.Fatalf("write %d was never applied", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// teamPerson returns a person named name in team x, with spec.name
// specName and the email name@example.com.
func teamPerson(name, specName string) *storetest.Person {
	p := storetest.NewPerson(name, Spec{Name: specName, Email: name + "@example.com"})
	p.Metadata.Labels = map[string]string{"team": "x"}
	return p
}

type result struct {
	rec *store.Record
	err error
}

func async(fn func() (*store.Record, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		rec, err := fn()
		ch <- result{rec, err}
	}()
	return ch
}

// TestWritesAreInvisibleUntilDurable: the committer applies the next batch
// while the previous one is being logged, but no reader, list or watcher
// sees a write before it is durable, and once a write is acknowledged
// every read sees it.
func TestWritesAreInvisibleUntilDurable(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	if _, err := s.Create(ctx, m, teamPerson("a", "A")); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Watch(ctx, m, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// A list takes a view of what is durable now; later lists reuse it
	// while no new write is durable (a reader that needs a newer view
	// waits for the log instead).
	if res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); err != nil || names(res) != "a" {
		t.Fatalf("list = %s, %v; want a", names(res), err)
	}

	g := holdLog(s)
	defer g.release()
	before := s.AppliedForTest()
	created := async(func() (*store.Record, error) { return s.Create(ctx, m, teamPerson("b", "B")) })
	<-g.entered // b's batch is applied and waits for the log
	a2 := teamPerson("a", "A2")
	a2.Metadata.SetVersion(0)
	updated := async(func() (*store.Record, error) { return s.Update(ctx, m, a2) })
	waitApplied(t, s, before+2) // and the update, in the batch behind it

	if _, err := s.Get(ctx, m, "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(b) before it is durable = %v, want not found", err)
	}
	if r, err := s.Get(ctx, m, "a"); err != nil || r.Version != 0 {
		t.Errorf("Get(a) before the update is durable = %v, %v; want version 0", r, err)
	}
	res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx"))
	if err != nil || names(res) != "a" || res.Items[0].Version != 0 {
		t.Errorf("list before the log write = %s, %v; want a at version 0", names(res), err)
	}
	if res, err := s.List(ctx, m, mustQuery(t, "fieldSelector=spec.name%3DA2")); err != nil || res.Total != 0 {
		t.Errorf("list by the updated field before the log write = %d, %v; want none", res.Total, err)
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("watcher got %s %s before it was durable", ev.Type, ev.Object.Name)
	case r := <-created:
		t.Fatalf("create answered before it was durable: %v", r.err)
	case <-time.After(20 * time.Millisecond):
	}

	g.release()
	if r := <-created; r.err != nil {
		t.Fatal(r.err)
	}
	if r := <-updated; r.err != nil {
		t.Fatal(r.err)
	}
	// Acknowledged: every read sees both writes.
	if _, err := s.Get(ctx, m, "b"); err != nil {
		t.Errorf("Get(b) after its create = %v", err)
	}
	res, err = s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx&sort=name,asc"))
	if err != nil || names(res) != "a,b" || res.Items[0].Version != 1 {
		t.Errorf("list after both writes = %s, %v; want a (version 1), b", names(res), err)
	}
	for _, want := range []struct {
		typ  watch.EventType
		name string
	}{{watch.Added, "b"}, {watch.Modified, "a"}} {
		select {
		case ev := <-sub.C:
			if ev.Type != want.typ || ev.Object.Name != want.name {
				t.Errorf("event = %s %s, want %s %s", ev.Type, ev.Object.Name, want.typ, want.name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event for %s", want.typ, want.name)
		}
	}
}

// TestLogFailureRollsBackEveryBatchInFlight: when the log fails under one
// batch with another applied (open) behind it, both fail, both are rolled
// back out of memdb and the index trees, and the store refuses later
// writes.
func TestLogFailureRollsBackEveryBatchInFlight(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	if _, err := s.Create(ctx, m, teamPerson("kept", "x")); err != nil {
		t.Fatal(err)
	}
	g := holdLog(s)
	defer g.release()
	before := s.AppliedForTest()
	var results []<-chan result
	for i, name := range []string{"lost1", "lost2"} {
		p := teamPerson(name, "x")
		results = append(results, async(func() (*store.Record, error) { return s.Create(ctx, m, p) }))
		if i == 0 {
			<-g.entered
		}
	}
	waitApplied(t, s, before+2)
	if err := s.BreakLogForTest(); err != nil {
		t.Fatal(err)
	}
	g.release()
	for i, ch := range results {
		if r := <-ch; r.err == nil {
			t.Errorf("create %d succeeded with a closed log", i+1)
		}
	}
	for _, name := range []string{"lost1", "lost2"} {
		if _, err := s.Get(ctx, m, name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%s) = %v, want not found", name, err)
		}
		res, err := s.List(ctx, m, mustQuery(t, "fieldSelector=spec.email%3D"+name+"@example.com"))
		if err != nil || res.Total != 0 {
			t.Errorf("list by %s's email = %d, %v; want nothing", name, res.Total, err)
		}
	}
	if res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); err != nil || names(res) != "kept" {
		t.Errorf("list = %s, %v; want kept", names(res), err)
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson("later", Spec{Name: "x"})); err == nil {
		t.Error("a later write succeeded after the log failed")
	}
}

// TestStaleViewWaitsForTheLog: a reader whose view lacks an acknowledged
// write, while the committer has applied a batch that is not durable yet,
// neither copies that batch nor misses the acknowledged write: it waits
// for the log, then sees both. With openBatch, a further write is applied
// to the committer's open batch meanwhile (which holds the table through
// the fsync): the reader then gets the view copied when that batch is
// handed off, so it may see that write too, once it is durable.
func TestStaleViewWaitsForTheLog(t *testing.T) {
	for _, openBatch := range []bool{false, true} {
		t.Run(fmt.Sprint("openBatch=", openBatch), func(t *testing.T) {
			m := storetest.PersonModel()
			s := storetest.New(t, m)
			for _, name := range []string{"a", "c"} { // c is acknowledged after a's view
				if name == "c" {
					if _, err := s.List(ctx, m, mustQuery(t, "")); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Create(ctx, m, storetest.NewPerson(name, Spec{Name: name})); err != nil {
					t.Fatal(err)
				}
			}
			g := holdLog(s)
			defer g.release()
			applied := s.AppliedForTest()
			created := []<-chan result{async(func() (*store.Record, error) { return s.Create(ctx, m, storetest.NewPerson("b", Spec{Name: "b"})) })}
			<-g.entered
			if openBatch {
				created = append(created, async(func() (*store.Record, error) { return s.Create(ctx, m, storetest.NewPerson("d", Spec{Name: "d"})) }))
				waitApplied(t, s, applied+2)
			}
			listed := make(chan string, 1)
			go func() {
				res, err := s.List(ctx, m, mustQuery(t, "sort=name,asc"))
				if err != nil {
					listed <- err.Error()
					return
				}
				listed <- names(res)
			}()
			select {
			case got := <-listed:
				t.Fatalf("list answered %q while b was not durable; want it to wait", got)
			case <-time.After(20 * time.Millisecond):
			}
			g.release()
			for _, r := range created {
				if r := <-r; r.err != nil {
					t.Fatal(r.err)
				}
			}
			if got := <-listed; got != "a,b,c" && !(openBatch && got == "a,b,c,d") {
				t.Errorf("list = %q, want a,b,c", got)
			}
		})
	}
}

// queueBehindAHeldBatch creates names while the log holds one create, so
// that they are applied one by one to the next batch, then lets the log
// go. It checks that they took one batch, and returns its number.
func queueBehindAHeldBatch(t *testing.T, s *store.Store, m *model.Model, names ...string) uint64 {
	t.Helper()
	g, batch, applied, results := holdOneCreate(t, s, m)
	for i, name := range names {
		results = append(results, async(func() (*store.Record, error) { return s.Create(ctx, m, teamPerson(name, "x")) }))
		waitApplied(t, s, applied+uint64(i)+2)
	}
	s.BeforeLogForTest(func() {})
	g.release()
	for _, r := range results {
		if r := <-r; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if got := s.DurableForTest(m); got != batch+2 {
		t.Fatalf("the writes took batches %d..%d, want %d and %d", batch+1, got, batch+1, batch+2)
	}
	return batch + 2
}

// holdOneCreate holds the log and sends one create to it: batch+1 is at
// the log when it returns, with applied writes before it. The gate is
// released when the test ends, if not before.
func holdOneCreate(t *testing.T, s *store.Store, m *model.Model) (g *gate, batch, applied uint64, results []<-chan result) {
	g = holdLog(s)
	t.Cleanup(g.release)
	batch, applied = s.DurableForTest(m), s.AppliedForTest()
	results = []<-chan result{async(func() (*store.Record, error) { return s.Create(ctx, m, teamPerson("held", "x")) })}
	<-g.entered
	return g, batch, applied, results
}

// TestWritesDuringAnFsyncShareOneBatch: writes that arrive one by one
// while the log is busy are each applied at once, and all go to the log
// together, as one batch, when it is free.
func TestWritesDuringAnFsyncShareOneBatch(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	if _, err := s.Create(ctx, m, teamPerson("first", "x")); err != nil {
		t.Fatal(err)
	}
	queueBehindAHeldBatch(t, s, m, "b", "c", "d", "e")
	if res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); err != nil || res.Total != 6 {
		t.Errorf("list = %d objects, %v; want 6", res.Total, err)
	}
}

// TestASmallBatchWaitsForTheLastBatchsWriters: once a batch has carried
// several writes, the next one is held back from the idle log until as
// many have arrived, so they share one fsync; a lone writer never waits.
// The wait is a minute here, so a batch that waited when it should not
// would hang the test, and one that did not wait would answer early.
func TestASmallBatchWaitsForTheLastBatchsWriters(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.WithGatherDelayForTest(store.Options{Dir: t.TempDir()}, time.Minute), m)
	for _, name := range []string{"a", "b", "c"} { // one writer: a batch each, no wait
		if _, err := s.Create(ctx, m, teamPerson(name, "x")); err != nil {
			t.Fatal(err)
		}
	}
	// Two writes behind a held one: the next batch carries both.
	batch := queueBehindAHeldBatch(t, s, m, "d", "e")
	// Now a write alone waits for a second one, and they share a batch.
	f := async(func() (*store.Record, error) { return s.Create(ctx, m, teamPerson("f", "x")) })
	select {
	case r := <-f:
		t.Fatalf("a lone write after a batch of two was answered at once (%v); want it to wait for a second", r.err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := s.Create(ctx, m, teamPerson("g", "x")); err != nil {
		t.Fatal(err)
	}
	if r := <-f; r.err != nil {
		t.Fatal(r.err)
	}
	if got := s.DurableForTest(m); got != batch+1 {
		t.Errorf("f and g took batches up to %d, want both in %d", got, batch+1)
	}
	// A control op (a watch subscription) ends the wait: the lone write
	// goes to the log alone, then the control op runs.
	h := async(func() (*store.Record, error) { return s.Create(ctx, m, teamPerson("h", "x")) })
	select {
	case r := <-h:
		t.Fatalf("a lone write after a batch of two was answered at once (%v)", r.err)
	case <-time.After(50 * time.Millisecond):
	}
	watched := make(chan error, 1)
	go func() {
		sub, err := s.Watch(ctx, m, store.WatchOptions{})
		if err == nil {
			sub.Close()
		}
		watched <- err
	}()
	select {
	case err := <-watched:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // the wait is a minute
		t.Fatal("the watch subscription waited out the batch's wait for writers")
	}
	if r := <-h; r.err != nil {
		t.Fatal(r.err)
	}
	if got := s.DurableForTest(m); got != batch+2 {
		t.Errorf("h took batch %d, want %d", got, batch+2)
	}
}

// TestViewsCopyOnlyTreesInUse: a tree no reader asks for over the cooling
// period leaves the views, so writes stop copying its nodes; a reader that
// needs it again brings it back and sees every acknowledged write in it.
func TestViewsCopyOnlyTreesInUse(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.WithCoolingForTest(store.Options{Dir: t.TempDir()}, 20*time.Millisecond), m)
	create := func(name string) {
		t.Helper()
		if _, err := s.Create(ctx, m, teamPerson(name, "x")); err != nil {
			t.Fatal(err)
		}
	}
	create("a")
	if !s.ViewHasTreeForTest(m, "spec.email") {
		t.Fatal("a fresh table's view lacks the email tree; want every tree")
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; s.ViewHasTreeForTest(m, "spec.email"); i++ {
		if time.Now().After(deadline) {
			t.Fatal("the email tree, read by no one, never left the views")
		}
		create(fmt.Sprint("p", i))
		if _, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dx")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !s.ViewHasTreeForTest(m, "metadata.labels") {
		t.Error("the labels tree, read by every list, left the views")
	}
	create("late")
	res, err := s.List(ctx, m, mustQuery(t, "fieldSelector=spec.email%3Dlate@example.com"))
	if err != nil || names(res) != "late" {
		t.Errorf("list by email = %s, %v; want late", names(res), err)
	}
	if !s.ViewHasTreeForTest(m, "spec.email") {
		t.Error("the email tree did not come back to the views")
	}
}

// TestCountsLeaveTheCreationTreeCold: a count needs no order, so a table
// that is only counted (a controller's counts, say) lets the creation tree
// leave the views, and creates stop copying its newest nodes on every
// batch. A count that must visit every object still gets the tree.
func TestCountsLeaveTheCreationTreeCold(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.WithCoolingForTest(store.Options{Dir: t.TempDir()}, 20*time.Millisecond), m)
	const created = "metadata.creationTimestamp"
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; s.ViewHasTreeForTest(m, created); i++ {
		if time.Now().After(deadline) {
			t.Fatal("the creation tree, read by counts only, never left the views")
		}
		if _, err := s.Create(ctx, m, teamPerson(fmt.Sprint("p", i), "x")); err != nil {
			t.Fatal(err)
		}
		n, err := s.Count(ctx, m, mustQuery(t, "fieldSelector=spec.email%3Dp0@example.com"))
		if err != nil || n != 1 {
			t.Fatalf("count by email = %d, %v; want 1", n, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	n, err := s.Count(ctx, m, mustQuery(t, "labelSelector=team!%3Dy&fieldSelector=spec.email!%3Dnobody@example.com"))
	if err != nil || n < 2 {
		t.Fatalf("count of team!=y, spec.email!=nobody = %d, %v", n, err)
	}
	if !s.ViewHasTreeForTest(m, created) {
		t.Error("a count with no candidate set did not bring the creation tree back")
	}
}

// TestAnOpenBatchStopsAtMaxBatch: while the log is busy the open batch
// takes at most 512 writes; the rest wait in the queue and make the next
// batch.
func TestAnOpenBatchStopsAtMaxBatch(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	g, batch, applied, results := holdOneCreate(t, s, m)
	for i := range 600 {
		results = append(results, async(func() (*store.Record, error) { return s.Create(ctx, m, teamPerson(fmt.Sprint("p", i), "x")) }))
	}
	waitApplied(t, s, applied+1+512)
	time.Sleep(50 * time.Millisecond) // the other 88 have had time to be applied
	if got := s.AppliedForTest() - applied; got != 1+512 {
		t.Errorf("%d writes applied while the log was held; want the held one and a full batch of 512", got)
	}
	g.release()
	for _, r := range results {
		if r := <-r; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if got := s.DurableForTest(m); got < batch+3 {
		t.Errorf("durable batch %d, want at least %d: the held write, 512, then the other 88", got, batch+3)
	}
}

// TestABatchReadsItsOwnWrites: writes applied to one open batch see the
// batch's earlier writes, not just the state it started from: a second
// create of a name is refused, so is a create with a unique key taken
// earlier in the batch, an update on a stale version conflicts, and an
// object removed for good earlier in the batch is gone.
func TestABatchReadsItsOwnWrites(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	mustCreate := func(p *storetest.Person) *storetest.Person {
		t.Helper()
		rec, err := s.Create(ctx, m, p)
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, rec)
	}
	upd := mustCreate(teamPerson("upd", "x"))
	held := teamPerson("gone", "x")
	held.Metadata.Finalizers = []string{"example.com/hold"}
	mustCreate(held)
	marked, err := s.Delete(ctx, m, "gone")
	if err != nil {
		t.Fatal(err)
	}
	gone := decode(t, marked)

	g, batch, applied, results := holdOneCreate(t, s, m)
	for i, fn := range []func() (*store.Record, error){
		func() (*store.Record, error) { return s.Create(ctx, m, teamPerson("dup", "x")) },
		func() (*store.Record, error) { return s.Create(ctx, m, teamPerson("dup", "y")) },
		func() (*store.Record, error) {
			p := teamPerson("mail2", "x")
			p.Spec.Email = "dup@example.com" // the first dup's: a unique index
			return s.Create(ctx, m, p)
		},
		func() (*store.Record, error) { p := *upd; p.Spec.Name = "one"; return s.Update(ctx, m, &p) },
		func() (*store.Record, error) { p := *upd; p.Spec.Name = "two"; return s.Update(ctx, m, &p) },
		func() (*store.Record, error) { p := *gone; p.Metadata.Finalizers = nil; return s.Update(ctx, m, &p) },
		func() (*store.Record, error) {
			p := *gone
			p.Metadata.Finalizers = nil
			p.Spec.Name = "z"
			return s.Update(ctx, m, &p)
		},
	} {
		results = append(results, async(fn))
		waitApplied(t, s, applied+uint64(i)+2)
	}
	g.release()
	var errs []error
	for _, r := range results[1:] {
		errs = append(errs, (<-r).err)
	}
	var unique *store.UniqueError
	if !errors.As(errs[2], &unique) {
		t.Errorf("write 3: err = %v, want a unique index clash", errs[2])
	}
	for i, want := range []error{nil, store.ErrAlreadyExists, store.ErrConflict, nil, store.ErrConflict, nil, store.ErrNotFound} {
		if got := errs[i]; want == nil && got != nil || want != nil && !errors.Is(got, want) {
			t.Errorf("write %d: err = %v, want %v", i+1, got, want)
		}
	}
	if got := s.DurableForTest(m); got != batch+2 {
		t.Fatalf("the writes took batches %d..%d, want %d and %d", batch+1, got, batch+1, batch+2)
	}
	if rec, err := s.Get(ctx, m, "upd"); err != nil || decode(t, rec).Spec.Name != "one" {
		t.Errorf("upd = %v, %v; want the first update's spec", rec, err)
	}
	if _, err := s.Get(ctx, m, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("gone: err = %v, want not found", err)
	}
}
