package server

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/api/openapi"
	"github.com/svcrun/svc/runtime/model"
)

// consoleDoc keys the console API's document among the plugins'; no
// plugin name can take it.
const consoleDoc = "(console)"

// openAPIDoc serves the document of the registered models, the console
// API and the custom APIs of the started plugins (docs, by plugin name),
// rebuilt only when either set changes.
func openAPIDoc(reg *model.Registry, docs func() map[string][]byte, brand string, log *slog.Logger) func() ([]byte, error) {
	var (
		mu   sync.Mutex
		key  string
		body []byte
	)
	return func() ([]byte, error) {
		models := reg.Models()
		docs := docs()
		k := strings.Join(names(models), ",") + "|" + strings.Join(slices.Sorted(maps.Keys(docs)), ",")
		mu.Lock()
		defer mu.Unlock()
		if body != nil && k == key {
			return body, nil
		}
		base, err := openapi.Build(models, openapi.Options{Title: "svc API"})
		if err != nil {
			return nil, err
		}
		baseNames, err := openapi.ComponentNames(base)
		if err != nil {
			return nil, err
		}
		// Each plugin's paths are checked against the generic document and
		// the plugins merged before it by building the whole again. This
		// runs only when the set of models or plugins changes.
		doc := base
		var extra []*openapi3.T
		merge := func(d *openapi3.T) error {
			withExtra, err := openapi.Build(models, openapi.Options{Title: "svc API", Extra: append(slices.Clip(extra), d)})
			if err == nil {
				doc, extra = withExtra, append(extra, d)
			}
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(docs)) {
			renamed, err := mergePlugin(doc, base, baseNames, docs[name], brand, name, merge)
			for _, r := range renamed {
				log.Warn("OpenAPI operation id renamed", "plugin", name, "detail", r)
			}
			if err != nil {
				log.Warn("OpenAPI document left out", "plugin", name, "err", err)
			}
		}
		b, err := openapi.JSON(doc)
		if err != nil {
			return nil, err
		}
		key, body = k, b
		return body, nil
	}
}

// mergePlugin merges the custom paths of a plugin's document (raw) with
// merge. An operation id that the document merged so far (have) already
// has, case and punctuation aside, is renamed after the plugin, and the
// renames are returned for a warning. A plugin whose components clash
// with another's is merged again with them qualified by its name; one
// that still clashes is left out alone, with the error.
func mergePlugin(have, base *openapi3.T, baseNames map[string]map[string]bool, raw []byte, brand, plugin string, merge func(*openapi3.T) error) ([]string, error) {
	own, err := customPaths(base, raw, brand)
	if err != nil {
		return nil, err
	}
	renamed := renameOperations(own, have, plugin)
	if err = merge(withoutBase(base, own)); err == nil {
		return renamed, nil
	}
	q, qerr := qualified(own, baseNames, plugin)
	if qerr == nil {
		if qerr = merge(withoutBase(base, q)); qerr == nil {
			return renamed, nil
		}
	}
	return nil, errors.Join(err, qerr)
}

// renameOperations gives each operation of own whose id another
// operation of have has (as OperationIDKey compares) the plugin's name
// after the id's verb: getPersonGreeting of plugin "links-pro" becomes
// getLinksProPersonGreeting. Generated clients name methods after ids, so
// two alike would not compile. The same operation documented again (same
// method, path and id) is left to the merge, which takes it once if it is
// identical; so is a new id that is taken as well. It says what it
// renamed.
func renameOperations(own, have *openapi3.T, plugin string) []string {
	taken := openapi.OperationIDs(have)
	var notes []string
	for _, path := range slices.Sorted(maps.Keys(own.Paths.Map())) {
		item := own.Paths.Value(path)
		ops := item.Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			op := ops[method]
			prev, clash := taken[openapi.OperationIDKey(op.OperationID)]
			if op.OperationID == "" || !clash {
				continue
			}
			if h := have.Paths.Value(path); h != nil && h.GetOperation(method) != nil && h.GetOperation(method).OperationID == op.OperationID {
				continue
			}
			id := qualifyID(op.OperationID, plugin)
			if _, ok := taken[openapi.OperationIDKey(id)]; ok {
				continue
			}
			notes = append(notes, fmt.Sprintf("operation id %q of %s %s is taken by %s; served as %q", op.OperationID, method, path, prev, id))
			o := *op
			o.OperationID = id
			item.SetOperation(method, &o)
			taken[openapi.OperationIDKey(id)] = fmt.Sprintf("%s %s (%q)", method, path, id)
		}
	}
	return notes
}

// qualifyID puts the plugin's name after the leading lowercase verb of
// id, or before an id without one, lowerCamel still.
func qualifyID(id, plugin string) string {
	i := strings.IndexFunc(id, func(r rune) bool { return r < 'a' || r > 'z' })
	if i < 0 {
		i = len(id)
	}
	name := openapi.Pascal(plugin)
	if i == 0 && name != "" {
		name = strings.ToLower(name[:1]) + name[1:]
	}
	return id[:i] + name + id[i:]
}

// customPaths is the part of a plugin's document that the generic
// document lacks: its custom API paths and the components they reach. A
// version-only route, documented under plugin.api.<brand>, is served under
// api.plugin.<brand> too (docs/plugins.md), and documented there as well.
func customPaths(base *openapi3.T, raw []byte, brand string) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	out := &openapi3.T{OpenAPI: doc.OpenAPI, Info: doc.Info, Paths: openapi3.NewPaths(), Components: doc.Components}
	legacy, current := "/apis/plugin.api."+brand+"/", "/apis/api.plugin."+brand+"/"
	for path, item := range doc.Paths.Map() {
		if base.Paths.Value(path) == nil {
			out.Paths.Set(path, item)
		}
		if rest, ok := strings.CutPrefix(path, legacy); ok && doc.Paths.Value(current+rest) == nil && base.Paths.Value(current+rest) == nil {
			out.Paths.Set(current+rest, withoutIDs(item))
		}
	}
	if out.Components == nil {
		return out, nil
	}
	return openapi.Prune(out)
}

// qualified renames the plugin's own components after it (Link of plugin
// "links-pro" becomes LinksProLink), so that they cannot clash with
// another plugin's. Its placeholders for the generic document's
// components keep their names. A qualified name the generic document has
// already (plugin "person", component "List" and the generic PersonList)
// is an error: the plugin's references would silently point at it.
func qualified(own *openapi3.T, baseNames map[string]map[string]bool, plugin string) (*openapi3.T, error) {
	prefix := openapi.Pascal(plugin)
	names, err := openapi.ComponentNames(own)
	if err != nil {
		return nil, err
	}
	var taken []string
	for section, ns := range names {
		for name := range ns {
			if !baseNames[section][name] && baseNames[section][prefix+name] {
				taken = append(taken, section+"/"+prefix+name)
			}
		}
	}
	if len(taken) > 0 {
		slices.Sort(taken)
		return nil, fmt.Errorf("qualified component names %s are the generic document's", strings.Join(taken, ", "))
	}
	return openapi.Rename(own, func(section, name string) string {
		if baseNames[section][name] {
			return name
		}
		return prefix + name
	})
}

// withoutBase copies d without the components the generic document
// defines: the plugin document's placeholders give way to them.
func withoutBase(base, d *openapi3.T) *openapi3.T {
	if d.Components == nil {
		return d
	}
	out := *d
	bc, c := base.Components, d.Components
	out.Components = &openapi3.Components{
		Schemas:         missing(bc.Schemas, c.Schemas),
		Parameters:      missing(bc.Parameters, c.Parameters),
		Headers:         missing(bc.Headers, c.Headers),
		RequestBodies:   missing(bc.RequestBodies, c.RequestBodies),
		Responses:       missing(bc.Responses, c.Responses),
		SecuritySchemes: missing(bc.SecuritySchemes, c.SecuritySchemes),
		Examples:        missing(bc.Examples, c.Examples),
		Links:           missing(bc.Links, c.Links),
		Callbacks:       missing(bc.Callbacks, c.Callbacks),
	}
	return &out
}

// withoutIDs copies item without operation ids, which must be unique in
// a document: for a second path to the same operations.
func withoutIDs(item *openapi3.PathItem) *openapi3.PathItem {
	c := *item
	for method, op := range item.Operations() {
		o := *op
		o.OperationID = ""
		c.SetOperation(method, &o)
	}
	return &c
}

// missing returns the entries of have that base lacks: a document's
// placeholders for the base's own definitions give way to them.
func missing[M ~map[string]V, V any](base, have M) M {
	out := M{}
	for name, v := range have {
		if _, ok := base[name]; !ok {
			out[name] = v
		}
	}
	return out
}
