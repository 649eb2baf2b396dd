package roles

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/rbac"
)

const exampleDir = "../../example-plugin/extensions"

// corpusDir finds the Halo plugin corpus (outside the module); tests that
// need it skip when it is absent.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SVC_HALO_CORPUS")
	if dir == "" {
		dir = "../../../shared/corpus/halo-plugins"
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("Halo plugin corpus not found at %s (set SVC_HALO_CORPUS): %v", dir, err)
	}
	return dir
}

// corpusTemplates loads the templates of every corpus plugin, by plugin
// folder name.
func corpusTemplates(t *testing.T) map[string][]Template {
	t.Helper()
	root := corpusDir(t)
	plugins, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]Template{}
	for _, p := range plugins {
		if !p.IsDir() {
			continue
		}
		ts, err := Load(filepath.Join(root, p.Name(), "extensions"))
		if err != nil {
			t.Errorf("%s: %v", p.Name(), err)
		}
		out[p.Name()] = ts
	}
	return out
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadExample(t *testing.T) {
	ts, err := Load(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tpl := range ts {
		names = append(names, tpl.Name)
	}
	want := []string{"example-role-view-persons", "example-role-manage-persons", "example-role-public-greeting"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	view, manage, public := ts[0], ts[1], ts[2]
	if view.Line != 4 || view.File != filepath.Join(exampleDir, "roles.yaml") {
		t.Errorf("view template at %s:%d, want roles.yaml:4", view.File, view.Line)
	}
	if !reflect.DeepEqual(view.UIPermissions, []string{"plugin:example:person:view"}) ||
		!reflect.DeepEqual(view.Rules, []rbac.PolicyRule{{APIGroups: []string{"people.example.com"}, Resources: []string{"persons"}, Verbs: []string{"get", "list", "watch"}}}) {
		t.Errorf("view template: %+v", view)
	}
	if !reflect.DeepEqual(manage.Dependencies, []string{"example-role-view-persons"}) ||
		manage.DependenciesKey != "rbac.authorization.svc.run/dependencies" {
		t.Errorf("manage dependencies %v from %q", manage.Dependencies, manage.DependenciesKey)
	}
	if public.Labels["rbac.authorization.svc.run/aggregate-to-anonymous"] != "true" || len(public.RuleLines) != 1 {
		t.Errorf("public template: %+v", public)
	}
}

func TestLoadFiles(t *testing.T) {
	role := func(name string) string {
		return "apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: " + name + "\nrules: []\n"
	}
	dir := writeFiles(t, map[string]string{
		"a.yaml":        "# only a comment\n---\n---\n" + role("a1") + "---\nkind: Setting\nmetadata:\n  name: s\n---\n- a list\n---\n" + role("a2"),
		"b.yml":         role("b"),
		"c.txt":         role("c"),
		"d.YAML":        role("d"), // Halo's pattern is case-sensitive
		"nested/e.yaml": role("e"),
		"f.yaml":        "#apiVersion: v1alpha1\n#kind: Setting\n",
		"g.yaml":        "",
		"h.yaml":        "kind: \"Role\"\ngroupVersion: v1alpha1\nmetadata:\n  name: h\n  labels:\n    x.example.com/flag: true\n    x.example.com/n: 1\n  deletionTimestamp: 2024-02-18T08:27:41.257531Z\n",
	})
	ts, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tpl := range ts {
		got = append(got, filepath.Base(tpl.File)+":"+tpl.Name)
	}
	want := []string{"a.yaml:a1", "a.yaml:a2", "b.yml:b", "h.yaml:h"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %v, want %v", got, want)
	}
	if ts[0].Line != 4 {
		t.Errorf("a1 at line %d, want 4 (after the comment and empty documents)", ts[0].Line)
	}
	h := ts[3]
	if h.APIVersion != "v1alpha1" || !h.Deleted || h.Labels["x.example.com/flag"] != "true" || h.Labels["x.example.com/n"] != "1" {
		t.Errorf("h: %+v", h)
	}

	if ts, err := Load(filepath.Join(dir, "missing")); ts != nil || err != nil {
		t.Errorf("missing folder: %v, %v; want no templates and no error", ts, err)
	}
}

func TestLoadErrors(t *testing.T) {
	// yaml.v3 reports a parser error at the line before the construct it
	// was reading (its 0-based context line); the tests pin what it says.
	cases := []struct {
		name, body string
		line       int
		msg        string
	}{
		{"syntax", "apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: [a\n", 3, "did not find expected"},
		{"second document", "kind: Setting\n---\nkind: Role\nrules: {\n", 4, "did not find expected"},
		{"tab indentation", "kind: Role\nmetadata:\n\tname: x\n", 3, "tab"},
		{"wrong type", "apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: x\n  labels: [a, b]\n", 5, "cannot unmarshal"},
		{"rules not a list", "kind: Role\nrules: yes\n", 2, "rules must be a list"},
		{"rule of the wrong shape", "kind: Role\nrules:\n  - verbs: get\n", 3, "rule 1: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"bad.yaml": tc.body})
			_, err := Load(dir)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want *SyntaxError", err, err)
			}
			if filepath.Base(se.File) != "bad.yaml" || se.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %q (line %d), want bad.yaml line %d containing %q", err, se.Line, tc.line, tc.msg)
			}
			if !strings.Contains(err.Error(), "bad.yaml:") {
				t.Errorf("message %q does not name the file and line", err)
			}
		})
	}
}

func TestLoadAnnotations(t *testing.T) {
	dir := writeFiles(t, map[string]string{"r.yaml": `kind: Role
apiVersion: v1alpha1
metadata:
  name: r
  annotations:
    rbac.authorization.svc.run/dependencies: "   "
    rbac.authorization.svc.run/ui-permissions: '["plugin:x:a", 3]'
    rbac.authorization.svc.run/module: "[not json, and fine]"
`})
	ts, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := ts[0]
	if r.Dependencies != nil || r.DependenciesKey == "" || r.UIPermissions != nil || len(r.AnnotationErrors) != 1 ||
		!strings.Contains(r.AnnotationErrors[0], "rbac.authorization.svc.run/ui-permissions") {
		t.Errorf("blank dependencies and malformed ui-permissions: %+v", r)
	}
}

// TestLoadCorpus loads every corpus plugin's extensions: no YAML errors,
// and the 26 Role documents the corpus README counts.
func TestLoadCorpus(t *testing.T) {
	total := 0
	byName := map[string]Template{}
	for _, ts := range corpusTemplates(t) {
		total += len(ts)
		for _, tpl := range ts {
			byName[tpl.Name] = tpl
		}
	}
	if total != 26 {
		t.Errorf("loaded %d Role documents, want 26", total)
	}
	links := byName["role-template-link-manage"]
	if !reflect.DeepEqual(links.Dependencies, []string{"role-template-link-view"}) || len(links.Rules) != 9 {
		t.Errorf("role-template-link-manage: deps %v, %d rules", links.Dependencies, len(links.Rules))
	}
	if got := byName["role-template-link-view"].Rules[3]; !reflect.DeepEqual(got.ResourceNames, []string{"items/summary"}) || got.Resources[0] != "rss/-" {
		t.Errorf("link view rule 4: %+v", got)
	}
	if !byName["role-template-migration"].Deleted {
		t.Error("role-template-migration should be deleted")
	}
	if r := byName["role-template-uc-moments-approved"].Rules; len(r) != 1 || r[0].Verbs != nil {
		t.Errorf("moments marker role rules %+v, want one verb-less rule", r)
	}
	if deps := byName["role-template-manage-appstore"].Dependencies; !reflect.DeepEqual(deps, []string{"role-template-manage-plugins", "role-template-manage-themes"}) {
		t.Errorf("app-store dependencies %v", deps)
	}
}

func FuzzLoad(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(exampleDir, "roles.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("# comment\n---\nkind: Role\nmetadata: {name: x, labels: {a: b}}\nrules: [{verbs: [get]}]\n"))
	f.Add([]byte("kind: Role\nrules: [\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("kind: Role\nmetadata:\n  annotations:\n    rbac.authorization.x/dependencies: '[\"a\"'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		ts, err := Load(dir)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || filepath.Base(se.File) != "f.yaml" {
				t.Fatalf("error %v is not a SyntaxError naming f.yaml", err)
			}
			return
		}
		for _, tpl := range ts {
			if tpl.Line < 1 || len(tpl.RuleLines) != len(tpl.Rules) {
				t.Fatalf("bad template position: %+v", tpl)
			}
		}
		// Checking and rendering never fail on whatever loaded.
		Check(ts, Options{Plugin: "x"})
		AccessMatrix(ts, []Operation{{ID: "op", Method: "GET", Path: "/apis/g/v1/things"}})
	})
}
