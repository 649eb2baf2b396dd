package openapi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The functions below work on the document's JSON tree rather than on
// kin-openapi's types: a $ref can sit in a dozen kinds of node there, and
// the JSON form has exactly one.

const componentsRef = "#/components/"

// Prune returns a copy of doc without the components its paths do not
// reach, directly or through other components. A plugin's document
// declares every schema of its models; only those its own paths use
// belong in a merged document.
func Prune(doc *openapi3.T) (*openapi3.T, error) {
	tree, err := toTree(doc)
	if err != nil {
		return nil, err
	}
	comps, _ := tree["components"].(map[string]any)
	keep := map[string]map[string]bool{}
	var queue [][2]string
	visit := func(section, name string) {
		if keep[section] == nil {
			keep[section] = map[string]bool{}
		}
		if !keep[section][name] {
			keep[section][name] = true
			queue = append(queue, [2]string{section, name})
		}
	}
	visitRef := func(ref string) string {
		if section, name, _, ok := splitRef(ref); ok {
			visit(section, name)
		}
		return ref
	}
	walkRefs(tree["paths"], visitRef)
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		if sec, ok := comps[at[0]].(map[string]any); ok {
			walkRefs(sec[at[1]], visitRef)
		}
	}
	for section, v := range comps {
		sec, ok := v.(map[string]any)
		if !ok || section == "securitySchemes" { // named by security requirements, not $refs
			continue
		}
		for name := range sec {
			if !keep[section][name] {
				delete(sec, name)
			}
		}
	}
	return fromTree(tree)
}

// Rename returns a copy of doc whose components are renamed by
// rename(section, name), every local $ref following. Security schemes are
// not renamed: requirements name them without a $ref. Two components
// renamed to one name are an error.
func Rename(doc *openapi3.T, rename func(section, name string) string) (*openapi3.T, error) {
	tree, err := toTree(doc)
	if err != nil {
		return nil, err
	}
	comps, _ := tree["components"].(map[string]any)
	for section, v := range comps {
		sec, ok := v.(map[string]any)
		if !ok || section == "securitySchemes" {
			continue
		}
		out := make(map[string]any, len(sec))
		for name, c := range sec {
			to := rename(section, name)
			if _, dup := out[to]; dup {
				return nil, fmt.Errorf("openapi: renaming gives two components %s/%s", section, to)
			}
			out[to] = c
		}
		comps[section] = out
	}
	walkRefs(tree, func(ref string) string {
		section, name, rest, ok := splitRef(ref)
		if !ok || section == "securitySchemes" {
			return ref
		}
		if sec, ok := comps[section].(map[string]any); ok {
			if to := rename(section, name); sec[to] != nil {
				return componentsRef + section + "/" + pointerEscaper.Replace(to) + rest
			}
		}
		return ref
	})
	return fromTree(tree)
}

// ComponentNames returns the names of doc's components, by section
// ("schemas", "parameters", …).
func ComponentNames(doc *openapi3.T) (map[string]map[string]bool, error) {
	tree, err := toTree(doc)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	comps, _ := tree["components"].(map[string]any)
	for section, v := range comps {
		if sec, ok := v.(map[string]any); ok {
			out[section] = make(map[string]bool, len(sec))
			for name := range sec {
				out[section][name] = true
			}
		}
	}
	return out, nil
}

var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// splitRef splits "#/components/schemas/Link/properties/spec" into
// "schemas", "Link" (JSON-pointer escapes undone) and the rest,
// "/properties/spec".
func splitRef(ref string) (section, name, rest string, ok bool) {
	tail, ok := strings.CutPrefix(ref, componentsRef)
	if !ok {
		return "", "", "", false
	}
	section, tail, ok = strings.Cut(tail, "/")
	if !ok {
		return "", "", "", false
	}
	name, rest = tail, ""
	if i := strings.IndexByte(tail, '/'); i >= 0 {
		name, rest = tail[:i], tail[i:]
	}
	return section, pointerUnescaper.Replace(name), rest, name != ""
}

// walkRefs replaces every reference under v by f's answer: each "$ref"
// string, and each value of a discriminator's mapping (a reference, or a
// bare schema name, which is passed to f as a reference and given back
// bare).
func walkRefs(v any, f func(string) string) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if s, ok := c.(string); ok && k == "$ref" {
				v[k] = f(s)
				continue
			}
			if d, ok := c.(map[string]any); ok && k == "discriminator" {
				if mapping, ok := d["mapping"].(map[string]any); ok {
					for mk, mv := range mapping {
						s, ok := mv.(string)
						switch {
						case !ok:
						case strings.HasPrefix(s, "#"):
							mapping[mk] = f(s)
						default:
							to := f(componentsRef + "schemas/" + pointerEscaper.Replace(s))
							if _, name, rest, ok := splitRef(to); ok && rest == "" {
								mapping[mk] = name
							}
						}
					}
				}
			}
			walkRefs(c, f)
		}
	case []any:
		for _, c := range v {
			walkRefs(c, f)
		}
	}
}

func toTree(doc *openapi3.T) (map[string]any, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: encode document: %w", err)
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, fmt.Errorf("openapi: decode document: %w", err)
	}
	return tree, nil
}

// fromTree loads tree as a document, resolving its local $refs.
func fromTree(tree map[string]any) (*openapi3.T, error) {
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("openapi: encode document: %w", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, fmt.Errorf("openapi: reload document: %w", err)
	}
	return doc, nil
}
