package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// TestStatusWrites: Update and Patch keep the stored status; UpdateStatus
// and PatchStatus write it and keep everything else.
func TestStatusWrites(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	p := storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann"})
	p.Status = &storetest.PersonStatus{FriendCount: 1}
	p, err := c.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status == nil || p.Status.FriendCount != 1 {
		t.Fatalf("created status = %+v, want the one given: in-process creators set the first status", p.Status)
	}

	p.Spec.Name = "Ann B"
	p.Status.FriendCount = 2
	if p, err = c.Update(ctx, p); err != nil || p.Spec.Name != "Ann B" || p.Status.FriendCount != 1 {
		t.Fatalf("Update = %+v %+v, %v; want the new name and friendCount 1", p.Spec, p.Status, err)
	}
	if p, err = c.Patch(ctx, "ann", codec.MergePatch, []byte(`{"spec":{"name":"Ann C"},"status":{"friendCount":2}}`)); err != nil ||
		p.Spec.Name != "Ann C" || p.Status.FriendCount != 1 {
		t.Fatalf("Patch = %+v %+v, %v; want the new name and friendCount 1", p.Spec, p.Status, err)
	}

	stale := *p
	p.Spec.Name = "ignored"
	p.Status.FriendCount = 3
	if p, err = c.UpdateStatus(ctx, p); err != nil || p.Spec.Name != "Ann C" || p.Status.FriendCount != 3 {
		t.Fatalf("UpdateStatus = %+v %+v, %v; want name Ann C and friendCount 3", p.Spec, p.Status, err)
	}
	if _, err := c.UpdateStatus(ctx, &stale); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UpdateStatus of a stale object: %v, want a conflict", err)
	}
	if p, err = c.PatchStatus(ctx, "ann", codec.MergePatch, []byte(`{"spec":{"name":"ignored"},"status":{"friendCount":4}}`)); err != nil ||
		p.Spec.Name != "Ann C" || p.Status.FriendCount != 4 {
		t.Fatalf("PatchStatus = %+v %+v, %v; want name Ann C and friendCount 4", p.Spec, p.Status, err)
	}
	if p, err = c.PatchStatus(ctx, "ann", codec.JSONPatch, []byte(`[{"op":"remove","path":"/status"}]`)); err != nil || p.Status != nil {
		t.Fatalf("PatchStatus removing the status = %+v, %v; want none", p.Status, err)
	}
	if p.Metadata.GetVersion() != 5 {
		t.Errorf("version = %d, want 5 (five writes that changed something)", p.Metadata.GetVersion())
	}
}
