package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

var ctx = context.Background()

type Person = storetest.Person
type Spec = storetest.PersonSpec

func decode(t *testing.T, r *store.Record) *Person {
	t.Helper()
	var p Person
	if err := json.Unmarshal(r.Data, &p); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	return &p
}

func TestCreateSetsServerFields(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	p := storetest.NewPerson("ann", Spec{Name: "Ann"})
	p.Metadata.SetVersion(42)
	past := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	p.Metadata.CreationTimestamp = &past
	p.Metadata.DeletionTimestamp = &past
	p.Metadata.Finalizers = []string{"b.example.com/x", "a.example.com/y", "b.example.com/x"}
	rec, err := s.Create(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, rec)
	if got.APIVersion != "people.example.com/v1alpha1" || got.Kind != "Person" {
		t.Errorf("envelope = %q %q, want the model's", got.APIVersion, got.Kind)
	}
	if v := got.Metadata.GetVersion(); v != 0 || rec.Version != 0 {
		t.Errorf("version = %d (record %d), want 0", v, rec.Version)
	}
	if got.Metadata.CreationTimestamp == nil || got.Metadata.CreationTimestamp.Equal(past) {
		t.Errorf("creationTimestamp = %v, want the server's clock", got.Metadata.CreationTimestamp)
	}
	if got.Metadata.DeletionTimestamp != nil {
		t.Errorf("deletionTimestamp = %v, want none", got.Metadata.DeletionTimestamp)
	}
	if f := strings.Join(got.Metadata.Finalizers, ","); f != "a.example.com/y,b.example.com/x" {
		t.Errorf("finalizers = %s, want a sorted set", f)
	}
	again, err := s.Get(ctx, m, "ann")
	if err != nil || string(again.Data) != string(rec.Data) {
		t.Errorf("Get = %s, %v; want %s", again.Data, err, rec.Data)
	}
}

func TestCreateErrors(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	if _, err := s.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann", Email: "ann@example.com"})); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		obj    *Person
		is     error
		fields []string // for invalid objects
	}{
		{"duplicate name", storetest.NewPerson("ann", Spec{Name: "Other"}), store.ErrAlreadyExists, nil},
		{"unique index clash", storetest.NewPerson("bob", Spec{Name: "Bob", Email: "ann@example.com"}), store.ErrConflict, nil},
		{"every violation at once", storetest.NewPerson("Bad_Name", Spec{Age: storetest.Int64(151), Gender: "X"}), nil,
			[]string{"metadata.name", "spec.name", "spec.age", "spec.gender"}},
		{"no name", storetest.NewPerson("", Spec{Name: "x"}), nil, []string{"metadata.name"}},
		{"bad label", func() *Person {
			p := storetest.NewPerson("lab", Spec{Name: "x"})
			p.Metadata.Labels = map[string]string{"bad key!": "v"}
			return p
		}(), nil, []string{"metadata.labels[bad key!]"}},
		{"kind mismatch", func() *Person {
			p := storetest.NewPerson("kind", Spec{Name: "x"})
			p.Kind, p.APIVersion = "Dog", "v1"
			return p
		}(), nil, []string{"apiVersion", "kind"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Create(ctx, m, tc.obj)
			if tc.is != nil {
				if !errors.Is(err, tc.is) {
					t.Fatalf("err = %v, want %v", err, tc.is)
				}
				return
			}
			var inv *object.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("err = %v, want *object.InvalidError", err)
			}
			var got []string
			for _, fe := range inv.Errors {
				got = append(got, fe.Field)
			}
			if strings.Join(got, " ") != strings.Join(tc.fields, " ") {
				t.Errorf("fields = %v, want %v", got, tc.fields)
			}
		})
	}
	var ue *store.UniqueError
	_, err := s.Create(ctx, m, storetest.NewPerson("bob", Spec{Name: "Bob", Email: "ann@example.com"}))
	if !errors.As(err, &ue) || ue.Index != "spec.email" || ue.Value != "ann@example.com" || ue.Holder != "ann" {
		t.Errorf("unique error = %#v, want index spec.email value ann@example.com holder ann", ue)
	}
	res, _ := s.List(ctx, m, store.Query{})
	if res.Total != 1 {
		t.Errorf("after failed creates total = %d, want 1 (nothing half-written)", res.Total)
	}
}

func TestGenerateName(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	seen := map[string]bool{}
	for range 20 {
		p := storetest.NewPerson("", Spec{Name: "x"})
		p.Metadata.GenerateName = "guest-"
		rec, err := s.Create(ctx, m, p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(rec.Name, "guest-") || len(rec.Name) != len("guest-")+8 || seen[rec.Name] {
			t.Fatalf("generated name %q: want guest- plus 8 new characters", rec.Name)
		}
		seen[rec.Name] = true
	}
}

func TestUpdate(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	rec, err := s.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann", Email: "ann@example.com"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson("bob", Spec{Name: "Bob", Email: "bob@example.com"})); err != nil {
		t.Fatal(err)
	}
	created := decode(t, rec).Metadata.CreationTimestamp

	t.Run("missing version", func(t *testing.T) {
		p := decode(t, rec)
		p.Metadata.Version = nil
		if _, err := s.Update(ctx, m, p); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("err = %v, want conflict", err)
		}
	})
	t.Run("stale version", func(t *testing.T) {
		p := decode(t, rec)
		p.Metadata.SetVersion(7)
		if _, err := s.Update(ctx, m, p); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("err = %v, want conflict", err)
		}
	})
	t.Run("identical write keeps version", func(t *testing.T) {
		got, err := s.Update(ctx, m, decode(t, rec))
		if err != nil || got.Version != 0 {
			t.Fatalf("Update = v%d, %v; want v0 unchanged", got.Version, err)
		}
	})
	t.Run("change bumps version and keeps server fields", func(t *testing.T) {
		p := decode(t, rec)
		p.Spec.Age = storetest.Int64(30)
		other := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
		p.Metadata.CreationTimestamp = &other
		p.Metadata.DeletionTimestamp = &other
		got, err := s.Update(ctx, m, p)
		if err != nil {
			t.Fatal(err)
		}
		g := decode(t, got)
		if got.Version != 1 || g.Metadata.GetVersion() != 1 {
			t.Errorf("version = %d/%d, want 1", got.Version, g.Metadata.GetVersion())
		}
		if !g.Metadata.CreationTimestamp.Equal(*created) || g.Metadata.DeletionTimestamp != nil {
			t.Errorf("server fields changed: %v %v", g.Metadata.CreationTimestamp, g.Metadata.DeletionTimestamp)
		}
		rec = got
	})
	t.Run("unique clash on update", func(t *testing.T) {
		p := decode(t, rec)
		p.Spec.Email = "bob@example.com"
		if _, err := s.Update(ctx, m, p); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("err = %v, want unique clash", err)
		}
		cur, _ := s.Get(ctx, m, "ann")
		if cur.Version != 1 {
			t.Errorf("failed update changed the object to v%d", cur.Version)
		}
	})
	t.Run("not found", func(t *testing.T) {
		p := storetest.NewPerson("nobody", Spec{Name: "x"})
		p.Metadata.SetVersion(0)
		if _, err := s.Update(ctx, m, p); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("err = %v, want not found", err)
		}
	})
}

func TestDeleteAndFinalizers(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	p := storetest.NewPerson("ann", Spec{Name: "Ann", Email: "ann@example.com"})
	p.Metadata.Finalizers = []string{"example.com/keep"}
	if _, err := s.Create(ctx, m, p); err != nil {
		t.Fatal(err)
	}
	del, err := s.Delete(ctx, m, "ann")
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, del)
	if d.Metadata.DeletionTimestamp == nil || del.Version != 1 {
		t.Fatalf("deleted object = %s, want deletionTimestamp and version 1", del.Data)
	}
	again, err := s.Delete(ctx, m, "ann")
	if err != nil || again.Version != 1 || string(again.Data) != string(del.Data) {
		t.Fatalf("second delete = %s, %v; want no change", again.Data, err)
	}
	cur, err := s.Get(ctx, m, "ann")
	if err != nil || !cur.Deleting() {
		t.Fatalf("object with finalizer: Get = %v, want readable and deleting", err)
	}
	// An update can neither clear the deletion time...
	u := decode(t, cur)
	u.Metadata.DeletionTimestamp = nil
	u.Spec.Age = storetest.Int64(3)
	upd, err := s.Update(ctx, m, u)
	if err != nil || !upd.Deleting() {
		t.Fatalf("update of deleting object: %v, deleting=%v; want it still deleting", err, upd != nil && upd.Deleting())
	}
	// ...but removing the last finalizer removes the object for good.
	u = decode(t, upd)
	u.Metadata.Finalizers = nil
	if _, err := s.Update(ctx, m, u); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, m, "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after last finalizer = %v, want not found", err)
	}
	// The unique value is free again.
	if _, err := s.Create(ctx, m, storetest.NewPerson("ann2", Spec{Name: "Ann", Email: "ann@example.com"})); err != nil {
		t.Fatalf("reuse of a removed object's unique value: %v", err)
	}
	if _, err := s.Delete(ctx, m, "ann2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, m, "ann2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("object without finalizers after delete: %v, want not found", err)
	}
	if _, err := s.Delete(ctx, m, "ann2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of a missing object = %v, want not found", err)
	}
}

func TestDeleteCollection(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	for i, team := range []string{"a", "a", "b", "a"} {
		p := storetest.NewPerson("p"+string(rune('0'+i)), Spec{Name: "x"})
		p.Metadata.Labels = map[string]string{"team": team}
		if i == 3 {
			p.Metadata.Finalizers = []string{"example.com/f"}
		}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	q := mustQuery(t, "labelSelector=team%3Da")
	recs, err := s.DeleteCollection(ctx, m, q)
	if err != nil || len(recs) != 3 {
		t.Fatalf("DeleteCollection = %d, %v; want 3", len(recs), err)
	}
	res, _ := s.List(ctx, m, store.Query{})
	var names []string
	for _, r := range res.Items {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "p3,p2" {
		t.Errorf("left = %v, want p3 (finalizer, deleting) and p2 (team b)", names)
	}
}

func TestUnregisterKeepsData(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	if _, err := s.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann"})); err != nil {
		t.Fatal(err)
	}
	if err := s.Unregister(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, m, "ann"); !errors.Is(err, store.ErrNotRegistered) {
		t.Fatalf("Get on unregistered model = %v, want ErrNotRegistered", err)
	}
	m2 := storetest.PersonModel()
	if err := s.Register(ctx, m2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, m2, "ann"); err != nil {
		t.Fatalf("data after re-register: %v", err)
	}
	res, err := s.List(ctx, m2, mustQuery(t, "fieldSelector=spec.name%3DAnn"))
	if err != nil || res.Total != 1 {
		t.Fatalf("index rebuilt: total %d, %v; want 1", res.Total, err)
	}
}

func TestRegisterRejectsDuplicateUniqueValues(t *testing.T) {
	loose := storetest.PersonModel()
	loose.Indexes[2].Unique = false
	s := storetest.New(t, loose)
	for _, n := range []string{"a", "b"} {
		if _, err := s.Create(ctx, loose, storetest.NewPerson(n, Spec{Name: "x", Email: "same@example.com"})); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Unregister(ctx, loose); err != nil {
		t.Fatal(err)
	}
	strict := storetest.PersonModel()
	err := s.Register(ctx, strict)
	var ue *store.UniqueError
	if !errors.As(err, &ue) || ue.Index != "spec.email" {
		t.Fatalf("Register = %v, want a unique error on spec.email", err)
	}
	if s.Ready(strict) {
		t.Error("model registered despite the clash")
	}
	if err := s.Register(ctx, loose); err != nil {
		t.Fatalf("data must be intact for the loose model: %v", err)
	}
}

func TestReserveAnswersNotReadyUntilRegistered(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t)
	if _, err := s.Get(ctx, m, "ann"); !errors.Is(err, store.ErrNotRegistered) {
		t.Fatalf("before Reserve: %v, want ErrNotRegistered", err)
	}
	if err := s.Reserve(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann"})); !errors.Is(err, store.ErrNotReady) {
		t.Fatalf("after Reserve: %v, want ErrNotReady", err)
	}
	if err := s.Register(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann"})); err != nil {
		t.Fatalf("after Register: %v", err)
	}
}

// TestUpdateKeepsServerFields: an update cannot change creationTimestamp,
// deletionTimestamp or generateName, whatever the body says.
func TestUpdateKeepsServerFields(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	p := storetest.NewPerson("", Spec{Name: "x"})
	p.Metadata.GenerateName = "gen-"
	p.Metadata.Finalizers = []string{"example.com/keep"}
	rec, err := s.Create(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err = s.Delete(ctx, m, rec.Name); err != nil {
		t.Fatal(err)
	}
	before := decode(t, rec).Metadata
	u := decode(t, rec)
	u.Metadata.GenerateName = "other-"
	u.Metadata.CreationTimestamp, u.Metadata.DeletionTimestamp = nil, nil
	u.Spec.Name = "changed"
	got, err := s.Update(ctx, m, u)
	if err != nil {
		t.Fatal(err)
	}
	after := decode(t, got).Metadata
	if after.GenerateName != "gen-" || !after.CreationTimestamp.Equal(*before.CreationTimestamp) ||
		after.DeletionTimestamp == nil || !after.DeletionTimestamp.Equal(*before.DeletionTimestamp) {
		t.Errorf("server fields after update = %q %v %v, want %q %v %v", after.GenerateName, after.CreationTimestamp,
			after.DeletionTimestamp, before.GenerateName, before.CreationTimestamp, before.DeletionTimestamp)
	}
}

// TestUpdateKeepsEveryIndexCurrent: after an update, every index serves
// the new version, whether the update changed that index's keys or not.
func TestUpdateKeepsEveryIndexCurrent(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	p := storetest.NewPerson("p", Spec{Name: "Old", Email: "p@example.com", Age: storetest.Int64(30), Tags: []string{"x", "y"}})
	p.Metadata.Labels = map[string]string{"team": "a", "kind": "k"}
	if _, err := s.Create(ctx, m, p); err != nil {
		t.Fatal(err)
	}
	p2 := storetest.NewPerson("p", Spec{Name: "New", Email: "p@example.com", Age: storetest.Int64(30), Tags: []string{"y", "z"}})
	p2.Metadata.Labels = map[string]string{"team": "b", "kind": "k"}
	p2.Metadata.SetVersion(0)
	if _, err := s.Update(ctx, m, p2); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"labelSelector=kind%3Dk":                   "p@1", // unchanged label
		"labelSelector=team%3Db":                   "p@1",
		"labelSelector=team%3Da":                   "",
		"fieldSelector=spec.email%3Dp@example.com": "p@1", // unchanged field
		"fieldSelector=spec.age%3D30":              "p@1",
		"fieldSelector=spec.name%3DNew":            "p@1",
		"fieldSelector=spec.name%3DOld":            "",
		"fieldSelector=spec.tags%3Dy":              "p@1", // kept value of a multi-valued index
		"fieldSelector=spec.tags%3Dz":              "p@1",
		"fieldSelector=spec.tags%3Dx":              "",
		"sort=spec.age,desc":                       "p@1",
		"":                                         "p@1",
	} {
		res, err := s.List(ctx, m, mustQuery(t, q))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, r := range res.Items {
			got = append(got, fmt.Sprintf("%s@%d", r.Name, r.Version))
		}
		if g := strings.Join(got, ","); g != want || res.Total != int64(len(got)) {
			t.Errorf("%s: got %q (total %d), want %q", q, g, res.Total, want)
		}
	}
}

// An object being deleted takes no new finalizers, from any writer; its
// finalizers can still be removed (how deletion finishes).
func TestNoFinalizerAddedDuringDeletion(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	p := storetest.NewPerson("ann", Spec{Name: "Ann"})
	p.Metadata.Finalizers = []string{"example.com/a", "example.com/b"}
	if _, err := s.Create(ctx, m, p); err != nil {
		t.Fatal(err)
	}
	del, err := s.Delete(ctx, m, "ann")
	if err != nil {
		t.Fatal(err)
	}
	u := decode(t, del)
	u.Metadata.Finalizers = append(u.Metadata.Finalizers, "example.com/late")
	_, err = s.Update(ctx, m, u)
	var inv *object.InvalidError
	if !errors.As(err, &inv) || len(inv.Errors) != 1 || inv.Errors[0].Field != "metadata.finalizers" ||
		!strings.Contains(inv.Errors[0].Message, `"example.com/late"`) {
		t.Fatalf("adding a finalizer while deleting: %v, want an invalid metadata.finalizers naming it", err)
	}
	if cur, _ := s.Get(ctx, m, "ann"); cur.Version != del.Version {
		t.Fatalf("refused update changed the object: version %d, want %d", cur.Version, del.Version)
	}
	// Removing one (and changing other fields) is allowed.
	u = decode(t, del)
	u.Metadata.Finalizers = []string{"example.com/b"}
	u.Spec.Age = storetest.Int64(7)
	upd, err := s.Update(ctx, m, u)
	if err != nil {
		t.Fatalf("removing a finalizer while deleting: %v", err)
	}
	u = decode(t, upd)
	u.Metadata.Finalizers = nil
	if _, err := s.Update(ctx, m, u); err != nil {
		t.Fatalf("removing the last finalizer: %v", err)
	}
	if _, err := s.Get(ctx, m, "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the last finalizer: %v, want not found", err)
	}
}
