package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/svcrun/svc/generator/build"
)

const buildUsage = `usage: svcgen build [--with <plugin>]... [-o <file>] [--svc <version>|<dir>] [--keep] [-v]

Builds a server binary with plugins compiled in: a temporary Go module whose
main package blank-imports each plugin and calls server.Main.

--with takes, once per plugin:
  example.com/plugin             the version other modules require, else the latest
  example.com/plugin@v1.2.3      a version, commit or query (as go get takes it)
  example.com/mod/sub@v1.2.3     a plugin package inside module example.com/mod
  example.com/plugin=../plugin   the module from a local directory (its root)
  ./plugin                       a local directory; its module is found from the
                                 nearest go.mod, so a package folder works too
Directories start with ./, ../ or /.

Flags:
`

// runBuild is "svcgen build".
func runBuild(ctx context.Context, args []string, stderr io.Writer) error {
	b, err := parseBuild(ctx, args, stderr)
	if err != nil {
		return err
	}
	return b.Build(ctx)
}

// parseBuild turns the arguments of "svcgen build" into a Builder.
func parseBuild(ctx context.Context, args []string, stderr io.Writer) (build.Builder, error) {
	fs := flag.NewFlagSet("svcgen build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), buildUsage)
		fs.PrintDefaults()
	}
	var with []string
	fs.Func("with", "a `plugin` to compile in; repeat it for more (forms above)", func(s string) error {
		with = append(with, s)
		return nil
	})
	defaultOut := "svc"
	if runtime.GOOS == "windows" {
		defaultOut += ".exe"
	}
	b := build.Builder{Log: stderr}
	fs.StringVar(&b.Output, "o", defaultOut, "the binary to write")
	svc := fs.String("svc", "", "svc `version` (v1.2.3, a commit) or checkout directory (./, ../ or /...);\ndefault: the checkout or version svcgen was built from")
	fs.BoolVar(&b.Keep, "keep", false, "keep the temporary build module and print where it is")
	fs.BoolVar(&b.Verbose, "v", false, "print the go commands' output")
	if err := fs.Parse(args); err != nil {
		return b, err
	}
	if fs.NArg() > 0 {
		return b, fmt.Errorf("build: unexpected arguments %q", fs.Args())
	}
	for _, w := range with {
		d, err := build.ParseWith(w)
		if err != nil {
			return b, err
		}
		b.Plugins = append(b.Plugins, d)
	}
	switch {
	case *svc == "":
		wd, err := os.Getwd()
		if err != nil {
			return b, err
		}
		info, _ := debug.ReadBuildInfo()
		if b.SvcVersion, b.SvcReplace, err = defaultSvc(ctx, info, wd); err != nil {
			return b, err
		}
	case build.IsLocalDir(*svc):
		b.SvcReplace = *svc
	default:
		b.SvcVersion = *svc
	}
	return b, nil
}

// defaultSvc says which svc to build against when --svc is not given:
// the checkout svcgen itself was built from, else the version it was
// built at, so plugins are compiled against the runtime svcgen generated
// their code for.
func defaultSvc(ctx context.Context, info *debug.BuildInfo, wd string) (version, dir string, err error) {
	const hint = "; pass --svc <version> or --svc <dir>"
	if info == nil {
		return "", "", errors.New("build: svcgen has no build information" + hint)
	}
	var m *debug.Module
	local := false
	if info.Main.Path == build.SvcModule {
		// Built in a checkout, installed at a version, or run from a plugin
		// module (go run .../svcgen, go tool svcgen): the module of the
		// main package is svc's, at the version the plugin requires.
		m = &info.Main
		// "(devel)" without VCS stamping; with it a checkout also records
		// its revision, which go install module@version never does.
		local = m.Version == "" || m.Version == "(devel)" || buildSetting(info, "vcs.revision") != ""
	} else {
		for _, d := range info.Deps {
			if d.Path == build.SvcModule {
				m = d
			}
		}
	}
	if m != nil && m.Replace != nil {
		// The plugin module replaces svc: with a checkout, build against it.
		if !build.IsLocalDir(m.Replace.Path) {
			return "", "", fmt.Errorf("build: svcgen was built with %s replaced by %s@%s%s", m.Path, m.Replace.Path, m.Replace.Version, hint)
		}
		local = true
	}
	if m == nil {
		return "", "", fmt.Errorf("build: svcgen was not built from module %s%s", build.SvcModule, hint)
	}
	if !local {
		return m.Version, "", nil
	}
	dir, err = findSvcDir(ctx, wd)
	if err != nil {
		return "", "", fmt.Errorf("build: svcgen was built from an svc checkout, but %v%s", err, hint)
	}
	return "", dir, nil
}

// findSvcDir finds the svc checkout for wd: the module wd is in, else the
// directory the go command resolves svc to from wd (a plugin module that
// replaces svc with a checkout).
func findSvcDir(ctx context.Context, wd string) (string, error) {
	if root, mod, err := build.FindModule(wd); err == nil && mod == build.SvcModule {
		return root, nil
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", build.SvcModule)
	cmd.Dir = wd
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%s is not inside it and go list -m %s found no directory", wd, build.SvcModule)
	}
	return dir, nil
}

func buildSetting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
