package generator

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// tidyHint says which modules the generated code imports that the go.mod
// of the module it lands in does not require, so that go build would fail
// with "no required module provides package"; "" when none, or when out is
// in no module. go generate runs before the generated imports exist, so
// the first go mod tidy of a new plugin cannot have added them.
func tidyHint(out string, files map[string][]byte) string {
	gomod, err := findGoMod(out)
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	module, required := readGoMod(data)
	var missing []string
	for _, name := range slices.Sorted(mapKeys(files)) {
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, files[name], parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !strings.Contains(first, ".") || within(path, module) || slices.ContainsFunc(required, func(r string) bool { return within(path, r) }) {
				continue // standard library, the module itself, or required
			}
			if !slices.Contains(missing, path) {
				missing = append(missing, path)
			}
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%s requires no module providing %s, which the generated code imports: run go mod tidy before go build", gomod, strings.Join(missing, ", "))
}

func within(path, module string) bool {
	return module != "" && (path == module || strings.HasPrefix(path, module+"/"))
}

// findGoMod is the go.mod of the module dir is in.
func findGoMod(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "go.mod")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod")
		}
		dir = parent
	}
}

// readGoMod returns the module path and required module paths of a go.mod
// file; it reads only module and require directives.
func readGoMod(data []byte) (module string, required []string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	block := false
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case block && fields[0] == ")":
			block = false
		case block:
			required = append(required, unquote(fields[0]))
		case fields[0] == "module" && len(fields) > 1:
			module = unquote(fields[1])
		case fields[0] == "require" && len(fields) > 1 && fields[1] == "(":
			block = true
		case fields[0] == "require" && len(fields) > 1:
			required = append(required, unquote(fields[1]))
		}
	}
	return module, required
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}
