package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/svcrun/svc/runtime/model"
	"go.yaml.in/yaml/v3"
)

// DefaultBrand is the brand extension files are written against; under
// another brand their brand-owned keys are rewritten to it.
const DefaultBrand = model.DefaultBrand

// Document is one object of an extension file, typed and ready to write.
type Document struct {
	File string // path within the plugin's extension folder
	// Index is the document's position in its file (1-based, counting
	// empty documents too), for messages.
	Index int
	Name  string
	Model *model.Model
	// JSON is the object as it will be written: envelope, plugin label
	// and the file's fields.
	JSON []byte
	// Skip says why the document is not written (it is shipped as deleted),
	// or "".
	Skip string
	// KeepExisting: the object carries <brand>/do-not-overwrite.
	KeepExisting bool
}

func (d *Document) String() string {
	name := d.Name
	if name == "" {
		name = "(no name)"
	}
	kind := "object"
	if d.Model != nil {
		kind = d.Model.Kind
	}
	return fmt.Sprintf("%s %s (document %d of %s)", kind, name, d.Index, d.File)
}

// LoadOptions say how extension files are read.
type LoadOptions struct {
	Plugin string
	Brand  string
	// Lookup finds the model of an apiVersion and kind.
	Lookup func(model.GroupVersionKind) (*model.Model, bool)
	// Decode checks an object's JSON against its model (the compiled
	// validator and the metadata rules); nil accepts anything.
	Decode func(m *model.Model, data []byte) error
}

// LoadExtensions reads every .yaml and .yml file at the root of fsys, in
// name order, and returns their documents (docs/plugins.md). Files may hold
// several documents, comments only, or no trailing newline. Each document
// is typed by apiVersion and kind, or by groupVersion and kind for
// earlier-generation files whose fields sit directly under the object.
// Any file that does not parse and any document of an unknown kind or
// invalid content is an error naming the file and the object; nothing is
// returned then, so a plugin never starts half-loaded.
func LoadExtensions(fsys fs.FS, opts LoadOptions) ([]*Document, error) {
	if fsys == nil {
		return nil, nil
	}
	if opts.Brand == "" {
		opts.Brand = DefaultBrand
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read extension folder: %w", err)
	}
	var docs []*Document
	var errs []error
	for _, e := range entries {
		ext := strings.ToLower(path.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
			continue
		}
		ds, err := parseFile(e.Name(), data, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, ds...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return docs, nil
}

func parseFile(file string, data []byte, opts LoadOptions) ([]*Document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*Document
	var errs []error
	for i := 1; ; i++ {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// The decoder cannot go on after a syntax error.
			return nil, fmt.Errorf("%s: document %d does not parse: %w", file, i, err)
		}
		var raw any
		if err := node.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s: document %d does not parse: %w", file, i, err)
		}
		if raw == nil {
			continue // an empty or comment-only document
		}
		d, err := newDocument(file, i, raw, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, d)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return docs, nil
}

func newDocument(file string, index int, raw any, opts LoadOptions) (*Document, error) {
	d := &Document{File: file, Index: index}
	obj, ok := jsonable(raw).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: document %d is not an object", file, index)
	}
	md, _ := obj["metadata"].(map[string]any)
	d.Name, _ = md["name"].(string)
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	legacy := false
	if gv, ok := obj["groupVersion"].(string); ok && apiVersion == "" {
		apiVersion, legacy = gv, true
		delete(obj, "groupVersion")
		obj["apiVersion"] = gv
	}
	where := func(format string, args ...any) error {
		what := kind
		if what == "" {
			what = "object"
		}
		name := d.Name
		if name == "" {
			name = "(no name)"
		}
		return fmt.Errorf("%s: document %d, %s %s: %s", file, index, what, name, fmt.Sprintf(format, args...))
	}
	if kind == "" || apiVersion == "" {
		return nil, where("apiVersion (or groupVersion) and kind are required")
	}
	gv, err := model.ParseAPIVersion(apiVersion)
	if err != nil {
		return nil, where("%v", err)
	}
	m, ok := opts.Lookup(model.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind})
	if !ok {
		return nil, where("unknown kind %s: no model %s/%s is served", kind, apiVersion, kind)
	}
	d.Model = m
	if md == nil || d.Name == "" {
		// The name is how a later start finds the object to overwrite.
		return nil, where("metadata.name is required")
	}
	if legacy {
		nestUnderSpec(obj, m)
	}
	rewriteBrand(md, opts.Brand)
	if err := checkKeys(md, opts.Brand); err != nil {
		return nil, where("%v", err)
	}
	if _, ok := md["deletionTimestamp"]; ok {
		d.Skip = "it carries metadata.deletionTimestamp (shipped as deleted)"
	}
	labels, _ := md["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		md["labels"] = labels
	}
	if v, _ := labels[opts.Brand+"/do-not-overwrite"].(string); v == "true" {
		d.KeepExisting = true
	}
	labels["plugin."+opts.Brand+"/plugin-name"] = opts.Plugin
	// Server-managed fields in a file mean nothing on create.
	delete(md, "version")
	delete(md, "creationTimestamp")
	delete(md, "deletionTimestamp")
	if d.JSON, err = json.Marshal(obj); err != nil {
		return nil, where("%v", err)
	}
	if opts.Decode != nil && d.Skip == "" {
		if err := opts.Decode(m, d.JSON); err != nil {
			return nil, where("%v", err)
		}
	}
	return d, nil
}

// jsonable turns what YAML decoding produced into JSON-encodable values:
// maps with non-string keys (YAML allows them) get string keys.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

// nestUnderSpec moves the fields of an earlier-generation object, which sit
// directly under it, into spec when the model keeps them there.
func nestUnderSpec(obj map[string]any, m *model.Model) {
	props := schemaProperties(m)
	if _, has := obj["spec"]; has || !props["spec"] {
		return
	}
	spec := map[string]any{}
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		if props[k] {
			continue
		}
		spec[k] = v
		delete(obj, k)
	}
	if len(spec) > 0 {
		obj["spec"] = spec
	}
}

// schemaProperties names the top-level properties of m's objects.
func schemaProperties(m *model.Model) map[string]bool {
	if len(m.Schema) == 0 {
		// Without a schema, assume the usual envelope + spec + status shape.
		return map[string]bool{"spec": true, "status": true}
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(m.Schema, &s) != nil {
		return nil
	}
	out := make(map[string]bool, len(s.Properties))
	for k := range s.Properties {
		out[k] = true
	}
	return out
}

// rewriteBrand moves label and annotation keys written against the default
// brand to the configured one, so a plugin's files work under any brand.
func rewriteBrand(md map[string]any, brand string) {
	if brand == DefaultBrand {
		return
	}
	for _, field := range []string{"labels", "annotations"} {
		kv, _ := md[field].(map[string]any)
		for k, v := range kv {
			prefix, name, ok := strings.Cut(k, "/")
			if !ok {
				continue
			}
			if moved, ok := model.ToBrand(prefix, brand); ok {
				delete(kv, k)
				kv[moved+"/"+name] = v
			}
		}
	}
}

// checkKeys refuses label and annotation keys a plugin may not use
// (docs/api.md): unprefixed keys, and keys under the brand's domains other
// than the ones the service defines.
func checkKeys(md map[string]any, brand string) error {
	var bad []string
	for _, field := range []string{"labels", "annotations"} {
		raw, present := md[field]
		if !present || raw == nil {
			continue
		}
		kv, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("metadata.%s is not a map of strings", field)
		}
		for k, v := range kv {
			if _, ok := v.(string); !ok {
				return fmt.Errorf("metadata.%s[%s] is not a string", field, k)
			}
			if why := reservedKey(k, brand); why != "" {
				bad = append(bad, fmt.Sprintf("metadata.%s[%s]: %s", field, k, why))
			}
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

func reservedKey(k, brand string) string {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok {
		return "unprefixed keys are reserved; use a key under a domain the plugin owns"
	}
	if !model.InBrand(prefix, brand) {
		return ""
	}
	rbacPrefix := "rbac.authorization." + brand
	switch {
	case k == brand+"/role-template", k == brand+"/hidden", k == brand+"/do-not-overwrite":
		return ""
	case prefix == rbacPrefix && strings.HasPrefix(name, "aggregate-to-") && len(name) > len("aggregate-to-"):
		return ""
	case prefix == rbacPrefix && (name == "dependencies" || name == "ui-permissions" || name == "module" || name == "display-name"):
		return ""
	case k == "plugin."+brand+"/plugin-name":
		return "" // set by the service anyway
	}
	return "keys under " + brand + " are reserved for the service"
}
