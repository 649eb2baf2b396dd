package model_test

import (
	"testing"

	"github.com/svcrun/svc/runtime/model"
)

func TestReservedGroup(t *testing.T) {
	for group, want := range map[string]bool{"": true, "svc.run": true, "content.svc.run": true, "a.b.svc.run": true,
		"people.example.com": false, "notsvc.run": false, "svc.run.example.com": false} {
		if got := model.ReservedGroup(group, "svc.run"); got != want {
			t.Errorf("ReservedGroup(%q) = %v", group, got)
		}
	}
	if model.InBrand("", "svc.run") {
		t.Error("the empty domain is in the brand")
	}
}
