package build

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Dependency is one plugin package compiled into a custom build.
type Dependency struct {
	// Path is the import path of the plugin package. It is usually the
	// module path, but may be a package inside the module
	// (example.com/mod/sub); the go command finds the module that holds
	// it. May be empty with Replace, meaning the module's root package.
	Path string
	// Version is what "go get" accepts after the @ (v1.2.3, a commit,
	// latest). Empty means the version the other modules require, else
	// the latest. Not allowed with Replace.
	Version string
	// Replace is a local directory: the root of the module holding Path,
	// whose go.mod names that module. The build replaces the module with
	// this directory.
	Replace string
}

// String gives the dependency back in --with form.
func (d Dependency) String() string {
	switch {
	case d.Replace != "" && d.Path == "":
		return d.Replace
	case d.Replace != "":
		return d.Path + "=" + d.Replace
	case d.Version != "":
		return d.Path + "@" + d.Version
	}
	return d.Path
}

// ParseWith reads one --with argument. The forms are:
//
//	example.com/plugin                the latest version (or what others require)
//	example.com/plugin@v1.2.3         a version, commit or query for go get
//	example.com/mod/sub@v1.2.3        a package inside module example.com/mod
//	example.com/plugin=../plugin      module example.com/plugin from a local directory
//	example.com/mod/sub=../mod        package sub of module example.com/mod in ../mod
//	./plugin                          a local directory
//
// An argument is a local directory when it is "." or "..", or starts with
// "./", "../" or "/" (the rule go.mod uses for replacements). The module
// holding a local directory is found like the go command finds it, from
// the nearest go.mod at or above the directory, so a package folder inside
// a module works too. Directories are made absolute against the working
// directory.
func ParseWith(arg string) (Dependency, error) {
	if arg == "" {
		return Dependency{}, errors.New("--with: empty argument")
	}
	if IsLocalDir(arg) {
		dir, err := absDir(arg)
		if err != nil {
			return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
		}
		root, mod, err := FindModule(dir)
		if err != nil {
			return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
		}
		path := mod
		if rel != "." {
			path += "/" + filepath.ToSlash(rel)
		}
		return Dependency{Path: path, Replace: root}, nil
	}
	if path, dir, ok := strings.Cut(arg, "="); ok {
		if strings.Contains(path, "@") {
			return Dependency{}, fmt.Errorf("--with %s: give a version or a directory, not both", arg)
		}
		if err := checkImportPath(path); err != nil {
			return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
		}
		if dir == "" {
			return Dependency{}, fmt.Errorf("--with %s: empty directory after =", arg)
		}
		abs, err := absDir(dir)
		if err != nil {
			return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
		}
		d := Dependency{Path: path, Replace: abs}
		// Check now, so a typo is reported against the argument.
		if _, err := d.module(); err != nil {
			return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
		}
		return d, nil
	}
	path, version, hasVersion := strings.Cut(arg, "@")
	if err := checkImportPath(path); err != nil {
		return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
	}
	if hasVersion {
		if err := checkVersion(version); err != nil {
			return Dependency{}, fmt.Errorf("--with %s: %w", arg, err)
		}
	}
	return Dependency{Path: path, Version: version}, nil
}

// module returns the path of the module in d.Replace, checking that it
// holds d.Path.
func (d Dependency) module() (string, error) {
	mod, err := ModulePath(d.Replace)
	if err != nil {
		return "", err
	}
	if d.Path != "" && d.Path != mod && !strings.HasPrefix(d.Path, mod+"/") {
		return "", fmt.Errorf("%s holds module %s, which does not contain package %s", d.Replace, mod, d.Path)
	}
	return mod, nil
}

// FindModule returns the root directory and module path of the module
// holding dir: the nearest go.mod at or above dir.
func FindModule(dir string) (root, modPath string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			mod, err := ModulePath(d)
			return d, mod, err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", fmt.Errorf("no go.mod in %s or any folder above it", dir)
		}
		d = parent
	}
}

// ModulePath returns the module path that dir/go.mod declares.
func ModulePath(dir string) (string, error) {
	name := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != "module" {
			continue
		}
		mod := f[1]
		if strings.HasPrefix(mod, `"`) || strings.HasPrefix(mod, "`") {
			if mod, err = strconv.Unquote(mod); err != nil {
				return "", fmt.Errorf("%s: module directive: %w", name, err)
			}
		}
		if err := checkImportPath(mod); err != nil {
			return "", fmt.Errorf("%s: module directive: %w", name, err)
		}
		return mod, nil
	}
	return "", fmt.Errorf("%s: no module directive", name)
}

// IsLocalDir reports whether s names a local directory rather than a
// module path or version: go.mod's rule for a replacement, "." or ".."
// or a path starting with "./", "../" or "/" (or absolute).
func IsLocalDir(s string) bool {
	s = filepath.ToSlash(s)
	return s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		strings.HasPrefix(s, "/") || filepath.IsAbs(s)
}

// absDir makes dir absolute and checks that it is a directory.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// checkImportPath is stricter than the go command: the path is written
// into generated Go source and go.mod, so only the characters module
// paths may use are let through.
func checkImportPath(p string) error {
	if p == "" {
		return errors.New("empty import path")
	}
	if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return fmt.Errorf("import path %q: empty path element", p)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == "." || elem == ".." {
			return fmt.Errorf("import path %q: element %q", p, elem)
		}
	}
	for _, r := range p {
		if !pathChar(r) {
			return fmt.Errorf("import path %q: invalid character %q", p, r)
		}
	}
	return nil
}

// checkVersion lets through what go get takes after @: versions,
// branch names, commits and the queries latest, upgrade, patch, <v and >v.
func checkVersion(v string) error {
	if v == "" {
		return errors.New("empty version after @")
	}
	for _, r := range v {
		if !pathChar(r) && r != '<' && r != '>' {
			return fmt.Errorf("version %q: invalid character %q", v, r)
		}
	}
	return nil
}

func pathChar(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
		strings.ContainsRune("-._~+/", r)
}
