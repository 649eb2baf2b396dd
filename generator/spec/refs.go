package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkRefs reports every local $ref that points at nothing, at its own
// line: the OpenAPI loader reports only the first, without a location.
func checkRefs(d *diags, root *yaml.Node) {
	if root == nil {
		return
	}
	var walk func(n *yaml.Node, segs []string)
	walk = func(n *yaml.Node, segs []string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, val := n.Content[i].Value, n.Content[i+1]
				at := append(slices.Clip(segs), key)
				inProperties := len(segs) > 0 && segs[len(segs)-1] == "properties"
				switch {
				case inProperties:
					// key is a property name, whatever it spells.
				case key == "example" || key == "examples" || key == "default" || key == "enum":
					continue // values, not schemas
				case key == "$ref" && val.Kind == yaml.ScalarNode:
					checkRef(d, root, pointer(at...), val.Value)
					continue
				}
				walk(val, at)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, append(slices.Clip(segs), fmt.Sprint(i)))
			}
		}
	}
	walk(root, nil)
}

func checkRef(d *diags, root *yaml.Node, ptr, ref string) {
	target, ok := strings.CutPrefix(ref, "#")
	if !ok {
		d.add(ptr, "$ref %q points outside the document; only local references (#/components/...) are allowed", ref)
		return
	}
	n := root
	segs := strings.Split(strings.TrimPrefix(target, "/"), "/")
	for i, seg := range segs {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		next := child(n, seg)
		if next == nil {
			msg := fmt.Sprintf("$ref %q points at nothing: %q has no %q", ref, "#"+pointerOf(segs[:i]), seg)
			if near := Nearest(seg, mappingKeys(n)); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.add(ptr, "%s", msg)
			return
		}
		n = next
	}
}

func pointerOf(segs []string) string {
	if len(segs) == 0 {
		return "/"
	}
	return "/" + strings.Join(segs, "/")
}

func mappingKeys(n *yaml.Node) []string {
	var out []string
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}

// kinSchemaRE and kinPathRE find where kin-openapi's validation errors
// are, in the only form it gives: its message.
var (
	kinSchemaRE = regexp.MustCompile(`invalid components: schema "([^"]+)"`)
	kinPathRE   = regexp.MustCompile(`invalid paths: invalid path (\S+): invalid operation (\w+)`)
	kinRefRE    = regexp.MustCompile(`in URI: "#([^"]*)"`)
)

// kinPointer is the JSON pointer a kin-openapi error names, as near as its
// message says; "" when it names none.
func kinPointer(err error) string {
	msg := err.Error()
	if m := kinSchemaRE.FindStringSubmatch(msg); m != nil {
		return pointer("components", "schemas", m[1])
	}
	if m := kinPathRE.FindStringSubmatch(msg); m != nil {
		return pointer("paths", m[1], strings.ToLower(m[2]))
	}
	if m := kinRefRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// NodeLine is the line of the node a JSON pointer reaches in a YAML tree,
// or of the deepest node on its way; 0 for a nil tree.
func NodeLine(root *yaml.Node, ptr string) int {
	return locator{root: root}.line(ptr)
}

// Nearest returns the name of known closest to name when it is close
// enough to be a typo (edit distance at most a third of its length, at
// least 1), else "".
func Nearest(name string, known []string) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, k := range known {
		if k == name {
			continue
		}
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
