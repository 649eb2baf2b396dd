package build

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/format"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/svcrun/svc/templates"
)

const (
	// SvcModule is the module path of svc itself.
	SvcModule = "github.com/svcrun/svc"
	// ServerPackage is the package whose Main the custom binary calls.
	ServerPackage = SvcModule + "/runtime/server"
	// ModuleName is the module path of the throw-away build module; it
	// shows as the main module in the binary's build info.
	ModuleName = "svc-custom-build"
	// GoVersion is the go directive of the build module.
	GoVersion = "1.26"

	// replacedVersion is the placeholder go mod tidy itself writes for a
	// module that only a directory replacement provides.
	replacedVersion = "v0.0.0-00010101000000-000000000000"
)

// Builder makes one custom server binary: svc's runtime/server plus the
// plugin packages in Plugins.
type Builder struct {
	// Plugins are the plugin packages to compile in.
	Plugins []Dependency
	// SvcVersion is the svc version to build against, as go get takes it.
	SvcVersion string
	// SvcReplace is a local svc checkout to build against (its root, the
	// folder of its go.mod); it excludes SvcVersion. With neither, svc is
	// at the version the plugins require, else the latest.
	SvcReplace string
	// Output is the binary to write; relative to the working directory.
	Output string
	// GoBin is the go command; default "go" from PATH.
	GoBin string
	// Env is added to the process's environment for every go command
	// ("KEY=value"; later entries win), e.g. GOFLAGS or GOPROXY=off.
	Env []string
	// BuildFlags go to go build before -o, e.g. -trimpath.
	BuildFlags []string
	// Keep leaves the temporary build module on disk, for debugging.
	Keep bool
	// Log receives one line per step; nil discards them.
	Log io.Writer
	// Verbose also copies the go commands' output to Log.
	Verbose bool
}

// plan is what a Builder resolves to before anything runs.
type plan struct {
	output string
	mainGo []byte
	goMod  []byte
	goSum  []byte
	// get are the go get arguments (path@version) for what comes from
	// the module proxy.
	get []string
}

// Build writes the build module to a temporary folder, runs go get for
// what comes from the module proxy and go build to write b.Output. The
// folder is removed afterwards unless b.Keep.
func (b Builder) Build(ctx context.Context) (err error) {
	p, err := b.plan()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "svc-build-")
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	b.logf("build module in %s", dir)
	defer func() {
		if b.Keep {
			b.logf("kept build module in %s", dir)
			return
		}
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("build: removing build module: %w", rmErr))
		}
	}()
	files := []struct {
		name string
		data []byte
	}{{"main.go", p.mainGo}, {"go.mod", p.goMod}, {"go.sum", p.goSum}}
	for _, f := range files {
		if f.data == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	// GOWORK=off: the build module must not join a workspace the user's
	// environment happens to name; b.Env may still override it.
	env := append(os.Environ(), "GOWORK=off")
	env = append(env, b.Env...)
	if len(p.get) > 0 {
		// One go get for all versions, so a plugin that needs a newer svc
		// than SvcVersion fails here instead of silently upgrading it.
		if err := b.run(ctx, dir, env, append([]string{"get"}, p.get...)...); err != nil {
			return err
		}
	}
	// go build -mod=mod, not go mod tidy: tidy also resolves the tests
	// of every dependency and all their build tags, which needs modules
	// (and network) the binary never uses; -mod=mod adds exactly the
	// requirements the build needs to go.mod.
	args := append([]string{"build", "-mod=mod"}, b.BuildFlags...)
	args = append(args, "-o", p.output, ".")
	if err := b.run(ctx, dir, env, args...); err != nil {
		return err
	}
	b.logf("wrote %s", p.output)
	return nil
}

// plan checks b and renders the files of the build module.
func (b Builder) plan() (*plan, error) {
	if b.Output == "" {
		return nil, errors.New("build: no output file")
	}
	out, err := filepath.Abs(b.Output)
	if err != nil {
		return nil, fmt.Errorf("build: output: %w", err)
	}
	p := &plan{output: out}
	// replaced maps a module path to its local directory; one module may
	// hold several plugins, or svc itself, but only from one directory.
	replaced := map[string]string{}
	replace := func(mod, dir string) error {
		if prev, ok := replaced[mod]; ok && prev != dir {
			return fmt.Errorf("build: module %s given as both %s and %s", mod, prev, dir)
		}
		replaced[mod] = dir
		return nil
	}
	if b.SvcReplace != "" {
		if b.SvcVersion != "" {
			return nil, fmt.Errorf("build: svc given as both version %s and directory %s", b.SvcVersion, b.SvcReplace)
		}
		dir, err := absDir(b.SvcReplace)
		if err != nil {
			return nil, fmt.Errorf("build: svc directory: %w", err)
		}
		mod, err := ModulePath(dir)
		if err != nil {
			return nil, fmt.Errorf("build: svc directory: %w", err)
		}
		if mod != SvcModule {
			return nil, fmt.Errorf("build: %s is not an svc checkout: its go.mod declares %s, not %s", dir, mod, SvcModule)
		}
		if err := replace(mod, dir); err != nil {
			return nil, err
		}
	}
	var imports []string
	for _, d := range b.Plugins {
		if d.Replace == "" {
			if err := checkImportPath(d.Path); err != nil {
				return nil, fmt.Errorf("build: plugin %s: %w", d, err)
			}
			arg := d.Path
			if d.Version != "" {
				arg += "@" + d.Version
			}
			p.get = append(p.get, arg)
			imports = append(imports, d.Path)
			continue
		}
		if d.Version != "" {
			return nil, fmt.Errorf("build: plugin %s: give a version or a directory, not both", d)
		}
		dir, err := absDir(d.Replace)
		if err != nil {
			return nil, fmt.Errorf("build: plugin %s: %w", d, err)
		}
		d.Replace = dir
		mod, err := d.module()
		if err != nil {
			return nil, fmt.Errorf("build: plugin %s: %w", d, err)
		}
		if d.Path == "" {
			d.Path = mod
		}
		if err := checkImportPath(d.Path); err != nil {
			return nil, fmt.Errorf("build: plugin %s: %w", d, err)
		}
		if err := replace(mod, dir); err != nil {
			return nil, err
		}
		imports = append(imports, d.Path)
	}
	if b.SvcVersion != "" {
		if dir, ok := replaced[SvcModule]; ok {
			return nil, fmt.Errorf("build: svc given as both version %s and directory %s (by a plugin in its module)", b.SvcVersion, dir)
		}
		p.get = append([]string{SvcModule + "@" + b.SvcVersion}, p.get...)
	}
	slices.Sort(imports)
	imports = slices.Compact(imports)
	if p.mainGo, err = renderMain(imports); err != nil {
		return nil, err
	}
	gm := goModData{Module: ModuleName, Go: GoVersion}
	for _, mod := range slices.Sorted(maps.Keys(replaced)) {
		gm.Require = append(gm.Require, modVersion{mod, replacedVersion})
		gm.Replace = append(gm.Replace, modDir{mod, replaced[mod]})
	}
	if p.goMod, err = renderGoMod(gm); err != nil {
		return nil, err
	}
	if p.goSum, err = mergeGoSums(gm.Replace); err != nil {
		return nil, err
	}
	return p, nil
}

func (b Builder) run(ctx context.Context, dir string, env []string, args ...string) error {
	goBin := b.GoBin
	if goBin == "" {
		goBin = "go"
	}
	cmdline := goBin + " " + strings.Join(args, " ")
	b.logf("%s", cmdline)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	var w io.Writer = &out
	if b.Verbose && b.Log != nil {
		w = io.MultiWriter(&out, b.Log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("build: %s: %w", cmdline, ctx.Err())
		}
		return fmt.Errorf("build: %s: %w\n%s", cmdline, err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

func (b Builder) logf(format string, args ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, "build: "+format+"\n", args...)
	}
}

// mergeGoSums joins the go.sum files of the replaced modules. They hold
// the checksums those modules were built with, so the build can check
// what it takes from the module cache without asking the checksum
// database, which also lets it run offline.
func mergeGoSums(dirs []modDir) ([]byte, error) {
	seen := map[string]bool{}
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d.Dir, "go.sum"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				seen[line] = true
			}
		}
	}
	if len(seen) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	for _, line := range slices.Sorted(maps.Keys(seen)) {
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

var mainTemplate = template.Must(template.New("main.go").Parse(templates.BuildMain))

// renderMain renders the build module's main.go. The output is passed
// through gofmt, which also catches a broken template.
func renderMain(plugins []string) ([]byte, error) {
	var buf bytes.Buffer
	data := struct {
		Server  string
		Plugins []string
	}{ServerPackage, plugins}
	if err := mainTemplate.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("build: main.go: %w", err)
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("build: main.go: %w\n%s", err, buf.Bytes())
	}
	return src, nil
}

type goModData struct {
	Module  string
	Go      string
	Require []modVersion
	Replace []modDir
}

type modVersion struct{ Path, Version string }

type modDir struct{ Path, Dir string }

var goModTemplate = template.Must(template.New("go.mod").Funcs(template.FuncMap{
	// Quoting keeps directories with spaces or quotes one go.mod token.
	"quote": strconv.Quote,
}).Parse(templates.BuildGoMod))

// renderGoMod renders the build module's go.mod.
func renderGoMod(d goModData) ([]byte, error) {
	var buf bytes.Buffer
	if err := goModTemplate.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("build: go.mod: %w", err)
	}
	return buf.Bytes(), nil
}
