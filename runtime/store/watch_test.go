package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/watch"
)

func next(t *testing.T, sub *store.Subscription) store.Event {
	t.Helper()
	select {
	case ev, ok := <-sub.C:
		if !ok {
			t.Fatalf("subscription closed: %v", sub.Err())
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return store.Event{}
}

func TestWatchOrderAndSelectors(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	seed := storetest.NewPerson("old", Spec{Name: "Old"})
	seed.Metadata.Labels = map[string]string{"team": "x"}
	if _, err := s.Create(ctx, m, seed); err != nil {
		t.Fatal(err)
	}
	all, err := s.Watch(ctx, m, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	teamX, err := s.Watch(ctx, m, store.WatchOptions{Query: mustQuery(t, "labelSelector=team%3Dx"), SendInitial: true})
	if err != nil {
		t.Fatal(err)
	}
	defer teamX.Close()
	one, err := s.Watch(ctx, m, store.WatchOptions{Name: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()

	if ev := next(t, teamX); ev.Type != watch.Added || ev.Object.Name != "old" {
		t.Fatalf("initial event = %s %s, want ADDED old", ev.Type, ev.Object.Name)
	}
	p := storetest.NewPerson("ann", Spec{Name: "Ann"})
	rec, err := s.Create(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	// ann joins team x, then leaves it, then is deleted.
	a := decode(t, rec)
	a.Metadata.Labels = map[string]string{"team": "x"}
	if rec, err = s.Update(ctx, m, a); err != nil {
		t.Fatal(err)
	}
	a = decode(t, rec)
	a.Metadata.Labels = map[string]string{"team": "y"}
	if rec, err = s.Update(ctx, m, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, m, "ann"); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		sub    *store.Subscription
		events string
	}{
		{all, "ADDED ann v0, MODIFIED ann v1, MODIFIED ann v2, DELETED ann v3"},
		{teamX, "ADDED ann v1, DELETED ann v2"},
		{one, "ADDED ann v0, MODIFIED ann v1, MODIFIED ann v2, DELETED ann v3"},
	}
	for i, w := range want {
		var got string
		for j := range len(splitEvents(w.events)) {
			ev := next(t, w.sub)
			if j > 0 {
				got += ", "
			}
			got += fmt.Sprintf("%s %s v%d", ev.Type, ev.Object.Name, ev.Object.Version)
		}
		if got != w.events {
			t.Errorf("watcher %d saw %q, want %q", i, got, w.events)
		}
	}
}

func splitEvents(s string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] == ',' && s[i+1] == ' ' {
			out = append(out, s[start:i])
			start = i + 2
		}
	}
	return append(out, s[start:])
}

func TestSlowWatcherIsDroppedWritersGoOn(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{WatchBuffer: 4}, m)
	slow, err := s.Watch(ctx, m, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("p%d", i), Spec{Name: "x"})); err != nil {
			t.Fatalf("write %d blocked or failed: %v", i, err)
		}
	}
	n := 0
	for range slow.C {
		n++
	}
	if n != 4 || !errors.Is(slow.Err(), watch.ErrSlow) {
		t.Fatalf("slow watcher got %d events then %v, want 4 then ErrSlow", n, slow.Err())
	}
}

func TestWatchEndsOnUnregister(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	sub, err := s.Watch(ctx, m, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Unregister(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-sub.C; ok || !errors.Is(sub.Err(), watch.ErrClosed) {
		t.Fatalf("watch after unregister: open=%v err=%v, want closed with ErrClosed", ok, sub.Err())
	}
}

// TestWatchInitialEventsAreStreamed: the initial events of a watch of a
// table are listed as the watcher takes them, in a channel no larger than
// the store's watch buffer, and a write made meanwhile follows them; a
// watch of one named object starts with that object alone.
func TestWatchInitialEventsAreStreamed(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{Dir: t.TempDir(), WatchBuffer: 16}, m)
	const n = 2000
	for i := range n {
		if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("p%04d", i), Spec{Name: "P"})); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := s.Watch(ctx, m, store.WatchOptions{SendInitial: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if c := cap(sub.C); c > 16 {
		t.Errorf("cap(C) = %d for %d initial events: room for the whole table", c, n)
	}
	// Nobody reads yet: writes still go through.
	if _, err := s.Create(ctx, m, storetest.NewPerson("zed", Spec{Name: "Z"})); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if ev := next(t, sub); ev.Type != watch.Added || ev.Object.Name != fmt.Sprintf("p%04d", i) {
			t.Fatalf("initial event %d = %s %s", i, ev.Type, ev.Object.Name)
		}
	}
	if ev := next(t, sub); ev.Type != watch.Added || ev.Object.Name != "zed" {
		t.Fatalf("after the initial events: %s %s, want ADDED zed", ev.Type, ev.Object.Name)
	}

	one, err := s.Watch(ctx, m, store.WatchOptions{Name: "p0007", SendInitial: true})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	missing, err := s.Watch(ctx, m, store.WatchOptions{Name: "nobody", SendInitial: true})
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Close()
	if ev := next(t, one); ev.Type != watch.Added || ev.Object.Name != "p0007" {
		t.Fatalf("named watch: %s %s, want ADDED p0007", ev.Type, ev.Object.Name)
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson("nobody", Spec{Name: "N"})); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, missing); ev.Type != watch.Added || ev.Object.Name != "nobody" || ev.Rev == 0 {
		t.Fatalf("named watch of a missing object: %s %s rev %d, want its creation", ev.Type, ev.Object.Name, ev.Rev)
	}
	if _, err := s.Delete(ctx, m, "p0007"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, one); ev.Type != watch.Deleted || ev.Object.Name != "p0007" {
		t.Fatalf("named watch: %s %s, want DELETED p0007", ev.Type, ev.Object.Name)
	}
}
