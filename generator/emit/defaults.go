package emit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dave/jennifer/jen"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/model"
)

// Defaults collects the `default` values of an inlined object schema into
// the runtime's tree, checking each against its own schema. It returns
// nil when the schema declares none.
func Defaults(s *openapi3.Schema) (*model.Defaults, error) {
	return defaultsAt(s, "", map[*openapi3.Schema]bool{})
}

func defaultsAt(s *openapi3.Schema, path string, seen map[*openapi3.Schema]bool) (*model.Defaults, error) {
	if s == nil || seen[s] {
		return nil, nil
	}
	seen[s] = true
	defer delete(seen, s)
	d := &model.Defaults{}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		if p == nil {
			continue
		}
		pd, err := defaultsAt(p.Value, join(path, name), seen)
		if err != nil {
			return nil, err
		}
		if pd != nil {
			if d.Props == nil {
				d.Props = map[string]*model.Defaults{}
			}
			d.Props[name] = pd
		}
	}
	if s.Items != nil {
		var err error
		if d.Items, err = defaultsAt(s.Items.Value, path+"[]", seen); err != nil {
			return nil, err
		}
	}
	if ap := s.AdditionalProperties.Schema; ap != nil {
		var err error
		if d.Values, err = defaultsAt(ap.Value, join(path, "*"), seen); err != nil {
			return nil, err
		}
	}
	if s.Default != nil {
		raw, err := json.Marshal(s.Default)
		if err != nil {
			return nil, fmt.Errorf("default of %s: %w", path, err)
		}
		// An object default may be partial: it is checked as it is stored,
		// with the defaults below it filled in.
		var filled any
		if err := json.Unmarshal(raw, &filled); err != nil {
			return nil, fmt.Errorf("default of %s: %w", path, err)
		}
		if _, err := d.Apply(filled); err != nil {
			return nil, fmt.Errorf("default of %s: %w", path, err)
		}
		if err := s.VisitJSON(filled); err != nil {
			return nil, fmt.Errorf("default of %s does not satisfy its schema: %w", path, err)
		}
		d.Value = raw
	}
	if d.Value == nil && d.Props == nil && d.Items == nil && d.Values == nil {
		return nil, nil
	}
	return d, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// defaultsCode renders d as a *model.Defaults literal.
func defaultsCode(d *model.Defaults) jen.Code {
	return jen.Op("&").Qual(pkgModel, "Defaults").Values(defaultsDict(d))
}

func defaultsDict(d *model.Defaults) jen.Dict {
	dict := jen.Dict{}
	if d.Value != nil {
		dict[jen.Id("Value")] = jen.Qual("encoding/json", "RawMessage").Call(jen.Lit(string(d.Value)))
	}
	if len(d.Props) > 0 {
		props := jen.Dict{}
		for name, pd := range d.Props {
			props[jen.Lit(name)] = jen.Values(defaultsDict(pd))
		}
		dict[jen.Id("Props")] = jen.Map(jen.String()).Op("*").Qual(pkgModel, "Defaults").Values(props)
	}
	if d.Items != nil {
		dict[jen.Id("Items")] = defaultsCode(d.Items)
	}
	if d.Values != nil {
		dict[jen.Id("Values")] = defaultsCode(d.Values)
	}
	return dict
}
