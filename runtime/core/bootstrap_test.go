package core

import (
	"slices"
	"testing"

	"github.com/svcrun/svc/generator"
	"github.com/svcrun/svc/runtime/rbac"
)

// TestBuiltinRoles: the roles the service loads are the ones the
// generator lets role templates depend on, and of them only super-role
// reaches the profiling endpoint, while metrics-reader reaches /metrics
// and nothing else.
func TestBuiltinRoles(t *testing.T) {
	roles, err := BuiltinRoles("example.org")
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string][]rbac.PolicyRule{}
	var names []string
	for _, r := range roles {
		names = append(names, r.Metadata.Name)
		for _, p := range r.Rules {
			rules[r.Metadata.Name] = append(rules[r.Metadata.Name], rbac.PolicyRule{APIGroups: p.APIGroups, Resources: p.Resources,
				ResourceNames: p.ResourceNames, NonResourceURLs: p.NonResourceURLs, Verbs: p.Verbs})
		}
	}
	if !slices.Equal(names, generator.BuiltinRoles) {
		t.Errorf("built-in roles %v, generator.BuiltinRoles %v", names, generator.BuiltinRoles)
	}
	get := func(path string) *rbac.RequestInfo {
		info := rbac.ParseRequestInfo("GET", path, nil, false)
		return &info
	}
	for _, name := range names {
		want := name == "super-role"
		for _, p := range []string{"/debug/pprof/", "/debug/pprof/profile", "/debug/pprof/heap"} {
			if got := rbac.RulesAllow(rules[name], get(p)); got != want {
				t.Errorf("%s allows GET %s: %v, want %v", name, p, got, want)
			}
		}
		want = name == "super-role" || name == "metrics-reader"
		if got := rbac.RulesAllow(rules[name], get("/metrics")); got != want {
			t.Errorf("%s allows GET /metrics: %v, want %v", name, got, want)
		}
	}
	mr := rules["metrics-reader"]
	if len(mr) != 1 || !slices.Equal(mr[0].NonResourceURLs, []string{"/metrics"}) || !slices.Equal(mr[0].Verbs, []string{"get"}) || len(mr[0].Resources) != 0 {
		t.Errorf("metrics-reader rules = %+v, want get on /metrics only", mr)
	}
	for _, r := range roles {
		if r.Metadata.Name == "metrics-reader" {
			if dn := r.Metadata.Annotations["rbac.authorization.example.org/display-name"]; dn != "Metrics reader" {
				t.Errorf("metrics-reader display name = %q", dn)
			}
			if r.Metadata.Labels["rbac.authorization.example.org/system-reserved"] != "true" {
				t.Errorf("metrics-reader is not system-reserved: %v", r.Metadata.Labels)
			}
		}
	}
	if info := get("/metrics"); rbac.RulesAllow(mr, &rbac.RequestInfo{Path: "/metrics", Verb: "post"}) || !rbac.RulesAllow(mr, info) {
		t.Errorf("metrics-reader must allow GET /metrics and nothing else")
	}
}
