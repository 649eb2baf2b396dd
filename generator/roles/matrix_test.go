package roles

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/rbac"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// exampleOps are the example plugin's operations (EXAMPLE_PLUGIN.md).
var exampleOps = []Operation{
	{ID: "listPersons", Method: "GET", Path: "/apis/people.example.com/v1alpha1/persons"},
	{ID: "watchPersons", Method: "GET", Path: "/apis/people.example.com/v1alpha1/persons", Upgrade: true},
	{ID: "createPerson", Method: "POST", Path: "/apis/people.example.com/v1alpha1/persons"},
	{ID: "deletePersons", Method: "DELETE", Path: "/apis/people.example.com/v1alpha1/persons"},
	{ID: "getPerson", Method: "GET", Path: "/apis/people.example.com/v1alpha1/persons/{name}"},
	{ID: "watchPerson", Method: "GET", Path: "/apis/people.example.com/v1alpha1/persons/{name}", Upgrade: true},
	{ID: "updatePerson", Method: "PUT", Path: "/apis/people.example.com/v1alpha1/persons/{name}"},
	{ID: "patchPerson", Method: "PATCH", Path: "/apis/people.example.com/v1alpha1/persons/{name}"},
	{ID: "deletePerson", Method: "DELETE", Path: "/apis/people.example.com/v1alpha1/persons/{name}"},
	{ID: "updatePersonStatus", Method: "PUT", Path: "/apis/people.example.com/v1alpha1/persons/{name}/status"},
	{ID: "greetPerson", Method: "GET", Path: "/apis/api.people.example.com/v1alpha1/persons/{name}/greeting"},
	{ID: "stats", Method: "GET", Path: "/apis/plugin.api.svc.run/v1alpha1/plugins/example/stats"},
	{ID: "statsCurrentGroup", Method: "GET", Path: "/apis/api.plugin.svc.run/v1alpha1/plugins/example/stats"},
}

func TestAccessMatrixGolden(t *testing.T) {
	ts, err := Load(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	got := AccessMatrix(ts, exampleOps)
	golden := filepath.Join("testdata", "example-matrix.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("access matrix differs from %s (run go test -update and review the diff):\n%s", golden, got)
	}
	if again := AccessMatrix(ts, exampleOps); again != got {
		t.Error("AccessMatrix is not deterministic")
	}
}

func TestAccessMatrixClosure(t *testing.T) {
	rule := func(res string) []rbac.PolicyRule {
		return []rbac.PolicyRule{{APIGroups: []string{"g"}, Resources: []string{res}, Verbs: []string{"get"}}}
	}
	ts := []Template{
		{Name: "a", Rules: rule("as"), Dependencies: []string{"b"}},
		{Name: "b", Rules: rule("bs"), Dependencies: []string{"a", "gone", "outside"}}, // cycle back to a
		{Name: "gone", Rules: rule("gones"), Deleted: true},
		{Name: "c", Rules: rule("cs"), Dependencies: []string{"gone"}},
	}
	ops := []Operation{
		{ID: "a", Method: "GET", Path: "/apis/g/v1/as/x"},
		{ID: "b", Method: "GET", Path: "/apis/g/v1/bs/x"},
		{ID: "gone", Method: "GET", Path: "/apis/g/v1/gones/x"},
		{ID: "c|pipe", Method: "GET", Path: "/apis/g/v1/cs/x"},
	}
	lines := strings.Split(strings.TrimSpace(AccessMatrix(ts, ops)), "\n")
	want := []string{
		"| a | GET | /apis/g/v1/as/x | get | g as | x | ✓ | ✓ |   |   |",
		"| b | GET | /apis/g/v1/bs/x | get | g bs | x | ✓ | ✓ |   |   |",
		"| gone | GET | /apis/g/v1/gones/x | get | g gones | x |   |   |   |   |",
		`| c\|pipe | GET | /apis/g/v1/cs/x | get | g cs | x |   |   |   | ✓ |`,
	}
	got := lines[len(lines)-len(want):]
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}
