package store_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

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

// keysGone returns a channel closed once the allocation holding rec's
// keys section is collected (for a restored record, that of its JSON too).
func keysGone(rec *store.Record) <-chan struct{} {
	gone := make(chan struct{})
	runtime.AddCleanup(unsafe.StringData(rec.Sec), func(ch chan struct{}) { close(ch) }, gone)
	return gone
}

// settle pushes the last change out of the watch history (WatchBuffer 1)
// and has every index taken into a fresh view, so that only the indexes
// can still hold a replaced version.
func settle(t *testing.T, s *store.Store, m *model.Model) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprint("other-", time.Now().UnixNano()), storetest.PersonSpec{Name: "Other"})); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"sort=spec.age", "sort=spec.name", "sort=spec.email", "labelSelector=team%3Dred", "fieldSelector=spec.tags%3Dt1"} {
		if _, err := s.List(ctx, m, mustQuery(t, q)); err != nil {
			t.Fatal(err)
		}
	}
}

// No index entry or label posting keeps a version that is gone alive
// through its key strings. Entries with equal keys share one copy of the
// key (a search compares them by pointer); that copy must not be a piece
// of one record's allocation, or every record that ever held the key
// first would stay in memory as long as the key does: a restored record's
// keys share its JSON's allocation, so each update of a restored object
// kept its whole old version (30 MB of 100k persons after ten minutes of
// writes, docs/performance.md).
func TestReplacedVersionsKeepNoKeys(t *testing.T) {
	m := storetest.PersonModel()
	dir := t.TempDir()
	opts := store.Options{Dir: dir, WatchBuffer: 1}
	ctx := context.Background()
	person := func(name string) *storetest.Person {
		p := storetest.NewPerson(name, storetest.PersonSpec{Name: "Same", Age: storetest.Int64(30), Email: name + "@example.com", Tags: []string{"t1", "t2"}})
		p.Metadata.Labels = map[string]string{"team": "red"}
		return p
	}
	// current returns name's record and the channel of its keys.
	current := func(s *store.Store, name string) (*store.Record, <-chan struct{}) {
		t.Helper()
		rec, err := s.Get(ctx, m, name)
		if err != nil {
			t.Fatal(err)
		}
		return rec, keysGone(rec)
	}
	// update rewrites name's entries with its keys unchanged and returns
	// the channel of the version it replaced.
	update := func(s *store.Store, name string) <-chan struct{} {
		t.Helper()
		rec, gone := current(s, name)
		p := decode(t, rec)
		p.Metadata.Annotations = map[string]string{"n": fmt.Sprint(time.Now().UnixNano())} // not indexed
		if _, err := s.Update(ctx, m, p); err != nil {
			t.Fatal(err)
		}
		return gone
	}
	remove := func(s *store.Store, name string) <-chan struct{} {
		t.Helper()
		_, gone := current(s, name)
		if _, err := s.Delete(ctx, m, name); err != nil {
			t.Fatal(err)
		}
		return gone
	}
	check := func(s *store.Store, replaced map[string]<-chan struct{}) {
		t.Helper()
		settle(t, s, m)
		for what, gone := range replaced {
			if !collectable(gone) {
				t.Errorf("%s: the replaced version's keys are still reachable", what)
			}
		}
	}

	s := storetest.Open(t, opts, m)
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		if _, err := s.Create(ctx, m, person(name)); err != nil {
			t.Fatal(err)
		}
	}
	check(s, map[string]<-chan struct{}{
		"written, updated": update(s, "b"),
		"written, deleted": remove(s, "a"), // the first to hold the keys b..f hold
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Restored: the build shares keys among equal entries, and the keys
	// sit in the JSON's allocation.
	m = storetest.PersonModel()
	s = storetest.Open(t, opts, m)
	check(s, map[string]<-chan struct{}{
		"restored, updated":   update(s, "c"),
		"restored, deleted b": remove(s, "b"), // the first by name,
		"restored, deleted f": remove(s, "f"), // and the newest
	})
}
