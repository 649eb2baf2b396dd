package plugin_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/svcrun/svc/runtime/plugin"
)

// generatedFor is a plugin whose generated code (svcgen -plugin) was made
// for another name than its Name says.
type generatedFor struct {
	*testPlugin
	generated string
}

func (p generatedFor) GeneratedFor() string { return p.generated }

func TestRefusesPluginGeneratedForAnotherName(t *testing.T) {
	wrong := generatedFor{&testPlugin{name: "books"}, "bookshelf"}
	right := generatedFor{&testPlugin{name: "people"}, "people"}
	e := start(t, "", "svc.run", wrong, right)
	msg := e.waitPhase("books", plugin.Failed)
	for _, want := range []string{`plugin "books"`, `generated for plugin "bookshelf"`, "-plugin books"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	e.waitPhase("people", plugin.Started)
	if n, _ := wrong.counts(); n != 0 {
		t.Errorf("Start of the refused plugin was called %d times", n)
	}
}

// TestWarnsOfAggregateToUnknownRole: a template aggregating into a role
// that does not exist (a misspelt anonymous) starts, with a warning in
// the log; one naming a built-in role or its own template does not warn.
func TestWarnsOfAggregateToUnknownRole(t *testing.T) {
	files := fstest.MapFS{"roles.yaml": {Data: []byte(strings.Join([]string{
		role("people-role-a", "anonymouse"),
		role("people-role-b", "anonymous"),
		role("people-role-c", "people-role-a"),
	}, "---\n"))}}
	p := peoplePlugin()
	p.files = files
	e := start(t, "", "svc.run", p)
	e.waitPhase("people", plugin.Started)
	var warned []string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(l, "aggregates to a role that does not exist") {
			warned = append(warned, l)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], `"role":"anonymouse"`) || !strings.Contains(warned[0], `"template":"people-role-a"`) {
		t.Errorf("warnings: %q", warned)
	}
}

func role(name, aggregateTo string) string {
	return `apiVersion: v1alpha1
kind: Role
metadata:
  name: ` + name + `
  labels:
    svc.run/role-template: "true"
    rbac.authorization.svc.run/aggregate-to-` + aggregateTo + `: "true"
rules:
  - apiGroups: ["people.example.com"]
    resources: ["persons"]
    verbs: ["get"]
`
}
