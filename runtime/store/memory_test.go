package store_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// collectable reports whether the object cleanup watches becomes garbage
// within a few collections.
func collectable(gone <-chan struct{}) bool {
	for range 20 {
		runtime.GC()
		select {
		case <-gone:
			return true
		case <-time.After(5 * time.Millisecond):
		}
	}
	return false
}

// updateAndForget updates spec.age of cur and returns a channel closed
// once cur (the version replaced) is collected, after a create of another
// object pushes the update out of the watch history (WatchBuffer 1) and a
// list takes a fresh view.
func updateAndForget(t *testing.T, s *store.Store, m *model.Model, cur *store.Record) <-chan struct{} {
	t.Helper()
	ctx := context.Background()
	gone := make(chan struct{})
	runtime.AddCleanup(cur, func(ch chan struct{}) { close(ch) }, gone)
	p, err := store.Decode(m, cur)
	if err != nil {
		t.Fatal(err)
	}
	p.(*storetest.Person).Spec.Age = storetest.Int64(*p.(*storetest.Person).Spec.Age + 1)
	if _, err := s.Update(ctx, m, p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprint("other-", time.Now().UnixNano()), storetest.PersonSpec{Name: "Other"})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, m, mustQuery(t, "sort=spec.age")); err != nil {
		t.Fatal(err)
	}
	return gone
}

// An update of an object with a few index keys leaves nothing pointing at
// the version it replaced: its JSON is garbage once no reader holds it.
// An object with many keys keeps it (its unchanged entries stay on it),
// as docs/operations.md says.
func TestUpdateDropsReplacedVersion(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{WatchBuffer: 1}, m)
	ctx := context.Background()
	for _, tc := range []struct {
		tags int
		kept bool
	}{{2, false}, {200, true}} {
		tags := make([]string, tc.tags)
		for i := range tags {
			tags[i] = fmt.Sprint("tag-", i)
		}
		cur, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprint("p", tc.tags), storetest.PersonSpec{Name: "P", Age: storetest.Int64(1), Tags: tags}))
		if err != nil {
			t.Fatal(err)
		}
		if got := collectable(updateAndForget(t, s, m, cur)); got == tc.kept {
			t.Errorf("%d tags: the replaced version collected = %v, want %v", tc.tags, got, !tc.kept)
		}
	}
}

// A view readers no longer take (a write made it stale) does not keep the
// records it held: a removed object is garbage without another reader.
func TestStaleViewDropsRemovedRecords(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{WatchBuffer: 1}, m)
	ctx := context.Background()
	rec, err := s.Create(ctx, m, storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, m, mustQuery(t, "sort=spec.age")); err != nil { // a view holding ann
		t.Fatal(err)
	}
	gone := make(chan struct{})
	runtime.AddCleanup(rec, func(ch chan struct{}) { close(ch) }, gone)
	rec = nil
	if _, err := s.Delete(ctx, m, "ann"); err != nil {
		t.Fatal(err)
	}
	// Out of the watch history (one change), with no list after.
	if _, err := s.Create(ctx, m, storetest.NewPerson("bob", storetest.PersonSpec{Name: "Bob"})); err != nil {
		t.Fatal(err)
	}
	if !collectable(gone) {
		t.Error("a removed object is still reachable: the table's stale view holds it")
	}
}
