package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeModule creates dir/go.mod declaring modPath.
func writeModule(t *testing.T, dir, modPath string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+modPath+" // a comment\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkoutRoot is the root of the svc checkout the test runs in.
func checkoutRoot(t *testing.T) string {
	t.Helper()
	root, mod, err := FindModule(".")
	if err != nil || mod != SvcModule {
		t.Fatalf("FindModule(.) = %q, %q, %v; want the svc checkout", root, mod, err)
	}
	return root
}

// offlineEnv is the environment of the builds that must not reach the
// network. They need svc's modules in the module cache, and more: a
// build module lists only svc and its plugins, so -mod=mod loads svc's
// whole module graph, including go.mod files that svc's own builds never
// read (go-immutable-radix, at go 1.12, names go-uuid), which a fresh
// module cache lacks. Both are fetched once, through the configured
// proxy, before the first offline build.
func offlineEnv(t *testing.T) []string {
	t.Helper()
	graphOnce.Do(func() {
		for _, args := range [][]string{{"mod", "download"}, {"list", "-m", "all"}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = checkoutRoot(t)
			if out, err := cmd.CombinedOutput(); err != nil {
				graphErr = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if graphErr != nil {
		t.Fatalf("loading svc's module graph into the module cache: %v", graphErr)
	}
	return []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off"}
}

var (
	graphOnce sync.Once
	graphErr  error
)

func TestParseWith(t *testing.T) {
	tmp := t.TempDir()
	modDir := filepath.Join(tmp, "mod")
	writeModule(t, modDir, "example.com/mod")
	subDir := filepath.Join(modDir, "sub")
	if err := os.Mkdir(subDir, 0o755); err != nil {
		t.Fatal(err)
	}
	noMod := t.TempDir()
	file := filepath.Join(modDir, "go.mod")

	tests := []struct {
		name string
		arg  string
		want Dependency
		err  string // substring of the error; empty means success
	}{
		{name: "module", arg: "example.com/plugin", want: Dependency{Path: "example.com/plugin"}},
		{name: "module at version", arg: "example.com/plugin@v1.2.3", want: Dependency{Path: "example.com/plugin", Version: "v1.2.3"}},
		{name: "package at version", arg: "example.com/mod/sub@v1.2.3", want: Dependency{Path: "example.com/mod/sub", Version: "v1.2.3"}},
		{name: "major version path", arg: "example.com/plugin/v2@v2.0.1", want: Dependency{Path: "example.com/plugin/v2", Version: "v2.0.1"}},
		{name: "query", arg: "example.com/plugin@latest", want: Dependency{Path: "example.com/plugin", Version: "latest"}},
		{name: "module from directory", arg: "example.com/mod=" + modDir, want: Dependency{Path: "example.com/mod", Replace: modDir}},
		{name: "package from module directory", arg: "example.com/mod/sub=" + modDir, want: Dependency{Path: "example.com/mod/sub", Replace: modDir}},
		{name: "bare module directory", arg: modDir, want: Dependency{Path: "example.com/mod", Replace: modDir}},
		{name: "bare package directory", arg: subDir, want: Dependency{Path: "example.com/mod/sub", Replace: modDir}},
		{name: "bare directory cleaned", arg: subDir + "/../sub/", want: Dependency{Path: "example.com/mod/sub", Replace: modDir}},

		{name: "empty", arg: "", err: "empty argument"},
		{name: "no path", arg: "@v1.2.3", err: "empty import path"},
		{name: "empty version", arg: "example.com/plugin@", err: "empty version"},
		{name: "version and directory", arg: "example.com/mod@v1=" + modDir, err: "not both"},
		{name: "empty directory", arg: "example.com/mod=", err: "empty directory"},
		{name: "other module in directory", arg: "example.com/other=" + modDir, err: "holds module example.com/mod"},
		{name: "prefix is not a parent", arg: "example.com/modx=" + modDir, err: "holds module example.com/mod"},
		{name: "directory without go.mod", arg: "example.com/mod=" + noMod, err: "go.mod"},
		{name: "bare directory outside any module", arg: noMod, err: "no go.mod"},
		{name: "missing directory", arg: filepath.Join(tmp, "missing"), err: "no such file"},
		{name: "file, not directory", arg: file, err: "not a directory"},
		{name: "quote in path", arg: `example.com/x"y`, err: "invalid character"},
		{name: "space in path", arg: "example.com/x y", err: "invalid character"},
		{name: "empty element", arg: "example.com//x", err: "empty path element"},
		{name: "dot element", arg: "example.com/./x", err: `element "."`},
		{name: "trailing slash", arg: "example.com/x/", err: "empty path element"},
		{name: "newline in version", arg: "example.com/x@v1\n", err: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWith(tt.arg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseWith(%q) = %+v, %v; want error containing %q", tt.arg, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseWith(%q) = %+v, %v; want %+v", tt.arg, got, err, tt.want)
			}
		})
	}
}

func TestParseWithRelative(t *testing.T) {
	tmp := t.TempDir()
	writeModule(t, filepath.Join(tmp, "plugin"), "example.com/plugin")
	t.Chdir(tmp)
	for _, arg := range []string{"./plugin", "plugin/../plugin/."} {
		// Only the ./ form is a directory; the other is an import path.
		got, err := ParseWith(arg)
		if arg == "./plugin" {
			want := Dependency{Path: "example.com/plugin", Replace: filepath.Join(tmp, "plugin")}
			if err != nil || got != want {
				t.Errorf("ParseWith(%q) = %+v, %v; want %+v", arg, got, err, want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseWith(%q) = %+v; want an error (not a directory form, bad import path)", arg, got)
		}
	}
	t.Chdir(filepath.Join(tmp, "plugin"))
	got, err := ParseWith(".")
	if want := (Dependency{Path: "example.com/plugin", Replace: filepath.Join(tmp, "plugin")}); err != nil || got != want {
		t.Errorf("ParseWith(.) = %+v, %v; want %+v", got, err, want)
	}
}

func TestModulePath(t *testing.T) {
	tests := []struct {
		name, goMod, want, err string
	}{
		{name: "plain", goMod: "module example.com/a\n\ngo 1.26\n", want: "example.com/a"},
		{name: "comment and blank lines", goMod: "// header\n\nmodule example.com/a // trailing\n", want: "example.com/a"},
		{name: "quoted", goMod: "module \"example.com/a\"\n", want: "example.com/a"},
		{name: "missing", goMod: "go 1.26\n", err: "no module directive"},
		{name: "bad quote", goMod: "module \"example.com/a\n", err: "module directive"},
		{name: "bad path", goMod: "module example.com/a;b\n", err: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tt.goMod), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ModulePath(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ModulePath(%q) = %q, %v; want error containing %q", tt.goMod, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ModulePath(%q) = %q, %v; want %q", tt.goMod, got, err, tt.want)
			}
		})
	}
}

func TestRenderMain(t *testing.T) {
	tests := []struct {
		name    string
		plugins []string
		want    string
	}{
		{name: "no plugins", want: `// Code generated by svcgen build. DO NOT EDIT.

// Command svc-custom-build is an svc server with plugins compiled in;
// each plugin package registers itself from init.
package main

import (
	"github.com/svcrun/svc/runtime/server"
)

func main() {
	server.Main(server.Config{})
}
`},
		{name: "two plugins", plugins: []string{"example.com/a", "example.com/mod/sub"}, want: `// Code generated by svcgen build. DO NOT EDIT.

// Command svc-custom-build is an svc server with plugins compiled in;
// each plugin package registers itself from init.
package main

import (
	"github.com/svcrun/svc/runtime/server"

	_ "example.com/a"
	_ "example.com/mod/sub"
)

func main() {
	server.Main(server.Config{})
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderMain(tt.plugins)
			if err != nil || string(got) != tt.want {
				t.Fatalf("renderMain(%q) = %v\n%s\nwant:\n%s", tt.plugins, err, got, tt.want)
			}
		})
	}
}

func TestRenderGoMod(t *testing.T) {
	tests := []struct {
		name string
		data goModData
		want string
	}{
		{name: "nothing replaced", data: goModData{Module: ModuleName, Go: GoVersion}, want: "module svc-custom-build\n\ngo 1.26\n"},
		{name: "replaced", data: goModData{
			Module:  ModuleName,
			Go:      GoVersion,
			Require: []modVersion{{"example.com/a", replacedVersion}, {SvcModule, replacedVersion}},
			Replace: []modDir{{"example.com/a", "/src/my plugin"}, {SvcModule, "/src/svc"}},
		}, want: `module svc-custom-build

go 1.26

require (
	example.com/a v0.0.0-00010101000000-000000000000
	github.com/svcrun/svc v0.0.0-00010101000000-000000000000
)

replace (
	example.com/a => "/src/my plugin"
	github.com/svcrun/svc => "/src/svc"
)
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderGoMod(tt.data)
			if err != nil || string(got) != tt.want {
				t.Fatalf("renderGoMod(%+v) = %v\n%s\nwant:\n%s", tt.data, err, got, tt.want)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	root := checkoutRoot(t)
	tmp := t.TempDir()
	pluginDir := filepath.Join(tmp, "plugin")
	writeModule(t, pluginDir, "example.com/plugin")
	otherDir := filepath.Join(tmp, "other")
	writeModule(t, otherDir, "example.com/plugin")
	out := filepath.Join(tmp, "bin", "svc")

	t.Run("local svc, local and versioned plugins", func(t *testing.T) {
		b := Builder{
			SvcReplace: root,
			Output:     out,
			Plugins: []Dependency{
				{Path: "example.com/remote/sub", Version: "v1.2.3"},
				{Replace: pluginDir},
				{Path: "example.com/plugin/extra", Replace: pluginDir},
				{Path: SvcModule + "/example-plugin", Replace: root},
				{Path: "example.com/latest"},
			},
		}
		p, err := b.plan()
		if err != nil {
			t.Fatal(err)
		}
		if p.output != out {
			t.Errorf("output = %q, want %q", p.output, out)
		}
		if want := []string{"example.com/remote/sub@v1.2.3", "example.com/latest"}; !slices.Equal(p.get, want) {
			t.Errorf("go get args = %q, want %q", p.get, want)
		}
		wantMod := "module svc-custom-build\n\ngo 1.26\n\nrequire (\n" +
			"\texample.com/plugin v0.0.0-00010101000000-000000000000\n" +
			"\tgithub.com/svcrun/svc v0.0.0-00010101000000-000000000000\n)\n\nreplace (\n" +
			"\texample.com/plugin => " + strconv.Quote(pluginDir) + "\n" +
			"\tgithub.com/svcrun/svc => " + strconv.Quote(root) + "\n)\n"
		if string(p.goMod) != wantMod {
			t.Errorf("go.mod =\n%s\nwant:\n%s", p.goMod, wantMod)
		}
		imports := "\t_ \"example.com/latest\"\n\t_ \"example.com/plugin\"\n\t_ \"example.com/plugin/extra\"\n\t_ \"example.com/remote/sub\"\n\t_ \"github.com/svcrun/svc/example-plugin\"\n)"
		if !strings.Contains(string(p.mainGo), imports) {
			t.Errorf("main.go =\n%s\nwant the imports\n%s", p.mainGo, imports)
		}
		// The checkout's go.sum seeds the build's, for offline builds.
		sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(sum), "\n")
		if first == "" || !strings.Contains(string(p.goSum), first+"\n") {
			t.Errorf("go.sum does not hold the checkout's line %q", first)
		}
	})

	t.Run("svc version", func(t *testing.T) {
		b := Builder{SvcVersion: "v1.4.0", Output: out, Plugins: []Dependency{{Path: "example.com/a", Version: "v0.1.0"}}}
		p, err := b.plan()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{SvcModule + "@v1.4.0", "example.com/a@v0.1.0"}; !slices.Equal(p.get, want) {
			t.Errorf("go get args = %q, want %q", p.get, want)
		}
		if want := "module svc-custom-build\n\ngo 1.26\n"; string(p.goMod) != want || p.goSum != nil {
			t.Errorf("go.mod = %q, go.sum = %q; want %q and none", p.goMod, p.goSum, want)
		}
	})

	errTests := []struct {
		name string
		b    Builder
		err  string
	}{
		{name: "no output", b: Builder{SvcReplace: root}, err: "no output"},
		{name: "svc twice", b: Builder{SvcReplace: root, SvcVersion: "v1.0.0", Output: out}, err: "svc given as both"},
		{name: "svc directory of another module", b: Builder{SvcReplace: pluginDir, Output: out}, err: "not an svc checkout"},
		{name: "svc version and plugin in the svc module", b: Builder{SvcVersion: "v1.0.0", Output: out,
			Plugins: []Dependency{{Path: SvcModule + "/example-plugin", Replace: root}}}, err: "svc given as both"},
		{name: "module from two directories", b: Builder{Output: out,
			Plugins: []Dependency{{Replace: pluginDir}, {Replace: otherDir}}}, err: "given as both"},
		{name: "plugin version and directory", b: Builder{Output: out,
			Plugins: []Dependency{{Path: "example.com/plugin", Version: "v1.0.0", Replace: pluginDir}}}, err: "not both"},
		{name: "package outside the directory's module", b: Builder{Output: out,
			Plugins: []Dependency{{Path: "example.com/other", Replace: pluginDir}}}, err: "does not contain"},
		{name: "bad import path", b: Builder{Output: out, Plugins: []Dependency{{Path: `a"b`}}}, err: "invalid character"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			if p, err := tt.b.plan(); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("plan() = %+v, %v; want error containing %q", p, err, tt.err)
			}
		})
	}
}

// TestBuildFailure checks that a failing go command is reported with its
// output and the build module is removed.
func TestBuildFailure(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	pluginDir := filepath.Join(tmp, "plugin")
	writeModule(t, pluginDir, "example.com/plugin")
	// No Go files: the import of example.com/plugin cannot be satisfied.
	b := Builder{
		SvcReplace: checkoutRoot(t),
		Plugins:    []Dependency{{Replace: pluginDir}},
		Output:     filepath.Join(tmp, "svc"),
		Env:        offlineEnv(t),
	}
	err := b.Build(t.Context())
	if err == nil || !strings.Contains(err.Error(), "go build") || !strings.Contains(err.Error(), "example.com/plugin") {
		t.Fatalf("Build() = %v; want a go build error naming example.com/plugin", err)
	}
	t.Logf("Build() = %v", err)
	assertNoBuildDir(t, tmp)
}

func assertNoBuildDir(t *testing.T, tmp string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(tmp, "svc-build-*"))
	if err != nil || len(left) > 0 {
		t.Errorf("build module not removed: %q, %v", left, err)
	}
}

const testPlugin = `package testplugin

import (
	"context"

	"github.com/svcrun/svc/runtime/plugin"
)

type testPlugin struct{}

func (testPlugin) Name() string { return "testplugin" }

func (testPlugin) Start(ctx context.Context, h *plugin.Host) error { return nil }

func init() { plugin.Register(testPlugin{}) }
`

// TestBuildEndToEnd builds a server with a throw-away local plugin
// against this checkout, offline, and runs it with -h.
func TestBuildEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a server binary (about a minute)")
	}
	root := checkoutRoot(t)
	tmp := t.TempDir()
	// Build puts its module under TMPDIR; a private one shows it is removed.
	t.Setenv("TMPDIR", tmp)
	pluginDir := filepath.Join(tmp, "testplugin")
	goMod := "module example.com/testplugin\n\ngo 1.26\n\nrequire github.com/svcrun/svc " + replacedVersion +
		"\n\nreplace github.com/svcrun/svc => " + strconv.Quote(root) + "\n"
	if err := os.Mkdir(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": goMod, "plugin.go": testPlugin} {
		if err := os.WriteFile(filepath.Join(pluginDir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dep, err := ParseWith(pluginDir)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin", "svc-test")
	b := Builder{
		Plugins:    []Dependency{dep},
		SvcReplace: root,
		Output:     bin,
		// Offline: everything comes from the module cache, checked against
		// the checkout's go.sum.
		Env: offlineEnv(t),
		Log: t.Output(),
	}
	start := time.Now()
	if err := b.Build(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("build took %s", time.Since(start).Round(time.Millisecond))
	assertNoBuildDir(t, tmp)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-h")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || ctx.Err() != nil {
		t.Fatalf("%s -h: %v; want it to print the usage and exit 0\n%s", bin, err, out.Bytes())
	}
	if !strings.Contains(out.String(), "-brand-domain") {
		t.Errorf("%s -h printed\n%s\nwant the usage naming -brand-domain", bin, out.Bytes())
	}

	// The plugin is linked in: the binary's build info lists its module.
	info, err := exec.CommandContext(ctx, "go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, info)
	}
	for _, want := range []string{"mod\t" + ModuleName, "dep\texample.com/testplugin", "dep\t" + SvcModule} {
		if !strings.Contains(string(info), want) {
			t.Errorf("go version -m %s:\n%s\nwant a line with %q", bin, info, want)
		}
	}
}

// FuzzParseWith checks that ParseWith never panics, that what it accepts
// is a safe import path, and that non-directory forms round-trip.
func FuzzParseWith(f *testing.F) {
	for _, s := range []string{"example.com/plugin", "example.com/plugin@v1.2.3", "example.com/mod/sub@latest",
		"example.com/mod=../mod", "./plugin", ".", "@", "=", "a@b=c", `x"y`, "example.com//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		d, err := ParseWith(arg)
		if err != nil {
			return
		}
		if err := checkImportPath(d.Path); err != nil {
			t.Fatalf("ParseWith(%q) = %+v with a bad path: %v", arg, d, err)
		}
		if d.Replace != "" {
			if !filepath.IsAbs(d.Replace) {
				t.Fatalf("ParseWith(%q) = %+v: directory not absolute", arg, d)
			}
			return
		}
		again, err := ParseWith(d.String())
		if err != nil || again != d {
			t.Fatalf("ParseWith(%q) = %+v, but ParseWith(%q) = %+v, %v", arg, d, d.String(), again, err)
		}
	})
}
