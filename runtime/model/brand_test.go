package model_test

import (
	"strings"
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

func TestRebrandMovesServiceGroupsOnly(t *testing.T) {
	for _, tc := range []struct{ group, brand, want string }{
		{"plugin.svc.run", "halo.run", "plugin.halo.run"},
		{"svc.run", "halo.run", "halo.run"},
		{"", "halo.run", ""},
		{"people.example.com", "halo.run", "people.example.com"},
		{"plugin.svc.run", "svc.run", "plugin.svc.run"},
	} {
		m := &model.Model{Group: tc.group, Version: "v1", Kind: "Thing",
			Schema: []byte(`{"type":"object","x-svc-model":{"group":"` + tc.group + `","kind":"Thing"}}`)}
		if err := m.Rebrand(tc.brand); err != nil {
			t.Fatal(err)
		}
		if m.Group != tc.want || !strings.Contains(string(m.Schema), `"group":"`+tc.want+`"`) {
			t.Errorf("Rebrand(%q) of %q: group %q, schema %s; want %q in both", tc.brand, tc.group, m.Group, m.Schema, tc.want)
		}
	}
}

func TestToBrand(t *testing.T) {
	for _, tc := range []struct {
		domain, want string
		moved        bool
	}{
		{"svc.run", "halo.run", true},
		{"rbac.authorization.svc.run", "rbac.authorization.halo.run", true},
		{"xsvc.run", "xsvc.run", false},
		{"svc.run.example.com", "svc.run.example.com", false},
		{"", "", false},
	} {
		if got, moved := model.ToBrand(tc.domain, "halo.run"); got != tc.want || moved != tc.moved {
			t.Errorf("ToBrand(%q) = %q, %v; want %q, %v", tc.domain, got, moved, tc.want, tc.moved)
		}
	}
}
