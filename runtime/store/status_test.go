package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// statusFixture stores ann with a status, a label, an annotation and a
// finalizer, and returns it as stored.
func statusFixture(t *testing.T) (*store.Store, *model.Model, *Person) {
	t.Helper()
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	p := storetest.NewPerson("ann", Spec{Name: "Ann"})
	p.Metadata.Labels = map[string]string{"team": "a"}
	p.Metadata.Annotations = map[string]string{"note": "x"}
	p.Metadata.Finalizers = []string{"example.com/hold"}
	p.Status = &storetest.PersonStatus{FriendCount: 3}
	rec, err := s.Create(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	return s, m, decode(t, rec)
}

// TestUpdateKeepsStatus: a main-resource write changes the spec, and a
// change to the status in it is ignored.
func TestUpdateKeepsStatus(t *testing.T) {
	s, m, p := statusFixture(t)
	p.Spec.Name = "Ann B"
	p.Status = &storetest.PersonStatus{FriendCount: 99}
	rec, err := s.Update(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, rec)
	if got.Spec.Name != "Ann B" || got.Status == nil || got.Status.FriendCount != 3 {
		t.Errorf("after Update: spec.name %q, status %+v; want the new name and friendCount 3", got.Spec.Name, got.Status)
	}
	if rec.Version != 1 {
		t.Errorf("version = %d, want 1", rec.Version)
	}
	// Clearing the status is a change to it too.
	got.Status = nil
	got.Spec.Name = "Ann C"
	if rec, err = s.Update(ctx, m, got); err != nil {
		t.Fatal(err)
	}
	if got = decode(t, rec); got.Status == nil || got.Status.FriendCount != 3 {
		t.Errorf("after an Update without status: status %+v, want friendCount 3", got.Status)
	}
}

// TestUpdateOnlyStatusChangesNothing: an update that differs from the
// stored object in its status only is an identical write.
func TestUpdateOnlyStatusChangesNothing(t *testing.T) {
	s, m, p := statusFixture(t)
	p.Status.FriendCount = 7
	rec, err := s.Update(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != 0 || decode(t, rec).Status.FriendCount != 3 {
		t.Errorf("version %d, data %s; want version 0 and friendCount 3", rec.Version, rec.Data)
	}
}

// TestUpdateStatusKeepsTheRest: a status write changes the status only;
// spec, labels, annotations and finalizers stay as stored, and the
// version is still the precondition.
func TestUpdateStatusKeepsTheRest(t *testing.T) {
	s, m, p := statusFixture(t)
	p.Spec.Name = "Mallory"
	p.Metadata.Labels = map[string]string{"team": "b"}
	p.Metadata.Annotations = nil
	p.Metadata.Finalizers = nil
	p.Status = &storetest.PersonStatus{FriendCount: 4}
	rec, err := s.UpdateStatus(ctx, m, p)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, rec)
	if got.Status == nil || got.Status.FriendCount != 4 {
		t.Errorf("status = %+v, want friendCount 4", got.Status)
	}
	if got.Spec.Name != "Ann" || got.Metadata.Labels["team"] != "a" || got.Metadata.Annotations["note"] != "x" ||
		strings.Join(got.Metadata.Finalizers, ",") != "example.com/hold" {
		t.Errorf("UpdateStatus changed more than the status: %s", rec.Data)
	}
	if rec.Version != 1 {
		t.Errorf("version = %d, want 1", rec.Version)
	}
	// The old version is stale now.
	p.Status.FriendCount = 5
	if _, err := s.UpdateStatus(ctx, m, p); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UpdateStatus with version 0 after a write: %v, want a conflict", err)
	}
	p.Metadata.Version = nil
	if _, err := s.UpdateStatus(ctx, m, p); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UpdateStatus without a version: %v, want a conflict", err)
	}
	// Removing the status is a status write.
	got.Status = nil
	if rec, err = s.UpdateStatus(ctx, m, got); err != nil {
		t.Fatal(err)
	}
	if decode(t, rec).Status != nil || rec.Version != 2 {
		t.Errorf("after clearing the status: %s, want no status at version 2", rec.Data)
	}
}

// TestUpdateStatusOfUnstructured: models without a Go type keep and
// replace their status alike.
func TestUpdateStatusOfUnstructured(t *testing.T) {
	m := &model.Model{Group: "free.example.com", Version: "v1", Kind: "Thing", Plural: "things"}
	s := storetest.New(t, m)
	var u object.Unstructured
	if err := u.UnmarshalJSON([]byte(`{"metadata":{"name":"t"},"spec":{"a":1},"status":{"b":2}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, m, &u); err != nil {
		t.Fatal(err)
	}
	u.Fields["spec"] = []byte(`{"a":10}`)
	u.Fields["status"] = []byte(`{"b":20}`)
	rec, err := s.Update(ctx, m, &u)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec.Data), `"spec":{"a":10},"status":{"b":2}`) {
		t.Errorf("after Update: %s, want the new spec and the old status", rec.Data)
	}
	// Update left the stored status in u.
	u.Fields["spec"] = []byte(`{"a":100}`)
	u.Fields["status"] = []byte(`{"b":20}`)
	u.Metadata.SetVersion(rec.Version)
	if rec, err = s.UpdateStatus(ctx, m, &u); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec.Data), `"spec":{"a":10},"status":{"b":20}`) {
		t.Errorf("after UpdateStatus: %s, want the old spec and the new status", rec.Data)
	}
}

// TestUpdateIgnoresInvalidStatus: the status of a main-resource write is
// ignored, and so are its faults; a status write checks the status.
func TestUpdateIgnoresInvalidStatus(t *testing.T) {
	m := storetest.PersonModel()
	validate := m.Validate
	m.Validate = func(o object.Object, errs *object.FieldErrors) {
		validate(o, errs)
		if st := o.(*Person).Status; st != nil && st.FriendCount < 0 {
			errs.Add("status.friendCount", "must be at least 0")
		}
	}
	s := storetest.New(t, m)
	rec, err := s.Create(ctx, m, storetest.NewPerson("ann", Spec{Name: "Ann"}))
	if err != nil {
		t.Fatal(err)
	}
	p := decode(t, rec)
	p.Spec.Name = "Ann B"
	p.Status = &storetest.PersonStatus{FriendCount: -1}
	if rec, err = s.Update(ctx, m, p); err != nil {
		t.Fatalf("Update with an invalid, ignored status: %v", err)
	}
	p = decode(t, rec)
	p.Status = &storetest.PersonStatus{FriendCount: -1}
	var invalid *object.InvalidError
	if _, err := s.UpdateStatus(ctx, m, p); !errors.As(err, &invalid) || !strings.Contains(err.Error(), "status.friendCount") {
		t.Errorf("UpdateStatus with an invalid status: %v, want it refused naming status.friendCount", err)
	}
}
