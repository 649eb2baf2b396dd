package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

func manyTags(n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%05d", i)
	}
	return tags
}

// Updating one field of an object with many keys in an index writes the
// entries of the keys that changed, not one per key: it used to rewrite
// them all (and compare every old key with every new one).
func TestUpdateWritesOnlyChangedKeys(t *testing.T) {
	const n = 5000
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{Dir: t.TempDir(), MaxIndexKeys: n}, m)
	p := storetest.NewPerson("big", Spec{Name: "Big", Age: storetest.Int64(1), Tags: manyTags(n)})
	p.Metadata.Labels = map[string]string{"team": "a"}
	rec, err := s.Create(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	before := s.EntryWritesForTest(m)
	u := decode(t, rec)
	u.Spec.Age = storetest.Int64(2)
	u.Spec.Tags = append(u.Spec.Tags[1:], "tag-new") // one key gone, one added
	if rec, err = s.Update(ctx, m, u); err != nil {
		t.Fatal(err)
	}
	// age: delete + set; tags: delete + set.
	if got := s.EntryWritesForTest(m) - before; got > 8 {
		t.Fatalf("update of 2 fields of an object with %d tags wrote %d index entries, want at most 8", n, got)
	}
	// Every index still answers with the newest version, through kept
	// entries (which point at the first version) and new ones alike.
	for i := 3; i < 6; i++ {
		u = decode(t, rec)
		u.Spec.Age = storetest.Int64(int64(i))
		if rec, err = s.Update(ctx, m, u); err != nil {
			t.Fatal(err)
		}
	}
	other := storetest.NewPerson("small", Spec{Name: "Small", Age: storetest.Int64(9), Tags: []string{"tag-00002"}})
	if _, err := s.Create(ctx, m, other); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"fieldSelector=spec.tags%3Dtag-00002":                            "small@0,big@4",
		"fieldSelector=spec.age%3D5":                                     "big@4",
		"fieldSelector=spec.age%3D1":                                     "",
		"fieldSelector=spec.tags%3Dtag-new":                              "big@4",
		"fieldSelector=spec.tags%3Dtag-00000":                            "",
		"fieldSelector=spec.tags%3Dtag-00002&fieldSelector=spec.age%3D5": "big@4",
		"fieldSelector=spec.tags%3Dtag-00002&fieldSelector=spec.age%3D1": "",
		"labelSelector=team%3Da":                                         "big@4",
		"sort=spec.tags&fieldSelector=spec.tags%3Dtag-00002":             "big@4,small@0",
		"sort=spec.age,desc":                                             "small@0,big@4",
		"sort=spec.tags,desc&fieldSelector=spec.tags%3Dtag-00002":        "big@4,small@0",
	} {
		res, err := s.List(ctx, m, mustQuery(t, q))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, r := range res.Items {
			got = append(got, fmt.Sprintf("%s@%d", r.Name, r.Version))
			if r.Name == "big" && !strings.Contains(string(r.Data), `"age":5`) {
				t.Errorf("%s: big is an old version: %.80s", q, r.Data)
			}
		}
		if g := strings.Join(got, ","); g != want {
			t.Errorf("%s: got %q, want %q", q, g, want)
		}
	}
	// Changing a label rewrites every entry (each carries the labels'
	// signature); lists still find the object by its kept keys.
	u = decode(t, rec)
	u.Metadata.Labels = map[string]string{"team": "b"}
	if rec, err = s.Update(ctx, m, u); err != nil {
		t.Fatal(err)
	}
	res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Db&fieldSelector=spec.tags%3Dtag-00003"))
	if err != nil || len(res.Items) != 1 || res.Items[0] != rec {
		t.Fatalf("after a label change: %v, %d items; want the newest version", err, len(res.Items))
	}
	// A removal takes every entry with it, kept ones included.
	u = decode(t, rec)
	if _, err := s.Delete(ctx, m, "big"); err != nil {
		t.Fatal(err)
	}
	if res, err := s.List(ctx, m, mustQuery(t, "fieldSelector=spec.tags%3Dtag-00003")); err != nil || len(res.Items) != 0 {
		t.Fatalf("after removal: %v, %d items", err, len(res.Items))
	}
}

// One object may put at most MaxIndexKeys keys into one index; beyond it
// a write is invalid, naming the field. An update may keep the keys an
// object stored under a higher limit has.
func TestMaxIndexKeys(t *testing.T) {
	m := storetest.PersonModel()
	dir := t.TempDir()
	s, err := store.Open(store.Options{Dir: dir, MaxIndexKeys: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, storetest.NewPerson("ok", Spec{Name: "Ok", Tags: manyTags(10)})); err != nil {
		t.Fatalf("10 keys under a limit of 10: %v", err)
	}
	p := storetest.NewPerson("over", Spec{Name: "Over", Tags: manyTags(11)})
	p.Metadata.Labels = map[string]string{}
	for i := range 11 {
		p.Metadata.Labels[fmt.Sprint("l", i)] = "v"
	}
	_, err = s.Create(ctx, m, p)
	var inv *object.InvalidError
	if !errors.As(err, &inv) || len(inv.Errors) != 2 || inv.Errors[0].Field != "metadata.labels" || inv.Errors[1].Field != "spec.tags" ||
		!strings.Contains(inv.Errors[1].Message, "11 index keys") || !strings.Contains(inv.Errors[1].Message, "at most 10") {
		t.Fatalf("11 labels and tags under a limit of 10: %v, want invalid metadata.labels and spec.tags", err)
	}
	if _, err := s.Get(ctx, m, "over"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("refused create stored something: %v", err)
	}
	rec, _ := s.Get(ctx, m, "ok")
	u := decode(t, rec)
	u.Spec.Tags = manyTags(11)
	if _, err := s.Update(ctx, m, u); !errors.As(err, &inv) || inv.Errors[0].Field != "spec.tags" {
		t.Fatalf("update to 11 tags: %v, want invalid spec.tags", err)
	}
	s.Close()

	// Under a lower limit, the stored object can still be changed.
	s = storetest.Open(t, store.Options{Dir: dir, MaxIndexKeys: 5}, m)
	rec, _ = s.Get(ctx, m, "ok")
	u = decode(t, rec)
	u.Spec.Age = storetest.Int64(3)
	if _, err := s.Update(ctx, m, u); err != nil {
		t.Fatalf("update keeping 10 stored keys under a limit of 5: %v", err)
	}
	if _, err := s.Delete(ctx, m, "ok"); err != nil {
		t.Fatalf("delete over the limit: %v", err)
	}
}
