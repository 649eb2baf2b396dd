package generator_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svcrun/svc/generator"
)

// bookshelf copies the bookshelf example's schema and templates into a
// temporary folder, each passed through its edit, and returns the
// generation config for them.
func bookshelf(t *testing.T, editSchema, editRoles func(string) string) generator.Config {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	for _, f := range []struct {
		from, to string
		edit     func(string) string
	}{
		{"examples/bookshelf/api/openapi.yaml", "api/openapi.yaml", editSchema},
		{"examples/bookshelf/extensions/roles.yaml", "extensions/roles.yaml", editRoles},
	} {
		b, err := os.ReadFile(filepath.Join(root, f.from))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if f.edit != nil {
			s = f.edit(s)
		}
		p := filepath.Join(dir, f.to)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return generator.Config{Schema: filepath.Join(dir, "api/openapi.yaml"), Extensions: filepath.Join(dir, "extensions"), Out: dir, Package: "bookshelf", Plugin: "bookshelf"}
}

// replace is strings.Replace that fails the test when old is absent.
func replace(t *testing.T, old, new string) func(string) string {
	return func(s string) string {
		t.Helper()
		if !strings.Contains(s, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

// lineOf is the 1-based line of the first line of file containing sub.
func lineOf(t *testing.T, file, sub string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			return i + 1
		}
	}
	t.Fatalf("%s lacks %q", file, sub)
	return 0
}

func wantLine(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want a line %q", want)
	}
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(l, want) {
			return
		}
	}
	t.Errorf("error lacks a line starting %q:\n%v", want, err)
}

// TestAllMistakesInOneRun: a bad index no longer hides a bad verb, and a
// template's mistake is located like a schema's, at the offending value.
func TestAllMistakesInOneRun(t *testing.T) {
	cfg := bookshelf(t,
		replace(t, "field: spec.isbn,", "field: spec.isbnn,"),
		replace(t, `verbs: ["create", "update", "patch", "delete"]`, "verbs:\n      - create\n      - updaet\n      - delete"))
	_, err := generator.Generate(cfg)
	rolesFile := filepath.Join(cfg.Extensions, "roles.yaml")
	wantLine(t, err, cfg.Schema+":"+itoa(lineOf(t, cfg.Schema, "spec.isbnn"))+": /components/schemas/Book/x-svc-indexes/1/field: ")
	wantLine(t, err, rolesFile+":"+itoa(lineOf(t, rolesFile, "- updaet"))+`: /rules/0/verbs/1: template "bookshelf-role-manage-books": rule 1: unknown verb "updaet" (did you mean "update"?)`)
}

// TestLoaderMistakesLocated: what the OpenAPI loader refuses (a pattern
// that is not a regular expression, a $ref to nothing) points at its
// line and pointer, not at line 1.
func TestLoaderMistakesLocated(t *testing.T) {
	cfg := bookshelf(t, replace(t, `pattern: "^[0-9]{9}`, `pattern: "^([0-9]{9}`), nil)
	_, err := generator.Generate(cfg)
	wantLine(t, err, cfg.Schema+":"+itoa(lineOf(t, cfg.Schema, "pattern:"))+": /components/schemas/BookSpec/properties/isbn/pattern: pattern does not compile")

	// An inline schema of a path: kin-openapi's own check, located.
	cfg = bookshelf(t, replace(t, `schema: {type: string}}`, `schema: {type: string, pattern: "("}}`), nil)
	_, err = generator.Generate(cfg)
	wantLine(t, err, cfg.Schema+":"+itoa(lineOf(t, cfg.Schema, "get:"))+": /paths/~1apis~1api.library.example.com~1v1alpha1~1books~1{name}~1summary/get: invalid OpenAPI document: ")

	cfg = bookshelf(t, replace(t, `$ref: "#/components/schemas/BookStatus"`, `$ref: "#/components/schemas/BookStatuss"`), nil)
	_, err = generator.Generate(cfg)
	wantLine(t, err, cfg.Schema+":"+itoa(lineOf(t, cfg.Schema, "BookStatuss"))+`: /components/schemas/Book/properties/status/$ref: $ref "#/components/schemas/BookStatuss" points at nothing`)
	if err != nil && !strings.Contains(err.Error(), `did you mean "BookStatus"?`) {
		t.Errorf("no suggestion: %v", err)
	}
}

// TestGroupNotServed: a rule in a group the plugin does not serve names
// the groups it does serve and points at the model's x-svc-model too.
func TestGroupNotServed(t *testing.T) {
	cfg := bookshelf(t, nil, replace(t, `apiGroups: ["library.example.com"]`, `apiGroups: ["library.example.org"]`))
	_, err := generator.Generate(cfg)
	rolesFile := filepath.Join(cfg.Extensions, "roles.yaml")
	wantLine(t, err, rolesFile+":"+itoa(lineOf(t, rolesFile, "library.example.org"))+`: /rules/0/apiGroups/0: template "bookshelf-role-view-books": rule 1: resource "books" in group "library.example.org" is not served by plugin "bookshelf": it serves nothing in group "library.example.org" (did you mean "library.example.com"?); its groups are: api.library.example.com, library.example.com`)
	wantLine(t, err, cfg.Schema+":"+itoa(lineOf(t, cfg.Schema, "x-svc-model:"))+`: /components/schemas/Book/x-svc-model: group "library.example.com" is declared here`)
}

// TestAggregateToUnknownRole: a misspelt aggregate-to label is a warning
// with the nearest known role; generation goes on.
func TestAggregateToUnknownRole(t *testing.T) {
	cfg := bookshelf(t, nil, replace(t, "aggregate-to-anonymous", "aggregate-to-anonymouse"))
	var warnings []string
	cfg.Warn = func(s string) { warnings = append(warnings, s) }
	if _, err := generator.Generate(cfg); err != nil {
		t.Fatal(err)
	}
	rolesFile := filepath.Join(cfg.Extensions, "roles.yaml")
	want := rolesFile + ":" + itoa(lineOf(t, rolesFile, "anonymouse")) + `: /metadata/labels/rbac.authorization.svc.run~1aggregate-to-anonymouse: template "bookshelf-role-public-summaries": label rbac.authorization.svc.run/aggregate-to-anonymouse: role "anonymouse" is neither built in nor a template of plugin "bookshelf"; did you mean "anonymous"?`
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings = %q\nwant [%q]", warnings, want)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestBookshelfPlugin is the minimal plugin of docs/plugins.md: its
// hand-written Go stays within 30 lines (the generator writes the rest),
// and its own tests run it in a server. It is a module of its own, as a
// plugin author's is, built against this checkout without the network.
func TestBookshelfPlugin(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples", "bookshelf")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated.") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// Code lines: blank lines and whole-line comments (the package
		// doc, the go:generate line) do not count.
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
				lines++
			}
		}
	}
	t.Logf("hand-written lines of Go: %d", lines)
	if lines > 30 {
		t.Errorf("the bookshelf plugin needs %d hand-written lines of Go, want at most 30", lines)
	}
	if testing.Short() {
		t.Skip("builds and runs the plugin's module")
	}
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in %s: %v\n%s", dir, err, out)
	}
}

// TestTidyHint: generated code imports gin, which a new plugin module
// does not require yet; svcgen says to run go mod tidy, and only then.
func TestTidyHint(t *testing.T) {
	cfg := bookshelf(t, nil, nil)
	var warnings []string
	cfg.Warn = func(s string) { warnings = append(warnings, s) }
	gomod := filepath.Join(cfg.Out, "go.mod")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(gomod, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("module library.example.com/bookshelf\n\ngo 1.26\n\nrequire github.com/svcrun/svc v0.0.0 // svcgen\n")
	if err := generator.Write(cfg); err != nil {
		t.Fatal(err)
	}
	want := gomod + " requires no module providing github.com/gin-gonic/gin, which the generated code imports: run go mod tidy before go build"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings = %q\nwant [%q]", warnings, want)
	}
	warnings = nil
	write("module library.example.com/bookshelf\n\ngo 1.26\n\nrequire (\n\tgithub.com/gin-gonic/gin v1.12.0\n\t\"github.com/svcrun/svc\" v0.0.0\n)\n")
	if err := generator.Write(cfg); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("tidy module: warnings = %q", warnings)
	}
}
