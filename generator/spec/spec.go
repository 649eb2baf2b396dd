// Package spec reads a plugin's OpenAPI document and finds its models: the
// component schemas marked with x-svc-model, their x-svc-indexes, and the
// custom API operations under paths. It refuses, with file, line and JSON
// pointer, every mistake a plugin author can make in them; the schema
// constructs themselves are checked by the validator generator, which
// knows what it can compile.
package spec

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/model"
	"go.yaml.in/yaml/v3"
)

// DefaultBrand is the brand domain when Options.Brand is empty.
const DefaultBrand = "svc.run"

// Extension keys a plugin schema may carry.
const (
	ExtModel   = "x-svc-model"
	ExtIndexes = "x-svc-indexes"
)

// Options configure Load.
type Options struct {
	// Brand is the brand domain whose groups are reserved (docs/operations.md).
	Brand string
	// Core allows reserved groups: the service's own models use them.
	Core bool
}

// Document is a loaded, checked plugin document.
type Document struct {
	File string
	Doc  *openapi3.T
	// Models in component-name order.
	Models []*Model
	// Operations are the custom API operations the document declares
	// under paths, in path and method order.
	Operations []Operation

	loc locator
}

// Line returns the line of a JSON pointer in the document's file (0 when
// unknown), for diagnostics raised by other generator stages.
func (d *Document) Line(ptr string) int { return d.loc.line(ptr) }

// Model is one component schema marked with x-svc-model.
type Model struct {
	// Schema is the component name; it equals Kind.
	Schema  string
	Pointer string
	model.GroupVersionKind
	Plural   string
	Singular string
	Indexes  []*Index
}

// Operation is a custom API operation declared in the document.
type Operation struct {
	ID     string
	Method string
	Path   string
	// Group and Version are parsed from Path (/apis/<group>/<version>/...).
	Group   string
	Version string
	// Resource is what RBAC rules name for the path: "<resource>" or
	// "<resource>/<subresource>" (docs/api.md).
	Resource string
}

// Load reads and checks the plugin document at file.
func Load(file string, opts Options) (*Document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read plugin schema: %w", err)
	}
	return Parse(file, data, opts)
}

var (
	kindRE    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	lowerRE   = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	groupRE   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// Parse checks a plugin document held in memory; file names it in
// diagnostics. Every mistake found is returned at once as Diagnostics;
// when the document loaded, it is returned too, with the models that
// were read without mistakes, so later checks can still run.
func Parse(file string, data []byte, opts Options) (*Document, error) {
	if opts.Brand == "" {
		opts.Brand = DefaultBrand
	}
	d := &diags{file: file, loc: newLocator(data)}
	var probe yaml.Node
	if err := yaml.Unmarshal(data, &probe); err != nil {
		d.list = append(d.list, Diagnostic{File: file, Line: yamlErrorLine(err), Message: "not valid YAML or JSON: " + err.Error()})
		return nil, d.list
	}
	// kin-openapi's loader stops at its first error and names no line;
	// dangling $refs are found first, each located.
	checkRefs(d, d.loc.root)
	if len(d.list) > 0 {
		return nil, d.list
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		d.add(kinPointer(err), "cannot load the OpenAPI document: %v", err)
		return nil, d.list
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		d.add(pointer("openapi"), "openapi must be 3.0.x, not %q", doc.OpenAPI)
		return nil, d.list
	}
	// validators.Check reports each pattern of a component schema that
	// does not compile at its pointer, in the same run as the rest; kin
	// checks the others (inline schemas of paths), stopping at the first.
	err = doc.Validate(loader.Context, openapi3.DisableSchemaPatternValidation())
	if err == nil {
		if err = doc.Validate(loader.Context, openapi3.EnableSchemaPatternValidation()); err != nil && strings.HasPrefix(kinPointer(err), "/components/schemas/") {
			err = nil
		}
	}
	if err != nil {
		d.add(kinPointer(err), "invalid OpenAPI document: %v", err)
		return nil, d.list
	}
	out := &Document{File: file, Doc: doc, loc: d.loc}
	if doc.Components != nil {
		for _, name := range slices.Sorted(mapKeys(doc.Components.Schemas)) {
			ref := doc.Components.Schemas[name]
			if ref.Value == nil {
				continue
			}
			ptr := pointer("components", "schemas", name)
			for k := range ref.Value.Extensions {
				if strings.HasPrefix(k, "x-svc-") && k != ExtModel && k != ExtIndexes {
					d.add(pointer("components", "schemas", name, k), "unknown extension %s (known: %s, %s)", k, ExtModel, ExtIndexes)
				}
			}
			raw, ok := ref.Value.Extensions[ExtModel]
			if !ok {
				if _, ok := ref.Value.Extensions[ExtIndexes]; ok {
					d.add(pointer("components", "schemas", name, ExtIndexes), "%s needs %s on the same schema", ExtIndexes, ExtModel)
				}
				continue
			}
			if m := readModel(d, name, ptr, raw, ref.Value, opts); m != nil {
				out.Models = append(out.Models, m)
			}
		}
	}
	if len(out.Models) == 0 && len(d.list) == 0 {
		d.add(pointer("components", "schemas"), "no schema carries %s; nothing to generate", ExtModel)
	}
	checkDuplicates(d, out.Models)
	out.Operations = readOperations(d, doc, out.Models, opts)
	// The document is returned with its diagnostics so the caller can
	// still check what depends on it (role templates) in the same run.
	return out, d.list.Err()
}

func yamlErrorLine(err error) int {
	var line int
	if _, scanErr := fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line); scanErr == nil {
		return line
	}
	return 0
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func readModel(d *diags, name, ptr string, raw any, s *openapi3.Schema, opts Options) *Model {
	mptr := ptr + pointer(ExtModel)
	fields, ok := raw.(map[string]any)
	if !ok {
		d.add(mptr, "%s must be an object {group, version, kind, plural, singular}", ExtModel)
		return nil
	}
	get := func(key string) string {
		v, present := fields[key]
		if !present {
			if key != "group" || !opts.Core {
				d.add(mptr, "%s.%s is required", ExtModel, key)
			}
			return ""
		}
		str, ok := v.(string)
		if !ok {
			d.add(mptr+pointer(key), "%s.%s must be a string", ExtModel, key)
		}
		return str
	}
	m := &Model{Schema: name, Pointer: ptr}
	m.Group, m.Version, m.Kind = get("group"), get("version"), get("kind")
	m.Plural, m.Singular = get("plural"), get("singular")
	for k := range fields {
		switch k {
		case "group", "version", "kind", "plural", "singular":
		default:
			d.add(mptr+pointer(k), "unknown key %s.%s", ExtModel, k)
		}
	}
	switch {
	case model.ReservedGroup(m.Group, opts.Brand) && !opts.Core:
		if m.Group == "" {
			d.add(mptr+pointer("group"), "group is empty; the empty group is reserved for the service's core models")
		} else {
			d.add(mptr+pointer("group"), "group %q is reserved: groups under %s belong to the service", m.Group, opts.Brand)
		}
	case m.Group != "" && (!groupRE.MatchString(m.Group) || len(m.Group) > 253):
		d.add(mptr+pointer("group"), "group %q must be a lower case DNS subdomain such as people.example.com", m.Group)
	}
	if m.Version != "" && !versionRE.MatchString(m.Version) {
		d.add(mptr+pointer("version"), "version %q must look like v1, v1alpha1 or v2beta3", m.Version)
	}
	if m.Kind != "" {
		if !kindRE.MatchString(m.Kind) {
			d.add(mptr+pointer("kind"), "kind %q must be an upper camel case identifier such as Person", m.Kind)
		} else if m.Kind != name {
			d.add(mptr+pointer("kind"), "kind %q must equal the schema's name %q, which names its Go type", m.Kind, name)
		}
	}
	for _, f := range []struct{ key, val string }{{"plural", m.Plural}, {"singular", m.Singular}} {
		if f.val != "" && !lowerRE.MatchString(f.val) {
			d.add(mptr+pointer(f.key), "%s %q must be lower case letters and digits, starting with a letter", f.key, f.val)
		}
	}
	if len(s.Type.Slice()) > 0 && !s.Type.Is(openapi3.TypeObject) {
		d.add(ptr+pointer("type"), "a model must be an object, not %s", strings.Join(s.Type.Slice(), ", "))
	}
	for _, env := range []string{"apiVersion", "kind", "metadata"} {
		if _, ok := s.Properties[env]; ok {
			d.add(ptr+pointer("properties", env), "%s is part of the envelope every object gets (schemas/base.yaml); do not declare it", env)
		}
	}
	if len(s.Properties) == 0 {
		d.add(ptr, "model %s declares no fields; give it spec (and status) properties", name)
	}
	m.Indexes = readIndexes(d, ptr, s)
	return m
}

func checkDuplicates(d *diags, models []*Model) {
	gvks := map[model.GroupVersionKind]*Model{}
	plurals := map[string]*Model{}
	for _, m := range models {
		if o, ok := gvks[m.GroupVersionKind]; ok && m.Kind != "" {
			d.add(m.Pointer+pointer(ExtModel), "%s is declared twice (also by %s)", m.GroupVersionKind, o.Schema)
		}
		gvks[m.GroupVersionKind] = m
		// The store keys data by group and plural, across versions.
		key := m.Group + "/" + m.Plural
		if o, ok := plurals[key]; ok && m.Plural != "" {
			d.add(m.Pointer+pointer(ExtModel, "plural"), "plural %q of group %q is already used by %s", m.Plural, m.Group, o.Schema)
		}
		plurals[key] = m
	}
}

// BasePath is where a model's collection is served (docs/api.md).
func (m *Model) BasePath() string {
	if m.Group == "" {
		return "/api/" + m.Version + "/" + m.Plural
	}
	return "/apis/" + m.Group + "/" + m.Version + "/" + m.Plural
}

var methods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

func readOperations(d *diags, doc *openapi3.T, models []*Model, opts Options) []Operation {
	if doc.Paths == nil {
		return nil
	}
	var ops []Operation
	generated := map[string]*Model{}
	for _, m := range models {
		generated[m.BasePath()] = m
		generated[m.BasePath()+"/{}"] = m
		generated[m.BasePath()+"/{}/status"] = m
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		ptr := pointer("paths", path)
		segs := strings.Split(strings.Trim(path, "/"), "/")
		var group, version string
		var rest []string
		switch {
		case len(segs) >= 4 && segs[0] == "apis":
			group, version, rest = segs[1], segs[2], segs[3:]
		case len(segs) >= 3 && segs[0] == "api" && opts.Core:
			version, rest = segs[1], segs[2:]
		default:
			d.add(ptr, "a custom API path must be /apis/<group>/<version>/<resource>...")
			continue
		}
		if m := generated[templatePath(path)]; m != nil {
			d.add(ptr, "path is generated for model %s; custom APIs must use their own group (for example api.%s)", m.Kind, m.Group)
			continue
		}
		if model.ReservedGroup(group, opts.Brand) && !opts.Core && group != "plugin.api."+opts.Brand && group != "api.plugin."+opts.Brand {
			d.add(ptr, "group %q is reserved; use the plugin's own group, or plugin.api.%s/<version>/plugins/<plugin>/... for version-only routes", group, opts.Brand)
		}
		resource := rest[0]
		if len(rest) >= 3 {
			resource += "/" + rest[2]
		}
		for _, method := range methods {
			op := item.GetOperation(method)
			if op == nil {
				continue
			}
			ops = append(ops, Operation{ID: op.OperationID, Method: method, Path: path, Group: group, Version: version, Resource: resource})
		}
	}
	return ops
}

// templatePath replaces every {param} segment by {} so paths compare by
// shape.
func templatePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// resolve follows $ref links to the schema value.
func resolve(ref *openapi3.SchemaRef) *openapi3.Schema {
	if ref == nil {
		return nil
	}
	return ref.Value
}
