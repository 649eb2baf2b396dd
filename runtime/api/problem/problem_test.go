package problem

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/svcrun/svc/runtime/store"
)

func TestUniqueClashNamesTheField(t *testing.T) {
	err := fmt.Errorf("store: create people.example.com/v1alpha1/Person/bob: %w",
		&store.UniqueError{Kind: "Person", Index: "spec.email", Value: "a@example.com", Holder: "ann"})
	p := From(err)
	if p.Status != http.StatusConflict {
		t.Fatalf("status %d, want 409", p.Status)
	}
	if len(p.Errors) != 1 || p.Errors[0].Field != "spec.email" {
		t.Fatalf("errors %+v, want one naming spec.email", p.Errors)
	}
	if want := `value "a@example.com" is already used by "ann"`; p.Errors[0].Message != want {
		t.Errorf("message %q, want %q", p.Errors[0].Message, want)
	}
	// Other conflicts name no field.
	if p := From(fmt.Errorf("x: %w", &store.ConflictError{})); p.Status != http.StatusConflict || len(p.Errors) != 0 {
		t.Errorf("version conflict: %d %+v", p.Status, p.Errors)
	}
}
