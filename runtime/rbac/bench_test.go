package rbac

import (
	"fmt"
	"testing"
)

// rules200 builds 200 realistic rules (plugin-template shaped: groups,
// resources with subresources, path-like resourceNames, URL prefixes),
// none of which matches benchmark requests until the last.
func rules200() []PolicyRule {
	rules := make([]PolicyRule, 0, 200)
	for i := range 199 {
		g := fmt.Sprintf("console.api.p%d.example.com", i)
		switch i % 4 {
		case 0:
			rules = append(rules, PolicyRule{APIGroups: []string{g, "p.example.com"}, Resources: []string{"things", "others"}, Verbs: []string{"get", "list", "watch"}})
		case 1:
			rules = append(rules, PolicyRule{APIGroups: []string{g}, Resources: []string{"things/status", "*/refresh"}, Verbs: []string{"update", "patch"}})
		case 2:
			rules = append(rules, PolicyRule{APIGroups: []string{"people.example.com"}, Resources: []string{"persons"}, ResourceNames: []string{"items/summary", "-", "x*/*y"}, Verbs: []string{"get"}})
		default:
			rules = append(rules, PolicyRule{NonResourceURLs: []string{fmt.Sprintf("/apis/%s/v1/upload", g), "/healthz/*"}, Verbs: []string{"create", "get"}})
		}
	}
	return append(rules, PolicyRule{APIGroups: []string{"people.example.com"}, Resources: []string{"persons/greeting"}, ResourceNames: []string{"*"}, Verbs: []string{"get"}})
}

func BenchmarkRulesAllow200Rules(b *testing.B) {
	rules := rules200()
	for _, bc := range []struct {
		name         string
		method, path string
		want         bool
	}{
		{"LastRuleAllows", "GET", "/apis/people.example.com/v1alpha1/persons/ann/greeting", true},
		{"NoneAllows", "GET", "/apis/people.example.com/v1alpha1/persons/ann/status", false},
		{"NonResourceDenied", "POST", "/apis/console.api.x.example.com/v1/things/upload", false},
	} {
		info := ParseRequestInfo(bc.method, bc.path, nil, false)
		if got := RulesAllow(rules, &info); got != bc.want {
			b.Fatalf("%s %s: got %v, want %v", bc.method, bc.path, got, bc.want)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				RulesAllow(rules, &info)
			}
		})
	}
}

func TestRulesAllowDoesNotAllocate(t *testing.T) {
	rules := rules200()
	info := ParseRequestInfo("POST", "/apis/console.api.link.halo.run/v1alpha1/rss/items/i1/read", nil, false)
	if n := testing.AllocsPerRun(100, func() { RulesAllow(rules, &info) }); n != 0 {
		t.Errorf("RulesAllow allocated %v times per run, want 0", n)
	}
}

func BenchmarkParseRequestInfo(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ParseRequestInfo("GET", "/apis/people.example.com/v1alpha1/persons/ann/greeting", nil, false)
	}
}
