package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// merge adds src's paths, components and tags to dst. Nothing already in
// dst is replaced: a definition that differs from the one present is an
// error naming it, an identical one is skipped. src is not modified; a
// path item of dst that gains operations is copied first, since it may
// belong to an earlier source.
func merge(dst, src *openapi3.T, index int) error {
	who := fmt.Sprintf("extra document %d", index)
	if src.Info != nil && src.Info.Title != "" {
		who += fmt.Sprintf(" (%q)", src.Info.Title)
	}
	if c := src.Components; c != nil {
		d := dst.Components
		errs := []error{
			mergeNamed(who, "schemas", &d.Schemas, c.Schemas),
			mergeNamed(who, "parameters", &d.Parameters, c.Parameters),
			mergeNamed(who, "headers", &d.Headers, c.Headers),
			mergeNamed(who, "requestBodies", &d.RequestBodies, c.RequestBodies),
			mergeNamed(who, "responses", &d.Responses, c.Responses),
			mergeNamed(who, "securitySchemes", &d.SecuritySchemes, c.SecuritySchemes),
			mergeNamed(who, "examples", &d.Examples, c.Examples),
			mergeNamed(who, "links", &d.Links, c.Links),
			mergeNamed(who, "callbacks", &d.Callbacks, c.Callbacks),
		}
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	if src.Paths != nil {
		if err := mergePaths(who, dst.Paths, src.Paths); err != nil {
			return err
		}
	}
	for _, t := range src.Tags {
		if t != nil && dst.Tags.Get(t.Name) == nil {
			dst.Tags = append(dst.Tags, t)
		}
	}
	return nil
}

// mergeNamed adds src's entries to *dst, refusing a name that is present
// with a different definition.
func mergeNamed[M ~map[string]V, V any](who, section string, dst *M, src M) error {
	for _, name := range sortedKeys(src) {
		v := src[name]
		if cur, ok := (*dst)[name]; ok {
			if !same(cur, v) {
				return fmt.Errorf("openapi: %s: component %s/%s is already defined differently", who, section, name)
			}
			continue
		}
		if *dst == nil {
			*dst = M{}
		}
		(*dst)[name] = v
	}
	return nil
}

func mergePaths(who string, dst, src *openapi3.Paths) error {
	templates := map[string]string{} // template with unnamed variables -> path
	for _, p := range dst.Keys() {
		templates[template(p)] = p
	}
	for _, path := range sortedKeys(src.Map()) {
		item := src.Value(path)
		if item == nil {
			continue
		}
		if other, ok := templates[template(path)]; ok && other != path {
			return fmt.Errorf("openapi: %s: path %s clashes with %s (they match the same URLs)", who, path, other)
		}
		cur := dst.Value(path)
		if cur == nil {
			dst.Set(path, item)
			templates[template(path)] = path
			continue
		}
		if same(cur, item) {
			continue
		}
		if cur.Ref != "" || item.Ref != "" {
			return fmt.Errorf("openapi: %s: path %s is already defined differently", who, path)
		}
		var merged openapi3.PathItem
		ops := item.Operations()
		if sameList(cur.Parameters, item.Parameters) && sameList(cur.Servers, item.Servers) {
			merged = *cur
			merged.AdditionalOperations = maps.Clone(cur.AdditionalOperations)
		} else {
			// Path-level parameters or servers differ (a custom POST on a
			// generated object path declares {name} its own way): each
			// operation gets its own side's, so neither side's operations
			// see the other's.
			merged = openapi3.PathItem{Extensions: cur.Extensions, Summary: cur.Summary, Description: cur.Description}
			for method, o := range pushDown(cur) {
				merged.SetOperation(method, o)
			}
			ops = pushDown(item)
		}
		if merged.Summary == "" {
			merged.Summary = item.Summary
		}
		if merged.Description == "" {
			merged.Description = item.Description
		}
		for _, method := range sortedKeys(ops) {
			if have := merged.GetOperation(method); have != nil {
				if same(have, ops[method]) {
					continue
				}
				return fmt.Errorf("openapi: %s: operation %s %s is already defined differently", who, method, path)
			}
			merged.SetOperation(method, ops[method])
		}
		dst.Set(path, &merged)
	}
	return nil
}

// pushDown returns copies of item's operations that carry the path-level
// parameters and servers themselves. An operation's own parameter wins
// over a path-level one with the same name and location, as OpenAPI says.
func pushDown(item *openapi3.PathItem) map[string]*openapi3.Operation {
	out := item.Operations()
	for method, o := range out {
		cp := *o
		var params openapi3.Parameters
		for _, p := range item.Parameters {
			if p.Value == nil || o.Parameters.GetByInAndName(p.Value.In, p.Value.Name) == nil {
				params = append(params, p)
			}
		}
		cp.Parameters = append(params, o.Parameters...)
		if cp.Servers == nil && len(item.Servers) > 0 {
			servers := item.Servers
			cp.Servers = &servers
		}
		out[method] = &cp
	}
	return out
}

// sameList is same, with nil and empty taken as equal.
func sameList[S ~[]E, E any](a, b S) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return same(a, b)
}

// template drops the names of a path's variables: /a/{name} and /a/{id}
// match the same URLs.
func template(path string) string {
	if !strings.Contains(path, "{") {
		return path
	}
	var b strings.Builder
	in := false
	for _, r := range path {
		switch {
		case r == '{':
			in = true
			b.WriteRune(r)
		case r == '}':
			in = false
			b.WriteRune(r)
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// same reports whether a and b serialise identically.
func same(a, b any) bool {
	ja, err := json.Marshal(a)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false
	}
	return bytes.Equal(ja, jb)
}
