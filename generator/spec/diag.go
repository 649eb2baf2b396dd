package spec

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Diagnostic is one mistake in a plugin's input, located in its file so the
// author can jump to it.
type Diagnostic struct {
	File string
	// Line is 1-based; 0 when the location has no line (for example a
	// problem with the document as a whole).
	Line int
	// Pointer is the JSON pointer of the offending value, such as
	// /components/schemas/Person/x-svc-indexes/1/field.
	Pointer string
	Message string
}

func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		b.WriteString(":" + strconv.Itoa(d.Line))
	}
	b.WriteString(": ")
	if d.Pointer != "" {
		b.WriteString(d.Pointer + ": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Diagnostics is every mistake found in one run; the generator reports them
// all at once rather than one per run.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns nil when there are no diagnostics.
func (ds Diagnostics) Err() error {
	if len(ds) == 0 {
		return nil
	}
	return ds
}

// pointer builds a JSON pointer from segments, escaping ~ and /.
func pointer(segs ...string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		s = strings.ReplaceAll(s, "~", "~0")
		b.WriteString(strings.ReplaceAll(s, "/", "~1"))
	}
	return b.String()
}

// locator maps JSON pointers to lines of the source file.
type locator struct {
	root *yaml.Node
}

func newLocator(data []byte) locator {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil || len(n.Content) == 0 {
		return locator{}
	}
	return locator{root: n.Content[0]}
}

// line returns the line of the deepest node the pointer reaches, so a
// pointer into something the file does not spell out (a default) still
// points near it.
func (l locator) line(ptr string) int {
	n := l.root
	if n == nil {
		return 0
	}
	if ptr == "" {
		return n.Line
	}
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		next := child(n, seg)
		if next == nil {
			break
		}
		n = next
	}
	return n.Line
}

func child(n *yaml.Node, seg string) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				// A key's own line is where the author wrote it; the
				// value may start on the next line.
				v := n.Content[i+1]
				if v.Kind == yaml.ScalarNode {
					return v
				}
				return &yaml.Node{Kind: v.Kind, Line: n.Content[i].Line, Content: v.Content, Alias: v.Alias}
			}
		}
	case yaml.SequenceNode:
		i, err := strconv.Atoi(seg)
		if err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

// diags collects diagnostics of one file.
type diags struct {
	file string
	loc  locator
	list Diagnostics
}

func (d *diags) add(ptr, format string, args ...any) {
	d.list = append(d.list, Diagnostic{File: d.file, Line: d.loc.line(ptr), Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}
