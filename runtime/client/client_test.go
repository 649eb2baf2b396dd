package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/watch"
)

type person = storetest.Person

func newClient(t *testing.T) *client.Client[*person] {
	m := storetest.PersonModel()
	return client.New[*person](storetest.New(t, m), m)
}

func TestCRUD(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	p, err := c.Create(ctx, storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann", Age: storetest.Int64(30), Email: "ann@example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	if p.APIVersion != "people.example.com/v1alpha1" || p.Kind != "Person" || p.Metadata.GetVersion() != 0 || p.Metadata.CreationTimestamp == nil {
		t.Fatalf("created = %+v", p.Envelope)
	}
	got, err := c.Get(ctx, "ann")
	if err != nil || got.Spec.Name != "Ann" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	stale, _ := c.Get(ctx, "ann")
	got.Spec.Name = "Anna"
	up, err := c.Update(ctx, got)
	if err != nil || up.Metadata.GetVersion() != 1 || up.Spec.Name != "Anna" {
		t.Fatalf("update = %+v, %v", up, err)
	}
	stale.Spec.Name = "stale"
	if _, err := c.Update(ctx, stale); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale update err = %v", err)
	}
	pp, err := c.Patch(ctx, "ann", codec.MergePatch, []byte(`{"spec":{"age":31}}`))
	if err != nil || *pp.Spec.Age != 31 || pp.Metadata.GetVersion() != 2 {
		t.Fatalf("merge patch = %+v, %v", pp, err)
	}
	pp, err = c.Patch(ctx, "ann", codec.JSONPatch, []byte(`[{"op":"replace","path":"/spec/name","value":"Annie"}]`))
	if err != nil || pp.Spec.Name != "Annie" {
		t.Fatalf("json patch = %+v, %v", pp, err)
	}
	var ce *codec.Error
	if _, err := c.Patch(ctx, "ann", codec.JSONPatch, []byte(`{`)); !errors.As(err, &ce) {
		t.Fatalf("bad patch err = %v", err)
	}
	if _, err := c.Patch(ctx, "ann", codec.MergePatch, []byte(`{"metadata":{"name":"bob"}}`)); !errors.As(err, &ce) {
		t.Fatalf("rename patch err = %v", err)
	}
	var inv *object.InvalidError
	if _, err := c.Patch(ctx, "ann", codec.MergePatch, []byte(`{"spec":{"age":151}}`)); !errors.As(err, &inv) {
		t.Fatalf("invalid patch err = %v", err)
	}
	del, err := c.Delete(ctx, "ann")
	if err != nil || del.Metadata.DeletionTimestamp == nil {
		t.Fatalf("delete = %+v, %v", del, err)
	}
	if _, err := c.Get(ctx, "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete err = %v", err)
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	for i, n := range []string{"a", "b", "c", "d"} {
		p := storetest.NewPerson(n, storetest.PersonSpec{Name: n, Age: storetest.Int64(int64(20 + i))})
		p.Metadata.Labels = map[string]string{"team": []string{"x", "y"}[i%2]}
		if _, err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.List(ctx, client.ListOptions{LabelSelector: []string{"team=x"}, Sort: []string{"spec.age,desc"}, Page: 1, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || len(res.Items) != 1 || res.Items[0].Metadata.Name != "c" || !res.HasNext || res.TotalPages != 2 {
		t.Fatalf("list = %+v", res)
	}
	for _, tc := range []struct {
		opts client.ListOptions
		want int64
	}{
		{client.ListOptions{LabelSelector: []string{"team=x"}}, 2},
		{client.ListOptions{LabelSelector: []string{"team=x"}, Page: 3, Size: 1}, 2}, // paging is ignored
		{client.ListOptions{FieldSelector: []string{"spec.age=(20,23)"}}, 2},
		{client.ListOptions{LabelSelector: []string{"team=y"}, FieldSelector: []string{"spec.age=21"}}, 1},
		{client.ListOptions{LabelSelector: []string{"team=z"}}, 0},
		{client.ListOptions{}, 4},
	} {
		if n, err := c.Count(ctx, tc.opts); err != nil || n != tc.want {
			t.Errorf("Count(%+v) = %d, %v; want %d", tc.opts, n, err, tc.want)
		}
	}
	if _, err := c.Count(ctx, client.ListOptions{FieldSelector: []string{"spec.unknown=1"}}); err == nil {
		t.Error("Count on an unindexed field was accepted")
	}
	var pe *query.ParamError
	if _, err := c.List(ctx, client.ListOptions{Sort: []string{"spec.unknown"}}); err == nil {
		t.Fatal("sort on an unindexed field was accepted")
	}
	if _, err := c.List(ctx, client.ListOptions{Page: -1, Size: -5}); err != nil && !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
}

func TestWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := newClient(t)
	if _, err := c.Create(ctx, storetest.NewPerson("old", storetest.PersonSpec{Name: "old"})); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, client.WatchOptions{SendInitialEvents: true, FieldSelector: []string{"spec.name!=skip"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"skip", "new"} {
		if _, err := c.Create(ctx, storetest.NewPerson(n, storetest.PersonSpec{Name: n})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Delete(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ  watch.EventType
		name string
	}{{watch.Added, "old"}, {watch.Added, "new"}, {watch.Deleted, "new"}}
	for _, e := range want {
		ev, err := w.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != e.typ || ev.Object.Metadata.Name != e.name {
			t.Fatalf("event = %s %s, want %s %s", ev.Type, ev.Object.Metadata.Name, e.typ, e.name)
		}
	}
	w.Stop()
	if _, err := w.Next(ctx); !errors.Is(err, client.ErrStopped) {
		t.Fatalf("after stop err = %v", err)
	}
}
