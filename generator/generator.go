// Package generator turns a plugin's OpenAPI document and role templates
// into a Go package: typed models (generator/gotypes), compiled validators
// (generator/validators), registration, index functions, typed clients and
// routes (generator/emit), the plugin's OpenAPI document and an access
// matrix of its role templates (generator/roles). cmd/svcgen is its CLI,
// meant for //go:generate lines.
package generator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/generator/emit"
	"github.com/svcrun/svc/generator/gotypes"
	"github.com/svcrun/svc/generator/roles"
	"github.com/svcrun/svc/generator/spec"
	"github.com/svcrun/svc/generator/validators"
	"github.com/svcrun/svc/runtime/api/openapi"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/schemas"
)

// Config is one generation run.
type Config struct {
	// Schema is the plugin's OpenAPI 3.0 document (YAML or JSON).
	Schema string
	// Extensions is the folder of the plugin's extension files, whose Role
	// documents are its role templates; empty when it has none.
	Extensions string
	// Out is the folder the generated files go to.
	Out string
	// Package is the Go package name; default the base name of Out.
	Package string
	// Plugin is the plugin's name, which its role templates and
	// ui-permissions must carry; default Package.
	Plugin string
	// Brand is the brand domain (default svc.run).
	Brand string
	// Core generates the service's own models, which live in reserved
	// groups.
	Core bool
	// KnownRoles are roles outside the plugin its templates may depend on;
	// default the built-in roles.
	KnownRoles []string
	// Lenient reports the templates' soft issues (roles.Issue.Soft:
	// breaches of the documented naming and ownership conventions, parts that
	// grant nothing) through Warn instead of failing: for templates
	// ported from Halo as they are.
	Lenient bool
	// Register adds a Plugin type to the generated plugin file, registered
	// from init, so the package writes only its Start method.
	Register bool
	// Warn receives each warning (a template's as "file:line: message");
	// nil drops them.
	Warn func(string)
}

// Output file names, relative to Config.Out, one concern each. Each
// model's JSON Schema goes to emit.SchemaFile(its Go type name) beside
// them.
const (
	FileTypes    = "zz_generated.types.go"    // the models' Go types (oapi-codegen)
	FileValidate = "zz_generated.validate.go" // compiled validators
	FileCodec    = "zz_generated.codec.go"    // JSON decoders and encoders without reflection
	FileIndex    = "zz_generated.index.go"    // index names and typed index functions
	FileRegister = "zz_generated.register.go" // embedded document and schemas, identity, model descriptions
	FileClient   = "zz_generated.client.go"   // typed in-process clients
	FileRoutes   = "zz_generated.routes.go"   // Gin routes of the CRUD API
	FilePlugin   = "zz_generated.plugin.go"   // plugin name, extensions, registration
	FileOpenAPI  = "openapi.json"
	FileAccess   = "ACCESS.md"
)

// retired are file names earlier versions of the generator wrote. Write
// removes them, so a package regenerated after an upgrade does not
// declare everything twice.
var retired = []string{"zz_generated.model.go"}

// BuiltinRoles are the roles the service defines (docs/api.md).
var BuiltinRoles = []string{"super-role", "anonymous", "authenticated", "guest", "metrics-reader", "post-contributor", "post-author", "post-editor"}

// packageName is cfg.Package, by default the base name of cfg.Out.
func packageName(cfg Config) (string, error) {
	if cfg.Package != "" {
		return cfg.Package, nil
	}
	abs, err := filepath.Abs(cfg.Out)
	if err != nil {
		return "", fmt.Errorf("generator: %w", err)
	}
	return strings.NewReplacer("-", "", ".", "").Replace(filepath.Base(abs)), nil
}

// Generate returns the generated files of cfg, by name, without writing.
func Generate(cfg Config) (map[string][]byte, error) {
	if cfg.Out == "" {
		return nil, errors.New("generator: no output folder")
	}
	var err error
	if cfg.Package, err = packageName(cfg); err != nil {
		return nil, err
	}
	if cfg.Plugin == "" {
		cfg.Plugin = cfg.Package
	}
	// plugin.Register refuses such a name when a server starts. Halo's
	// manifests use names like PluginLinks, which a port may still pass
	// to check its templates against, so this only warns.
	if cfg.Warn == nil {
		cfg.Warn = func(string) {}
	}
	if object.ValidateDNSLabel(cfg.Plugin) != nil {
		cfg.Warn(fmt.Sprintf("plugin name %q is not a lowercase DNS label (a-z, 0-9 and '-', at most 63): plugin.Register will refuse it; set -plugin", cfg.Plugin))
	}
	if cfg.Brand == "" {
		cfg.Brand = spec.DefaultBrand
	}
	if cfg.KnownRoles == nil {
		cfg.KnownRoles = BuiltinRoles
	}
	// Every mistake of one run is reported at once: the schema's, then
	// the templates', even when the schema has some.
	var ds spec.Diagnostics
	doc, err := spec.Load(cfg.Schema, spec.Options{Brand: cfg.Brand, Core: cfg.Core})
	if err != nil && !errors.As(err, &ds) {
		return nil, err
	}
	if doc != nil {
		for _, is := range validators.Check(doc.Doc) {
			ds = append(ds, spec.Diagnostic{File: doc.File, Line: doc.Line(is.Pointer), Pointer: is.Pointer, Message: is.Message})
		}
	}
	var ts []roles.Template
	if cfg.Extensions != "" {
		var tds spec.Diagnostics
		ts, tds = checkTemplates(doc, cfg)
		ds = append(ds, tds...)
	}
	if err := ds.Err(); err != nil {
		return nil, err
	}
	base, err := openapi3.NewLoader().LoadFromData(schemas.Base)
	if err != nil {
		return nil, fmt.Errorf("generator: load base schemas: %w", err)
	}

	out := map[string][]byte{}
	names := make([]string, len(doc.Models))
	for i, m := range doc.Models {
		names[i] = m.Schema
	}
	types, err := gotypes.Build(doc.Doc, gotypes.Options{Package: cfg.Package, Models: names})
	if err != nil {
		return nil, fmt.Errorf("generator: types: %w", err)
	}
	out[FileTypes] = types.Source
	if out[FileValidate], err = validators.Generate(doc.Doc, base, validators.Options{Package: cfg.Package, Models: names}); err != nil {
		return nil, fmt.Errorf("generator: validators: %w", err)
	}
	codecSrc, codecModels, err := validators.GenerateCodec(doc.Doc, validators.Options{Package: cfg.Package, Models: names})
	if err != nil {
		return nil, fmt.Errorf("generator: codecs: %w", err)
	}
	out[FileCodec] = codecSrc

	models := make([]emit.Model, len(doc.Models))
	runtimeModels := make([]*model.Model, len(doc.Models))
	for i, m := range doc.Models {
		full, err := validators.FullSchema(doc.Doc, base, m.Schema)
		if err != nil {
			return nil, fmt.Errorf("generator: schema of %s: %w", m.Kind, err)
		}
		js, err := json.MarshalIndent(full, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("generator: schema of %s: %w", m.Kind, err)
		}
		js = append(js, '\n')
		// oapi-codegen names the type (HtmlInjection becomes HTMLInjection);
		// everything emitted about the model must use that name.
		goName := types.TypeNames[m.Schema]
		if goName == "" {
			return nil, fmt.Errorf("generator: no Go type was generated for %s", m.Kind)
		}
		if _, dup := out[emit.SchemaFile(goName)]; dup {
			return nil, fmt.Errorf("generator: two models write %s", emit.SchemaFile(goName))
		}
		out[emit.SchemaFile(goName)] = js
		defaults, err := emit.Defaults(full)
		if err != nil {
			return nil, fmt.Errorf("generator: schema of %s: %w", m.Kind, err)
		}
		codec := slices.Contains(codecModels, m.Schema)
		status := false
		if st := types.Structs[goName]; st != nil {
			_, status = st.Field("status")
		}
		models[i] = emit.Model{Model: m, GoName: goName, Schema: js, Defaults: defaults, Codec: codec, StatusCodec: codec && status}
		runtimeModels[i] = runtimeModel(m, js)
	}
	opts := emit.Options{Package: cfg.Package, Document: FileOpenAPI}
	for name, emitter := range map[string]func([]emit.Model, emit.Options) ([]byte, error){
		FileRegister: emit.Register,
		FileIndex:    emit.Index,
		FileClient:   emit.Client,
		FileRoutes:   emit.Routes,
	} {
		if out[name], err = emitter(models, opts); err != nil {
			return nil, fmt.Errorf("generator: %s: %w", name, err)
		}
	}

	if !cfg.Core {
		if out[FilePlugin], err = pluginFile(doc, cfg); err != nil {
			return nil, fmt.Errorf("generator: %w", err)
		}
	}

	pluginDoc, err := document(doc, runtimeModels, cfg)
	if err != nil {
		return nil, err
	}
	if out[FileOpenAPI], err = openapi.JSON(pluginDoc); err != nil {
		return nil, fmt.Errorf("generator: %w", err)
	}

	if cfg.Extensions != "" {
		out[FileAccess] = accessMatrix(ts, pluginDoc)
	}
	return out, nil
}

// pluginFile is what every plugin package writes the same way: its name,
// embedded extension files and branded document, and with cfg.Register
// its type and registration.
func pluginFile(doc *spec.Document, cfg Config) ([]byte, error) {
	opts := emit.PluginOptions{Package: cfg.Package, Name: cfg.Plugin, Brand: cfg.Brand, Register: cfg.Register}
	if cfg.Extensions != "" {
		rel, err := relDir(cfg.Out, cfg.Extensions)
		if err != nil {
			// go:embed reaches only below the package's folder.
			cfg.Warn(fmt.Sprintf("extensions folder %s is not inside the package folder %s, so it cannot be embedded: Base has no Extensions method; write one", cfg.Extensions, cfg.Out))
		} else {
			opts.Extensions = rel
		}
	}
	for _, op := range doc.Operations {
		if g := op.Group; (g == "plugin.api."+cfg.Brand || g == "api.plugin."+cfg.Brand) && !slices.Contains(opts.Rebrand, g) {
			opts.Rebrand = append(opts.Rebrand, g)
		}
	}
	slices.Sort(opts.Rebrand)
	return emit.Plugin(opts)
}

// relDir is dir relative to base, slash-separated, when it is strictly
// inside base.
func relDir(base, dir string) (string, error) {
	ab, err := filepath.Abs(base)
	if err != nil {
		return "", err
	}
	ad, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(ab, ad)
	if err != nil {
		return "", err
	}
	if rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside %s", dir, base)
	}
	return filepath.ToSlash(rel), nil
}

// runtimeModel is the model as the runtime sees it, for the document
// builder: identity, index names and types, schema.
func runtimeModel(m *spec.Model, schema []byte) *model.Model {
	rm := &model.Model{Group: m.Group, Version: m.Version, Kind: m.Kind, Plural: m.Plural, Singular: m.Singular, Schema: schema}
	for _, ix := range m.Indexes {
		rm.Indexes = append(rm.Indexes, model.Index{Name: ix.Name, Type: ix.Type, Multi: ix.Multi, Unique: ix.Unique, Order: ix.Order})
	}
	return rm
}

// document is the plugin's OpenAPI document: the generated CRUD API of
// its models plus the custom paths its schema declares, with the
// components those refer to.
func document(doc *spec.Document, models []*model.Model, cfg Config) (*openapi3.T, error) {
	extra := &openapi3.T{OpenAPI: doc.Doc.OpenAPI, Info: doc.Doc.Info, Paths: doc.Doc.Paths, Components: &openapi3.Components{Schemas: openapi3.Schemas{}}}
	if doc.Doc.Components != nil {
		isModel := map[string]bool{}
		for _, m := range doc.Models {
			isModel[m.Schema] = true
		}
		for name, s := range doc.Doc.Components.Schemas {
			if !isModel[name] {
				extra.Components.Schemas[name] = s
			}
		}
		extra.Components.Parameters = doc.Doc.Components.Parameters
		extra.Components.Responses = doc.Doc.Components.Responses
		extra.Components.RequestBodies = doc.Doc.Components.RequestBodies
	}
	title, version := cfg.Plugin, openapi.DefaultVersion
	if doc.Doc.Info != nil {
		title, version = doc.Doc.Info.Title, doc.Doc.Info.Version
	}
	out, err := openapi.Build(models, openapi.Options{Title: title, Version: version, Extra: []*openapi3.T{extra}})
	if err != nil {
		return nil, fmt.Errorf("generator: OpenAPI document: %w", err)
	}
	return out, nil
}

// checkTemplates loads the plugin's role templates and checks them against
// what doc serves; doc is nil when the schema did not load, and then what
// the plugin serves is not checked. Issues that do not fail the run go to
// cfg.Warn.
func checkTemplates(doc *spec.Document, cfg Config) ([]roles.Template, spec.Diagnostics) {
	ts, err := roles.Load(cfg.Extensions)
	if err != nil {
		var se *roles.SyntaxError
		if errors.As(err, &se) {
			msg := se.Error()
			if se.Line > 0 {
				msg = strings.TrimPrefix(msg, fmt.Sprintf("roles: %s:%d: ", se.File, se.Line))
			} else {
				msg = strings.TrimPrefix(msg, fmt.Sprintf("roles: %s: ", se.File))
			}
			return nil, spec.Diagnostics{{File: se.File, Line: se.Line, Message: msg}}
		}
		return nil, spec.Diagnostics{{File: cfg.Extensions, Message: err.Error()}}
	}
	opts := roles.Options{Plugin: cfg.Plugin, Brand: cfg.Brand, KnownRoles: cfg.KnownRoles, ServedUnknown: doc == nil}
	if doc != nil {
		for _, m := range doc.Models {
			ptr := m.Pointer + "/" + spec.ExtModel
			at := roles.Served{Group: m.Group, File: doc.File, Line: doc.Line(ptr), Pointer: ptr}
			for _, r := range []string{m.Plural, m.Plural + "/status"} {
				at.Resource = r
				opts.Served = append(opts.Served, at)
			}
		}
		for _, op := range doc.Operations {
			ptr := "/paths/" + strings.ReplaceAll(strings.ReplaceAll(op.Path, "~", "~0"), "/", "~1")
			at := roles.Served{Group: op.Group, Resource: op.Resource, File: doc.File, Line: doc.Line(ptr), Pointer: ptr}
			opts.Served = append(opts.Served, at)
			if r, _, ok := strings.Cut(op.Resource, "/"); ok {
				at.Resource = r
				opts.Served = append(opts.Served, at)
			}
		}
	}
	var ds spec.Diagnostics
	for _, is := range roles.Check(ts, opts) {
		if is.Warning || cfg.Lenient && is.Soft {
			cfg.Warn(is.String())
			continue
		}
		ds = append(ds, spec.Diagnostic{File: is.File, Line: is.Line, Pointer: is.Pointer, Message: is.Message})
		for _, n := range is.Notes {
			ds = append(ds, spec.Diagnostic{File: n.File, Line: n.Line, Pointer: n.Pointer, Message: n.Message})
		}
	}
	return ts, ds
}

// accessMatrix is the access matrix of the templates over every operation
// of the plugin's document.
func accessMatrix(ts []roles.Template, pluginDoc *openapi3.T) []byte {
	var ops []roles.Operation
	for _, path := range pluginDoc.Paths.InMatchingOrder() {
		item := pluginDoc.Paths.Value(path)
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if op := item.GetOperation(method); op != nil {
				ops = append(ops, roles.Operation{ID: op.OperationID, Method: method, Path: path})
			}
		}
	}
	slices.SortFunc(ops, func(a, b roles.Operation) int { return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method) })
	return []byte(roles.AccessMatrix(ts, ops))
}

// Write generates cfg and writes the files into cfg.Out.
func Write(cfg Config) error {
	files, err := Generate(cfg)
	if err != nil {
		return err
	}
	if cfg.Package, err = packageName(cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return fmt.Errorf("generator: %w", err)
	}
	for _, name := range slices.Sorted(mapKeys(files)) {
		if err := os.WriteFile(filepath.Join(cfg.Out, name), files[name], 0o644); err != nil {
			return fmt.Errorf("generator: %w", err)
		}
	}
	leftovers, err := stale(cfg.Out, files)
	if err != nil {
		return err
	}
	for _, name := range leftovers {
		if err := retire(cfg, name); err != nil {
			return err
		}
	}
	if hint := tidyHint(cfg.Out, files); hint != "" && cfg.Warn != nil {
		cfg.Warn(hint)
	}
	return nil
}

// Check generates cfg and reports every file in cfg.Out that differs from
// what would be generated.
func Check(cfg Config) error {
	files, err := Generate(cfg)
	if err != nil {
		return err
	}
	var differ []string
	for _, name := range slices.Sorted(mapKeys(files)) {
		have, err := os.ReadFile(filepath.Join(cfg.Out, name))
		if err != nil || !bytes.Equal(have, files[name]) {
			differ = append(differ, filepath.Join(cfg.Out, name))
		}
	}
	leftovers, err := stale(cfg.Out, files)
	if err != nil {
		return err
	}
	for _, name := range leftovers {
		differ = append(differ, filepath.Join(cfg.Out, name)+" (no longer generated)")
	}
	if len(differ) > 0 {
		return fmt.Errorf("generated files are out of date (run make generate): %s", strings.Join(differ, ", "))
	}
	return nil
}

// retire removes the stale output name from cfg.Out. Under go generate
// (GOFILE set) a Go file is instead emptied and excluded from builds:
// go generate listed the package's files before running us and fails on
// one that has vanished. The next run, which no longer lists an ignored
// file, removes it.
func retire(cfg Config, name string) error {
	path := filepath.Join(cfg.Out, name)
	if strings.HasSuffix(name, ".go") && os.Getenv("GOFILE") != "" {
		stub := fmt.Sprintf("// %s\n\n//go:build ignore\n\n// This file is no longer generated; the next run of svcgen removes it.\n\npackage %s\n", emit.Header, cfg.Package)
		if have, err := os.ReadFile(path); err != nil || string(have) != stub {
			if err := os.WriteFile(path, []byte(stub), 0o644); err != nil {
				return fmt.Errorf("generator: retire stale output: %w", err)
			}
			return nil
		}
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("generator: remove stale output: %w", err)
	}
	return nil
}

// stale lists the files in dir this generator wrote once but would not
// write now (files holds what it writes now): retired names, schema files
// of models that are gone, and any other zz_generated. Go file carrying
// its header. Files of other generators sharing the zz_generated. prefix
// (controller-gen's zz_generated.deepcopy.go) are left alone.
func stale(dir string, files map[string][]byte) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("generator: look for stale outputs: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if _, current := files[name]; current || !e.Type().IsRegular() || !strings.HasPrefix(name, "zz_generated.") {
			continue
		}
		ours := slices.Contains(retired, name) || strings.HasPrefix(name, "zz_generated.schema.") && strings.HasSuffix(name, ".json")
		if !ours && strings.HasSuffix(name, ".go") {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return nil, fmt.Errorf("generator: look for stale outputs: %w", err)
			}
			ours = bytes.HasPrefix(b, []byte("// "+emit.Header+"\n"))
		}
		if ours {
			out = append(out, name)
		}
	}
	return out, nil
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
