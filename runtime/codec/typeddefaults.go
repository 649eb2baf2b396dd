package codec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

// TypedDefaults returns a function that fills m's defaults into an object
// its generated decoder (model.Model.DecodeJSON) produced, the typed
// counterpart of what DecodeNew does to the JSON document; nil when m
// declares no defaults or its Go type cannot tell an absent property
// from a present one where a default sits.
//
// It relies on what a successful generated decode guarantees: no
// property was null, so a nil pointer, slice, map or interface is an
// absent property, and a property held by value (a struct or a scalar
// without a pointer) was required, so present. Only pointers, slices,
// maps and interfaces take a default, then; defaults below a present or
// filled-in object apply too, as in model.Defaults.Apply. The plan is
// built once per model.
func TypedDefaults(m *model.Model) func(object.Object) {
	if m.Defaults == nil {
		return nil
	}
	if f, ok := plans.Load(m); ok {
		return f.(func(object.Object))
	}
	var fill func(object.Object) // nil: the generic decode fills them in
	if t := reflect.TypeOf(m.NewObject()); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		if p, err := buildPlan(t.Elem(), m.Defaults); err == nil {
			fill = func(obj object.Object) { p.apply(reflect.ValueOf(obj).Elem()) }
		}
	}
	f, _ := plans.LoadOrStore(m, fill)
	return f.(func(object.Object))
}

var plans sync.Map // *model.Model → func(object.Object), nil when unplanned

// valuePlan fills the defaults of one value of a type: its fields (a
// struct), its elements (a slice) or its values (a map).
type valuePlan struct {
	fields []fieldPlan
	items  *valuePlan
	values *valuePlan
}

type fieldPlan struct {
	index []int
	value json.RawMessage // the default; nil: only defaults below it
	// scalar is the default decoded once, when the field points to a
	// value without references (a number, string or bool): copied rather
	// than decoded again for each object.
	scalar reflect.Value
	below  *valuePlan // of the field's value (through its pointer)
}

func buildPlan(t reflect.Type, d *model.Defaults) (*valuePlan, error) {
	p := &valuePlan{}
	if len(d.Props) > 0 {
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("codec: defaults of properties on a %s", t)
		}
		fields := plannedFields(t)
		for name, pd := range d.Props {
			f, ok := fields[name]
			if !ok {
				return nil, fmt.Errorf("codec: %s has no property %q", t, name)
			}
			fp := fieldPlan{index: f.Index, value: pd.Value}
			ft := f.Type
			switch ft.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			default: // held by value: required, so present
				if pd.Value != nil {
					return nil, fmt.Errorf("codec: %s.%s holds a default but cannot be absent", t, name)
				}
				if ft.Kind() != reflect.Struct {
					continue // a scalar: nothing below it
				}
			}
			if pd.Value != nil {
				// A default the field's type cannot hold: leave it to the
				// generic decode, which reports it.
				nv := reflect.New(ft)
				if err := json.Unmarshal(pd.Value, nv.Interface()); err != nil {
					return nil, fmt.Errorf("codec: default of %s.%s: %w", t, name, err)
				}
				if ft.Kind() == reflect.Pointer && plain(ft.Elem().Kind()) && !nv.Elem().IsNil() {
					fp.scalar = nv.Elem().Elem()
				}
			}
			if pd.Props != nil || pd.Items != nil || pd.Values != nil {
				below, err := planBelow(ft, pd)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", t, name, err)
				}
				fp.below = below
			}
			p.fields = append(p.fields, fp)
		}
	}
	var err error
	if d.Items != nil {
		if t.Kind() != reflect.Slice {
			return nil, fmt.Errorf("codec: defaults of items on a %s", t)
		}
		if p.items, err = planBelow(t.Elem(), d.Items); err != nil {
			return nil, err
		}
	}
	if d.Values != nil {
		if t.Kind() != reflect.Map {
			return nil, fmt.Errorf("codec: defaults of values on a %s", t)
		}
		if p.values, err = planBelow(t.Elem(), d.Values); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// planBelow plans the defaults below a value of type t (a field, an item,
// a map value), through its pointer; a free-form value takes none.
func planBelow(t reflect.Type, d *model.Defaults) (*valuePlan, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface {
		return nil, fmt.Errorf("codec: defaults inside free-form %s", t)
	}
	return buildPlan(t, d)
}

// plain kinds hold no references: a copy shares nothing.
func plain(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// plannedFields are t's fields by JSON name (structFields) but those
// promoted through an embedded pointer, which may be nil in a decoded
// object (such a property is left to the generic path).
func plannedFields(t reflect.Type) map[string]reflect.StructField {
	out := structFields(t)
	for name, f := range out {
		for i, ft := 0, t; i < len(f.Index)-1; i++ {
			if ft = ft.Field(f.Index[i]).Type; ft.Kind() == reflect.Pointer {
				delete(out, name)
				break
			}
		}
	}
	return out
}

// apply fills the defaults into v, an addressable value of the plan's type.
func (p *valuePlan) apply(v reflect.Value) {
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.FieldByIndex(f.index)
		if fv.Kind() != reflect.Struct && fv.IsNil() {
			if f.value == nil {
				continue // absent, and no default: nothing below it either
			}
			if f.scalar.IsValid() {
				p := reflect.New(f.scalar.Type())
				p.Elem().Set(f.scalar)
				fv.Set(p)
			} else {
				nv := reflect.New(fv.Type())
				// Checked when the plan was built.
				_ = json.Unmarshal(f.value, nv.Interface())
				fv.Set(nv.Elem())
			}
		}
		if f.below != nil {
			if fv.Kind() == reflect.Pointer {
				fv = fv.Elem()
			}
			f.below.apply(fv)
		}
	}
	if p.items != nil {
		for i := range v.Len() {
			e := v.Index(i)
			if e.Kind() == reflect.Pointer {
				if e.IsNil() {
					continue
				}
				e = e.Elem()
			}
			p.items.apply(e)
		}
	}
	if p.values != nil {
		it := v.MapRange()
		for it.Next() {
			cur := it.Value()
			if cur.Kind() == reflect.Pointer {
				if !cur.IsNil() {
					p.values.apply(cur.Elem())
				}
				continue
			}
			e := reflect.New(cur.Type()).Elem()
			e.Set(cur)
			p.values.apply(e)
			v.SetMapIndex(it.Key(), e)
		}
	}
}
