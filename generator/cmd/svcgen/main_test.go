package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/svcrun/svc/generator/build"
)

// svcRoot is the svc checkout the tests run in.
func svcRoot(t *testing.T) string {
	t.Helper()
	root, mod, err := build.FindModule(".")
	if err != nil || mod != build.SvcModule {
		t.Fatalf("FindModule(.) = %q, %q, %v; want the svc checkout", root, mod, err)
	}
	return root
}

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string // substring of the error
		out  string // substring of what is printed
	}{
		{name: "generation needs -schema", args: nil, err: "-schema is required"},
		{name: "generation flags", args: []string{"-out", "x"}, err: "-schema is required"},
		{name: "generation help", args: []string{"-h"}, err: flag.ErrHelp.Error(), out: "svcgen build [flags]"},
		{name: "build help", args: []string{"build", "-h"}, err: flag.ErrHelp.Error(), out: "--with takes"},
		{name: "build is only a first argument", args: []string{"-schema", "s.yaml", "build"}, err: "unexpected arguments"},
		{name: "build arguments", args: []string{"build", "extra"}, err: "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(t.Context(), tt.args, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("run(%q) = %v; want error containing %q", tt.args, err, tt.err)
			}
			if !strings.Contains(stderr.String(), tt.out) {
				t.Errorf("run(%q) printed\n%s\nwant it to contain %q", tt.args, stderr.String(), tt.out)
			}
		})
	}
}

func TestParseBuild(t *testing.T) {
	root := svcRoot(t)
	plugin := t.TempDir()
	if err := os.WriteFile(filepath.Join(plugin, "go.mod"), []byte("module example.com/local\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	b, err := parseBuild(t.Context(), []string{"--with", "example.com/a@v1.2.3", "-with", plugin, "-o", "out/svc", "--keep", "-v", "--svc", "v1.4.0"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := []build.Dependency{{Path: "example.com/a", Version: "v1.2.3"}, {Path: "example.com/local", Replace: plugin}}
	if len(b.Plugins) != 2 || b.Plugins[0] != want[0] || b.Plugins[1] != want[1] {
		t.Errorf("Plugins = %+v, want %+v", b.Plugins, want)
	}
	if b.Output != "out/svc" || !b.Keep || !b.Verbose || b.SvcVersion != "v1.4.0" || b.SvcReplace != "" || b.Log == nil {
		t.Errorf("Builder = %+v; want -o, --keep, -v and --svc applied and a log", b)
	}

	b, err = parseBuild(t.Context(), []string{"--svc", "../svc"}, &bytes.Buffer{})
	if err != nil || b.SvcReplace != "../svc" || b.SvcVersion != "" || b.Output != "svc" {
		t.Errorf("parseBuild(--svc ../svc) = %+v, %v; want SvcReplace ../svc and output svc", b, err)
	}

	// The test binary is built from this checkout, so that is the default.
	b, err = parseBuild(t.Context(), nil, &bytes.Buffer{})
	if err != nil || b.SvcReplace != root || b.SvcVersion != "" {
		t.Errorf("parseBuild() = %+v, %v; want SvcReplace %s", b, err, root)
	}

	if _, err := parseBuild(t.Context(), []string{"--with", "example.com/x y"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--with example.com/x y") {
		t.Errorf("parseBuild(--with with a space) = %v; want an error naming the argument", err)
	}
}

func TestDefaultSvc(t *testing.T) {
	root := svcRoot(t)
	inCheckout := filepath.Join(root, "generator")
	outside := t.TempDir()

	// A plugin module that replaces svc with this checkout, as the
	// go.mod of a plugin developed next to svc would.
	pluginMod := t.TempDir()
	goMod := "module example.com/plugin\n\ngo 1.26\n\nrequire github.com/svcrun/svc v0.0.0-00010101000000-000000000000\n\nreplace github.com/svcrun/svc => " + root + "\n"
	if err := os.WriteFile(filepath.Join(pluginMod, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	// go list in the plugin module must stay offline.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOSUMDB", "off")

	mainSvc := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: build.SvcModule, Version: version}, Settings: settings}
	}
	depSvc := func(dep *debug.Module) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "example.com/plugin", Version: "(devel)"}, Deps: []*debug.Module{dep}}
	}
	tests := []struct {
		name        string
		info        *debug.BuildInfo
		wd          string
		wantVersion string
		wantDir     string
		err         string
	}{
		{name: "checkout, go run", info: mainSvc("(devel)"), wd: inCheckout, wantDir: root},
		{name: "checkout, VCS stamped", info: mainSvc("v0.0.0-20260101000000-0123456789ab+dirty",
			debug.BuildSetting{Key: "vcs.revision", Value: "0123456789ab"}), wd: inCheckout, wantDir: root},
		{name: "installed at a version", info: mainSvc("v1.2.3"), wd: outside, wantVersion: "v1.2.3"},
		{name: "dependency at a version", info: depSvc(&debug.Module{Path: build.SvcModule, Version: "v1.4.0"}), wd: outside, wantVersion: "v1.4.0"},
		{name: "dependency replaced by a checkout", info: depSvc(&debug.Module{Path: build.SvcModule, Version: "v0.0.0-00010101000000-000000000000",
			Replace: &debug.Module{Path: "../svc"}}), wd: pluginMod, wantDir: root},
		// go run or go tool from that plugin module: svc's is the main
		// module, at the required version, replaced.
		{name: "run from a plugin module that replaces svc", info: &debug.BuildInfo{Main: debug.Module{Path: build.SvcModule, Version: "v0.0.0",
			Replace: &debug.Module{Path: root, Version: "(devel)"}}}, wd: pluginMod, wantDir: root},
		{name: "run from a plugin module that replaces svc by a fork", info: &debug.BuildInfo{Main: debug.Module{Path: build.SvcModule, Version: "v1.0.0",
			Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}}}, wd: outside, err: "replaced by example.com/fork@v1.0.1"},
		{name: "checkout not found", info: mainSvc("(devel)"), wd: outside, err: "pass --svc"},
		{name: "dependency replaced by a fork", info: depSvc(&debug.Module{Path: build.SvcModule, Version: "v1.0.0",
			Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}}), wd: outside, err: "replaced by example.com/fork@v1.0.1"},
		{name: "not built with svc", info: &debug.BuildInfo{Main: debug.Module{Path: "example.com/other"}}, wd: outside, err: "not built from module"},
		{name: "no build info", info: nil, wd: outside, err: "no build information"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, dir, err := defaultSvc(t.Context(), tt.info, tt.wd)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("defaultSvc = %q, %q, %v; want error containing %q", version, dir, err, tt.err)
				}
				return
			}
			if err != nil || version != tt.wantVersion || dir != tt.wantDir {
				t.Fatalf("defaultSvc = %q, %q, %v; want %q, %q", version, dir, err, tt.wantVersion, tt.wantDir)
			}
		})
	}
}
