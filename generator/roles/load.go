package roles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/svcrun/svc/generator/spec"
	"github.com/svcrun/svc/runtime/rbac"
)

// Template is one Role document of a plugin's extensions folder.
type Template struct {
	// File is the path of the file (dir joined with its name) and Line the
	// 1-based line where the document's content starts.
	File string
	Line int

	// APIVersion is apiVersion, or groupVersion for files of the earlier
	// generation; a core Role has v1alpha1.
	APIVersion  string
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// Deleted is true when the file sets metadata.deletionTimestamp (Halo
	// plugins ship retired templates that way); such a role grants nothing.
	Deleted bool

	Rules []rbac.PolicyRule
	// RuleLines holds the line of each rule, for diagnostics.
	RuleLines []int

	// Dependencies and UIPermissions are the JSON arrays of the
	// rbac.authorization.<domain>/dependencies and /ui-permissions
	// annotations, whatever the domain: Load does not know the brand, so
	// Check verifies the domain. DependenciesKey and UIPermissionsKey are
	// the annotation keys they came from ("" when absent).
	Dependencies     []string
	UIPermissions    []string
	DependenciesKey  string
	UIPermissionsKey string
	// AnnotationErrors describes annotations of those two kinds whose
	// value is not a JSON array of strings; Check reports them.
	AnnotationErrors []string

	// root is the document's YAML tree, which locates values by JSON
	// pointer; nil for templates built in code.
	root *yaml.Node
}

// lineOf is the line of the value at ptr (a JSON pointer into the
// document), so a message points at the offending verb, not at its rule.
// Without the YAML tree it falls back to the rule's or document's line.
func (t *Template) lineOf(ptr string) int {
	if t.root != nil {
		return spec.NodeLine(t.root, ptr)
	}
	var i int
	if _, err := fmt.Sscanf(ptr, "/rules/%d", &i); err == nil && i >= 0 && i < len(t.RuleLines) {
		return t.RuleLines[i]
	}
	return t.Line
}

// SyntaxError is a file that is not valid YAML, or a Role document whose
// fields have the wrong shape.
type SyntaxError struct {
	File string
	Line int // 0 when the parser did not say
	Err  error
}

func (e *SyntaxError) Error() string {
	// one line: yaml.v3 lists type errors on indented lines of their own
	msg := strings.ReplaceAll(yamlLeadingLine.ReplaceAllString(e.Err.Error(), ""), "\n  ", " ")
	if e.Line > 0 {
		return fmt.Sprintf("roles: %s:%d: %s", e.File, e.Line, msg)
	}
	return fmt.Sprintf("roles: %s: %s", e.File, msg)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// yamlLinePrefix finds the line yaml.v3 puts in its messages, either
// "yaml: line N: …" or, in type errors, "line N: …"; yamlLeadingLine is
// the leading one, which Error replaces with file:line.
var (
	yamlLinePrefix  = regexp.MustCompile(`(?:yaml: )?line (\d+): `)
	yamlLeadingLine = regexp.MustCompile(`^yaml: line \d+: `)
)

// Load reads the Role documents (kind Role) of every *.yaml and *.yml file
// in dir, in file-name order and document order. Documents that are empty,
// hold only comments, are not mappings or have another kind are skipped. A
// missing dir means no templates. A file that does not parse, or a Role
// whose fields have the wrong types, is a *SyntaxError naming file and line.
func Load(dir string) ([]Template, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("roles: read extensions folder: %w", err)
	}
	var out []Template
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		file := filepath.Join(dir, name)
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("roles: read %s: %w", file, err)
		}
		ts, err := parseFile(file, data)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

// roleDoc is the part of a Role document the checks read.
type roleDoc struct {
	APIVersion   string `yaml:"apiVersion"`
	GroupVersion string `yaml:"groupVersion"`
	Metadata     struct {
		Name              string            `yaml:"name"`
		Labels            map[string]string `yaml:"labels"`
		Annotations       map[string]string `yaml:"annotations"`
		DeletionTimestamp string            `yaml:"deletionTimestamp"`
	} `yaml:"metadata"`
	// Rules are decoded one by one (decodeRules) so each keeps its line.
	Rules yaml.Node `yaml:"rules"`
}

func parseFile(file string, data []byte) ([]Template, error) {
	var out []Template
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, &SyntaxError{File: file, Line: errorLine(err), Err: err}
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		if scalarField(root, "kind") != "Role" {
			continue
		}
		var rd roleDoc
		if err := root.Decode(&rd); err != nil {
			line := errorLine(err)
			if line == 0 {
				line = root.Line
			}
			return nil, &SyntaxError{File: file, Line: line, Err: fmt.Errorf("Role document: %w", err)}
		}
		t := newTemplate(file, root, &rd)
		t.root = root
		if line, err := t.decodeRules(&rd.Rules); err != nil {
			return nil, &SyntaxError{File: file, Line: line, Err: fmt.Errorf("Role document: %w", err)}
		}
		out = append(out, t)
	}
}

// decodeRules fills Rules and RuleLines from the rules sequence, keeping
// null items as empty rules so indexes and lines stay aligned. On error it
// returns the line of the offending node.
func (t *Template) decodeRules(n *yaml.Node) (int, error) {
	if n.Kind == 0 || n.Tag == "!!null" {
		return 0, nil
	}
	if n.Kind != yaml.SequenceNode {
		return n.Line, errors.New("rules must be a list")
	}
	for _, item := range n.Content {
		var r rbac.PolicyRule
		if err := item.Decode(&r); err != nil {
			return item.Line, fmt.Errorf("rule %d: %w", len(t.Rules)+1, err)
		}
		t.Rules = append(t.Rules, r)
		t.RuleLines = append(t.RuleLines, item.Line)
	}
	return 0, nil
}

func newTemplate(file string, root *yaml.Node, rd *roleDoc) Template {
	t := Template{
		File:        file,
		Line:        root.Line,
		APIVersion:  rd.APIVersion,
		Name:        rd.Metadata.Name,
		Labels:      rd.Metadata.Labels,
		Annotations: rd.Metadata.Annotations,
		Deleted:     rd.Metadata.DeletionTimestamp != "",
	}
	if t.APIVersion == "" {
		t.APIVersion = rd.GroupVersion
	}
	for _, key := range sortedKeys(t.Annotations) {
		prefix, name, ok := strings.Cut(key, "/")
		if !ok || !strings.HasPrefix(prefix, "rbac.authorization.") {
			continue
		}
		var dst *[]string
		switch name {
		case "dependencies":
			dst, t.DependenciesKey = &t.Dependencies, key
		case "ui-permissions":
			dst, t.UIPermissionsKey = &t.UIPermissions, key
		default:
			continue
		}
		list, err := parseJSONList(t.Annotations[key])
		if err != nil {
			t.AnnotationErrors = append(t.AnnotationErrors, fmt.Sprintf("annotation %s is not a JSON array of strings: %v", key, err))
			continue
		}
		*dst = append(*dst, list...)
	}
	return t
}

// parseJSONList reads an annotation holding a JSON array of strings; a
// blank value means none (Halo).
func parseJSONList(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, err
	}
	return list, nil
}

func field(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalarField(m *yaml.Node, key string) string {
	if v := field(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// errorLine takes the first line number out of a yaml.v3 error message;
// the library has no structured position for syntax errors.
func errorLine(err error) int {
	m := yamlLinePrefix.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
