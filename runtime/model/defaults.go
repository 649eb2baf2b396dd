package model

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Defaults is where an object schema declares default values, as a tree
// shaped like the schema: Value is the default of the property itself
// (JSON; nil for none), Props the defaults below its properties, Items
// below each element of an array and Values below each value of a map.
// The generator emits it from the schema's `default` keywords.
type Defaults struct {
	Value  json.RawMessage
	Props  map[string]*Defaults
	Items  *Defaults
	Values *Defaults
}

// Apply fills in, in a JSON document decoded with encoding/json (numbers
// as float64 or json.Number), every absent property that has a default,
// at every depth, and reports whether it changed doc. A property present
// with null keeps its null: the schema decides whether that is allowed.
// Defaults are applied below a filled-in default too, so an object
// default may be partial.
func (d *Defaults) Apply(doc any) (bool, error) {
	if d == nil {
		return false, nil
	}
	changed := false
	switch v := doc.(type) {
	case map[string]any:
		for name, pd := range d.Props {
			cur, ok := v[name]
			if !ok && pd.Value != nil {
				val, err := decodeDefault(pd.Value)
				if err != nil {
					return changed, fmt.Errorf("model: default of %s: %w", name, err)
				}
				v[name], cur, ok, changed = val, val, true, true
			}
			if ok {
				c, err := pd.Apply(cur)
				if err != nil {
					return changed, fmt.Errorf("%s: %w", name, err)
				}
				changed = changed || c
			}
		}
		if d.Values != nil {
			for name, cur := range v {
				if _, declared := d.Props[name]; declared {
					continue
				}
				c, err := d.Values.Apply(cur)
				if err != nil {
					return changed, fmt.Errorf("%s: %w", name, err)
				}
				changed = changed || c
			}
		}
	case []any:
		if d.Items != nil {
			for i, cur := range v {
				c, err := d.Items.Apply(cur)
				if err != nil {
					return changed, fmt.Errorf("[%d]: %w", i, err)
				}
				changed = changed || c
			}
		}
	}
	return changed, nil
}

// decodeDefault returns a fresh copy of a default value, decoded as
// request bodies are (numbers keep their text).
func decodeDefault(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
