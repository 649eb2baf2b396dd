package roles

import (
	"strings"

	"github.com/svcrun/svc/runtime/rbac"
)

// Operation is one HTTP operation of the plugin. Path placeholders such as
// {name} are kept as literal names, so a rule limited to resourceNames
// ["-"] grants only a path that spells "-".
type Operation struct {
	ID, Method, Path string
	// Upgrade marks a WebSocket request (a watch).
	Upgrade bool
}

// AccessMatrix renders a Markdown table with one row per operation (in the
// order given) and one column per template (in the order given), marking
// with ✓ each template that grants the operation. A template grants what
// its own rules grant plus, transitively, what the templates it depends on
// within ts grant; aggregation and roles outside ts are not counted, and a
// deleted template grants nothing.
func AccessMatrix(ts []Template, ops []Operation) string {
	byName := make(map[string]*Template, len(ts))
	for i := range ts {
		if _, dup := byName[ts[i].Name]; !dup {
			byName[ts[i].Name] = &ts[i]
		}
	}
	effective := make([][]rbac.PolicyRule, len(ts))
	for i := range ts {
		effective[i] = closure(&ts[i], byName)
	}

	var b strings.Builder
	b.WriteString("Which role template grants each operation. A template grants its own rules plus, transitively, the rules of the templates it depends on within this plugin; aggregation and roles outside the plugin are not counted, and a deleted template grants nothing.\n\n")
	b.WriteString("| Operation | Method | Path | Verb | Resource | Name |")
	for i := range ts {
		b.WriteString(" " + cell(ts[i].Name) + " |")
	}
	b.WriteString("\n|---|---|---|---|---|---|")
	for range ts {
		b.WriteString(":-:|")
	}
	b.WriteString("\n")
	for _, op := range ops {
		info := rbac.ParseRequestInfo(op.Method, op.Path, nil, op.Upgrade)
		resource, name := "(non-resource)", ""
		if info.IsResourceRequest {
			resource, name = info.APIGroup+" "+info.CombinedResource(), info.ResourceName()
			if info.APIGroup == "" {
				resource = info.CombinedResource()
			}
		}
		method := op.Method
		if op.Upgrade {
			method += " (WebSocket)"
		}
		b.WriteString("| " + cell(op.ID) + " | " + cell(method) + " | " + cell(op.Path) + " | " + cell(info.Verb) + " | " + cell(resource) + " | " + cell(name) + " |")
		for i := range ts {
			mark := " "
			if rbac.RulesAllow(effective[i], &info) {
				mark = "✓"
			}
			b.WriteString(" " + mark + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// closure collects the rules of t and of every template it depends on,
// transitively and once each, so dependency cycles end.
func closure(t *Template, byName map[string]*Template) []rbac.PolicyRule {
	var rules []rbac.PolicyRule
	seen := map[*Template]bool{}
	queue := []*Template{t}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if seen[cur] {
			continue
		}
		seen[cur] = true
		if !cur.Deleted {
			rules = append(rules, cur.Rules...)
		}
		for _, d := range cur.Dependencies {
			if dep := byName[d]; dep != nil {
				queue = append(queue, dep)
			}
		}
	}
	return rules
}

// cell escapes what would break a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
