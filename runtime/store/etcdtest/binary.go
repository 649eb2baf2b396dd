package etcdtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the etcd release Binary builds: the version tools/etcd/go.mod
// requires, and the one a module of our own requires outside the
// repository.
const Version = "v3.6.16"

// rootModule is the module path of the repository's root module.
const rootModule = "github.com/svcrun/svc"

var built struct {
	once sync.Once
	path string
	skip string // why there is no binary and no way to build one
	err  error
}

// Binary returns the path of the etcd binary the members run:
//
//   - the file SVC_ETCD_BIN names, if set;
//   - else bin/etcd at the repository root, if it exists (make etcd);
//   - else bin/etcd built from tools/etcd, once per test binary, under a
//     file lock and renamed into place, so test binaries of several
//     packages running at once build it once and never see half a file;
//   - outside the repository (svc from the module cache, which holds no
//     tools/etcd), etcd built from a module of our own requiring etcd's
//     server at Version, kept in the user's cache directory.
//
// It skips the test only if there is no binary and no go command to build
// one (neither on PATH nor in runtime.GOROOT()/bin); a build that fails
// fails the test. The first build takes minutes on a cold build cache.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SVC_ETCD_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("etcdtest: SVC_ETCD_BIN: %v", err)
		}
		return p
	}
	built.once.Do(func() { built.path, built.skip, built.err = findOrBuild(t) })
	if built.skip != "" {
		t.Skip(built.skip)
	}
	if built.err != nil {
		t.Fatalf("etcdtest: %v", built.err)
	}
	return built.path
}

func findOrBuild(t testing.TB) (path, skip string, err error) {
	exe := "etcd"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	var bin, src string
	if root := repoRoot(); root != "" {
		bin = filepath.Join(root, "bin", exe)
		src = filepath.Join(root, "tools", "etcd")
	} else {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", "", fmt.Errorf("no repository root above the working directory and no cache directory to build etcd in: %v", err)
		}
		dir := filepath.Join(cache, "svcrun-etcd", Version)
		bin = filepath.Join(dir, exe)
		src = filepath.Join(dir, "src")
	}
	if regular(bin) {
		return bin, "", nil
	}
	goCmd := goCommand()
	if goCmd == "" {
		return "", fmt.Sprintf("etcdtest: no etcd binary (%s) and no go command to build one; run make etcd or set SVC_ETCD_BIN", bin), nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", "", err
	}
	unlock, err := lockFile(filepath.Join(filepath.Dir(bin), ".etcd.build.lock"))
	if err != nil {
		return "", "", err
	}
	defer unlock()
	if regular(bin) { // another test binary built it while we waited
		return bin, "", nil
	}
	if !regular(filepath.Join(src, "go.mod")) {
		if err := writeModule(src); err != nil {
			return "", "", err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(bin), ".etcd-*.tmp")
	if err != nil {
		return "", "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // after a failed build; gone after the rename
	t.Logf("etcdtest: building %s from %s (once; make etcd builds it ahead)", bin, src)
	start := time.Now()
	cmd := exec.Command(goCmd, "build", "-o", tmp.Name(), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building etcd in %s: %v\n%s", src, err, out)
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", "", err
	}
	t.Logf("etcdtest: built %s in %v", bin, time.Since(start).Round(time.Second))
	return bin, "", nil
}

// repoRoot is the nearest directory above the working directory, or else
// above this source file, whose go.mod declares the root module and which
// has tools/etcd; "" if there is none (svc from the module cache).
func repoRoot() string {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, d := range starts {
		for {
			if modulePath(filepath.Join(d, "go.mod")) == rootModule && regular(filepath.Join(d, "tools", "etcd", "go.mod")) {
				return d
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return ""
}

// modulePath is the path on the module line of the go.mod file gomod, or "".
func modulePath(gomod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			rest, _, _ = strings.Cut(rest, "//")
			rest = strings.TrimSpace(rest)
			if s, err := strconv.Unquote(rest); err == nil {
				return s
			}
			return rest
		}
	}
	return ""
}

// goCommand is the go command on PATH (go test puts its own GOROOT/bin
// first), else runtime.GOROOT()/bin/go, else "".
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := runtime.GOROOT(); root != "" {
		p := filepath.Join(root, "bin", "go")
		if runtime.GOOS == "windows" {
			p += ".exe"
		}
		if regular(p) {
			return p
		}
	}
	return ""
}

// writeModule writes a module of its own that builds etcd's server at
// Version into dir: the same main package as tools/etcd, without its
// go.sum, so the build runs with -mod=mod and checks what it downloads
// against the checksum database.
func writeModule(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod := "module svcrun.local/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 " + Version + "\n"
	main := "package main\n\nimport (\n\t\"os\"\n\n\t\"go.etcd.io/etcd/server/v3/etcdmain\"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(goCommand(), "mod", "tidy")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(filepath.Join(dir, "go.mod")) // try again next time
		return fmt.Errorf("go mod tidy in %s: %v\n%s", dir, err, out)
	}
	return nil
}

func regular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
