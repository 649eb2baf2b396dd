package generator_test

import (
	"bufio"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/svcrun/svc/generator"
)

// repoRoot is the checkout this test runs in.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// generateLine is one //go:generate line that runs svcgen: the file it is
// in (it runs in that file's folder) and its arguments.
type generateLine struct {
	file string
	args []string
}

// generateLines finds every //go:generate line of the repository that runs
// svcgen; a file may hold several (generated/generate.go does).
func generateLines(t *testing.T, root string) []generateLine {
	t.Helper()
	var out []generateLine
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen "); ok {
				out = append(out, generateLine{file: path, args: strings.Fields(rest)})
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// parse reads svcgen flags the way the CLI does, relative to dir.
func parse(t *testing.T, dir string, args []string) generator.Config {
	t.Helper()
	fs := flag.NewFlagSet("svcgen", flag.ContinueOnError)
	var cfg generator.Config
	fs.StringVar(&cfg.Schema, "schema", "", "")
	fs.StringVar(&cfg.Extensions, "extensions", "", "")
	fs.StringVar(&cfg.Out, "out", ".", "")
	fs.StringVar(&cfg.Package, "package", "", "")
	fs.StringVar(&cfg.Plugin, "plugin", "", "")
	fs.StringVar(&cfg.Brand, "brand-domain", "svc.run", "")
	fs.BoolVar(&cfg.Core, "core", false, "")
	fs.BoolVar(&cfg.Register, "register", false, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	cfg.Schema, cfg.Extensions, cfg.Out = rel(cfg.Schema), rel(cfg.Extensions), rel(cfg.Out)
	return cfg
}

// TestGeneratedCodeIsCurrent fails when committed generated code differs
// from what the generator emits now: run `make generate`.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	root := repoRoot(t)
	lines := generateLines(t, root)
	if len(lines) < 3 {
		t.Fatalf("found %d svcgen go:generate lines, want the example plugin's, the core models' and the content models'", len(lines))
	}
	for _, l := range lines {
		cfg := parse(t, filepath.Dir(l.file), l.args)
		if err := generator.Check(cfg); err != nil {
			t.Errorf("%s (%s): %v", l.file, cfg.Schema, err)
		}
	}
}

// TestGoGenerateInAFreshModule runs the generator the way a plugin author
// does: go generate in their own module, then go build and go vet.
func TestGoGenerateInAFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module from scratch")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, from))
		if err != nil {
			t.Fatal(err)
		}
		write(to, string(b))
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := "1.26"
	for _, l := range strings.Split(string(goMod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goVersion = strings.TrimSpace(v)
		}
	}
	write("go.mod", "module example.org/people\n\ngo "+goVersion+"\n\nrequire github.com/svcrun/svc v0.0.0\n\nreplace github.com/svcrun/svc => "+root+"\n")
	copyFile("go.sum", "go.sum")
	copyFile("example-plugin/api/openapi.yaml", "person/api/openapi.yaml")
	copyFile("example-plugin/extensions/roles.yaml", "person/extensions/roles.yaml")
	write("person/doc.go", "// Package person is a plugin generated from its schema.\npackage person\n\n"+
		"//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -schema api/openapi.yaml -extensions extensions -out . -package person -plugin example\n")
	// A kind holding an initialism: oapi-codegen names its type
	// HTMLInjection, and every emitted identifier must follow.
	write("snippet/api/openapi.yaml", `openapi: 3.0.3
info: {title: snippets, version: 0.1.0}
paths: {}
components:
  schemas:
    HtmlInjection:
      x-svc-model: {group: snippets.example.com, version: v1alpha1, kind: HtmlInjection, plural: htmlinjections, singular: htmlinjection}
      x-svc-indexes:
        - {name: spec.pageUrl, field: spec.pageUrl}
      type: object
      required: [spec]
      properties:
        spec:
          type: object
          required: [priority]
          properties:
            pageUrl: {type: string}
            enabled: {type: boolean, default: true}
            priority: {type: integer, default: 5}
`)
	write("snippet/doc.go", "// Package snippet holds a model whose kind holds an initialism.\npackage snippet\n\n"+
		"//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -schema api/openapi.yaml -out . -package snippet -plugin snippets\n")
	// A user of the generated packages: registration, typed client, routes.
	write("main.go", `package main

import (
	"context"
	"fmt"
	"os"

	"example.org/people/person"
	"example.org/people/snippet"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/store"
)

func main() {
	st, err := store.Open(store.Options{Dir: os.Args[1]})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	m := person.PersonModel()
	if err := st.Register(context.Background(), m); err != nil {
		panic(err)
	}
	c := person.NewPersonClient(st, m)
	p := person.NewPerson("ann")
	p.Spec.Name = "Ann"
	if _, err := c.Create(context.Background(), p); err != nil {
		panic(err)
	}
	res, err := c.List(context.Background(), client.ListOptions{FieldSelector: []string{"spec.name=Ann"}})
	if err != nil {
		panic(err)
	}
	hm := snippet.HTMLInjectionModel()
	if err := st.Register(context.Background(), hm); err != nil {
		panic(err)
	}
	h := snippet.NewHTMLInjection("banner")
	url := "/about"
	h.Spec.PageURL = &url
	if _, err := snippet.NewHTMLInjectionClient(st, hm).Create(context.Background(), h); err != nil {
		panic(err)
	}
	// A body leaving out the defaulted fields, the required one included.
	o, err := codec.DecodeNew(hm, []byte(`+"`"+`{"apiVersion":"snippets.example.com/v1alpha1","kind":"HtmlInjection","metadata":{"name":"d"},"spec":{}}`+"`"+`))
	if err != nil {
		panic(err)
	}
	d := o.(*snippet.HTMLInjection)
	fmt.Println(res.Total, res.Items[0].Spec.Name, len(person.OpenAPI()) > 0, hm.Kind, h.Kind, *d.Spec.Enabled, d.Spec.Priority)
}
`)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// What an earlier svcgen wrote: regenerating must not leave its
	// declarations beside the new files, even under go generate, which
	// lists the package's files before running svcgen.
	retired := "// Code generated by svcgen. DO NOT EDIT.\n\npackage person\n\nconst PersonKind = \"Person\"\n"
	write("person/zz_generated.model.go", retired)
	run("generate", "./...")
	for _, f := range []string{generator.FileTypes, generator.FileValidate, generator.FileCodec, generator.FileIndex, generator.FileRegister, generator.FileClient, generator.FileRoutes, "zz_generated.schema.person.json", generator.FileOpenAPI, generator.FileAccess} {
		if _, err := os.Stat(filepath.Join(dir, "person", f)); err != nil {
			t.Errorf("go generate did not write %s: %v", f, err)
		}
	}
	run("build", "./...")
	run("vet", "./...")
	run("generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "person", "zz_generated.model.go")); !os.IsNotExist(err) {
		t.Errorf("the second go generate left the retired zz_generated.model.go (stat: %v)", err)
	}
	if out := run("run", ".", t.TempDir()); strings.TrimSpace(out) != "1 Ann true HtmlInjection HtmlInjection true 5" {
		t.Fatalf("program printed %q", out)
	}
}

// TestRefusesUnsupportedAndBadTemplates checks that schema constructs the
// validators cannot compile and template mistakes fail the run, located.
func TestRefusesUnsupportedAndBadTemplates(t *testing.T) {
	root := repoRoot(t)
	schema, err := os.ReadFile(filepath.Join(root, "example-plugin/api/openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := strings.Replace(string(schema), "maxLength: 100", "maxLength: 100\n          multipleOf: 2", 1)
	if err := os.WriteFile(filepath.Join(dir, "openapi.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = generator.Generate(generator.Config{Schema: filepath.Join(dir, "openapi.yaml"), Out: dir, Package: "p"})
	if err == nil || !strings.Contains(err.Error(), "openapi.yaml:") || !strings.Contains(err.Error(), "/components/schemas/PersonSpec/properties/name: multipleOf is not supported") {
		t.Fatalf("err = %v", err)
	}

	ext := filepath.Join(dir, "extensions")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	tmpl := `apiVersion: v1alpha1
kind: Role
metadata:
  name: example-role-bad
  labels:
    svc.run/role-template: "true"
rules:
  - apiGroups: [people.example.com]
    resources: [people]
    verbs: [get]
`
	if err := os.WriteFile(filepath.Join(ext, "roles.yaml"), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = generator.Generate(generator.Config{Schema: filepath.Join(root, "example-plugin/api/openapi.yaml"), Extensions: ext, Out: dir, Package: "p", Plugin: "example"})
	if err == nil || !strings.Contains(err.Error(), "roles.yaml:") || !strings.Contains(err.Error(), "people") {
		t.Fatalf("err = %v", err)
	}
}

// TestLenientTemplates ports a Halo template as it is: a strict run
// refuses its name and its rule on a resource the plugin does not serve,
// a lenient one warns of both and generates; a hard mistake fails either.
func TestLenientTemplates(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	ext := filepath.Join(dir, "extensions")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	// Halo's template, with its rule's last line given.
	write := func(last string) {
		t.Helper()
		tmpl := "apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: role-template-view-umami\n  labels:\n    halo.run/role-template: \"true\"\n" +
			"rules:\n  - apiGroups: [\"\"]\n    resources: [configmaps]\n" + last + "\n"
		if err := os.WriteFile(filepath.Join(ext, "roles.yaml"), []byte(tmpl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("    resourceNames: [plugin-umami-configMap]\n    verbs: [get]")
	cfg := generator.Config{Schema: filepath.Join(root, "example-plugin/api/openapi.yaml"), Extensions: ext, Out: dir, Package: "p", Plugin: "umami", Brand: "halo.run"}
	if _, err := generator.Generate(cfg); err == nil || !strings.Contains(err.Error(), `name must start with "umami-"`) {
		t.Fatalf("strict: err = %v", err)
	}
	var warnings []string
	cfg.Lenient = true
	cfg.Warn = func(s string) { warnings = append(warnings, s) }
	files, err := generator.Generate(cfg)
	if err != nil {
		t.Fatalf("lenient: %v", err)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "roles.yaml:4: /metadata/name:") || !strings.Contains(warnings[1], `resource "configmaps" in group ""`) {
		t.Errorf("warnings = %q", warnings)
	}
	if !strings.Contains(string(files[generator.FileAccess]), "role-template-view-umami") {
		t.Error("ACCESS.md does not list the ported template")
	}

	write("    verbs: [peek]")
	if _, err := generator.Generate(cfg); err == nil || !strings.Contains(err.Error(), `unknown verb "peek"`) {
		t.Fatalf("lenient with an unknown verb: err = %v", err)
	}
}

func TestWarnsOfBadPluginName(t *testing.T) {
	root := repoRoot(t)
	for name, bad := range map[string]bool{"My_Plugin": true, "PluginLinks": true, "-x": true, strings.Repeat("a", 64): true, "links-pro": false} {
		var warnings []string
		_, err := generator.Generate(generator.Config{Schema: filepath.Join(root, "example-plugin/api/openapi.yaml"), Out: t.TempDir(), Package: "p", Plugin: name,
			Warn: func(s string) { warnings = append(warnings, s) }})
		if err != nil {
			t.Errorf("plugin %q: %v", name, err)
		}
		if warned := len(warnings) == 1 && strings.Contains(warnings[0], "plugin name"); warned != bad {
			t.Errorf("plugin %q: warnings %q", name, warnings)
		}
	}
}

// TestRefusesOperationIDsAlikeButForCase: a custom operation whose id is a
// generated one's in another case would give generated clients one method
// name twice, so the plugin's document is refused, naming both.
func TestRefusesOperationIDsAlikeButForCase(t *testing.T) {
	root := repoRoot(t)
	schema, err := os.ReadFile(filepath.Join(root, "example-plugin/api/openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := strings.Replace(string(schema), "operationId: getPersonGreeting", "operationId: GetPerson", 1)
	if err := os.WriteFile(filepath.Join(dir, "openapi.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = generator.Generate(generator.Config{Schema: filepath.Join(dir, "openapi.yaml"), Out: dir, Package: "p"})
	if err == nil || !strings.Contains(err.Error(), `("GetPerson")`) || !strings.Contains(err.Error(), `("getPerson")`) {
		t.Fatalf("err = %v", err)
	}
}
