package kintest

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"
)

// Filler sets the fields of a typed model at random, mostly to values
// near the test schemas' boundaries. Embedded fields (the envelope) are
// left alone.
type Filler struct {
	R *rand.Rand
	// Strings are candidate values by JSON field name, tried half of the
	// time for a string field of that name (and for its items or values).
	Strings map[string][]string
}

var (
	anyStrings = []string{"", "a", "ab", "Ann", "x y", "é", strings.Repeat("a", 15), strings.Repeat("a", 16),
		strings.Repeat("é", 63), strings.Repeat("é", 64), strings.Repeat("n", 100), strings.Repeat("n", 101), "<&>"}
	anyInts   = []int64{0, 1, -1, 2, 5, 10, 11, 99, 100, 101, 149, 150, 151, math.MaxInt32, math.MinInt32, 1 << 53, -(1 << 53) + 1, math.MaxInt64, math.MinInt64}
	anyFloats = []float64{0, math.Copysign(0, -1), 0.5, -0.5, 1, -1, 1.0000001, -1.0000001, 999.9, 1000.5, 1000.4, 1e10, math.NaN(), math.Inf(1)}
)

// Fill sets every field of the struct *v points to.
func (f *Filler) Fill(v any) {
	f.value(reflect.ValueOf(v).Elem(), "", 0)
}

func (f *Filler) value(v reflect.Value, name string, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(f.time()))
			return
		}
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous || !sf.IsExported() {
				continue
			}
			json, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			f.value(v.Field(i), json, depth+1)
		}
	case reflect.Pointer:
		if f.R.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		f.value(p.Elem(), name, depth)
		v.Set(p)
	case reflect.Slice:
		n := f.size(depth)
		if n < 0 {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			if i > 0 && f.R.IntN(6) == 0 {
				s.Index(i).Set(s.Index(f.R.IntN(i))) // a duplicate
				continue
			}
			f.value(s.Index(i), name, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		n := f.size(depth)
		if n < 0 {
			v.SetZero()
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), n)
		for range n {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(f.pick(anyStrings[:6]))
			e := reflect.New(v.Type().Elem()).Elem()
			f.value(e, name, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		vals := []any{nil, "s", 1.5, true, []any{"a"}, map[string]any{"k": 2.0}}
		if x := vals[f.R.IntN(len(vals))]; x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.String:
		if cands := f.Strings[name]; len(cands) > 0 && f.R.IntN(2) == 0 {
			v.SetString(f.pick(cands))
			return
		}
		v.SetString(f.pick(anyStrings))
	case reflect.Int32, reflect.Int64, reflect.Int:
		x := anyInts[f.R.IntN(len(anyInts))]
		if f.R.IntN(3) == 0 {
			x = f.R.Int64N(300) - 100
		}
		if v.OverflowInt(x) {
			x = int64(int32(x))
		}
		v.SetInt(x)
	case reflect.Float64, reflect.Float32:
		x := anyFloats[f.R.IntN(len(anyFloats))]
		if f.R.IntN(3) == 0 {
			x = f.R.Float64()*2000 - 500
		}
		if f.R.IntN(8) != 0 && (math.IsNaN(x) || math.IsInf(x, 0)) {
			x = 1 // rarely: NaN cannot be encoded at all
		}
		v.SetFloat(x)
	case reflect.Bool:
		v.SetBool(f.R.IntN(2) == 0)
	}
}

// size is the length of a list or map: -1 for nil, more often small
// the deeper it is.
func (f *Filler) size(depth int) int {
	switch f.R.IntN(5) {
	case 0:
		return -1
	case 1:
		return 0
	}
	return 1 + f.R.IntN(max(1, 7-depth))
}

func (f *Filler) pick(s []string) string { return s[f.R.IntN(len(s))] }

func (f *Filler) time() time.Time {
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -8*3600), time.FixedZone("", 24*3600)}
	year := 1900 + f.R.IntN(200)
	if f.R.IntN(20) == 0 {
		year = 10000
	}
	z := zones[f.R.IntN(len(zones)-1)]
	if f.R.IntN(20) == 0 {
		z = zones[len(zones)-1]
	}
	return time.Date(year, time.Month(1+f.R.IntN(12)), 1+f.R.IntN(28), f.R.IntN(24), f.R.IntN(60), f.R.IntN(60), f.R.IntN(3)*500000000, z)
}

// spot is a place in a typed value that Perturb may refill.
type spot struct {
	v     reflect.Value // settable, or a copy of a map value
	name  string
	depth int
	store func() // writes v back (map values); nil otherwise
}

// Perturb refills k places of the struct *v points to (fields at any
// depth, list items, map values) at random.
func (f *Filler) Perturb(v any, k int) {
	for range k {
		var spots []spot
		f.spots(reflect.ValueOf(v).Elem(), "", 0, nil, &spots)
		if len(spots) == 0 {
			return
		}
		s := spots[f.R.IntN(len(spots))]
		f.value(s.v, s.name, s.depth)
		if s.store != nil {
			s.store()
		}
	}
}

func (f *Filler) spots(v reflect.Value, name string, depth int, store func(), out *[]spot) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			break
		}
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous || !sf.IsExported() {
				continue
			}
			json, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			fv := v.Field(i)
			*out = append(*out, spot{fv, json, depth + 1, store})
			f.spots(fv, json, depth+1, store, out)
		}
		return
	case reflect.Pointer:
		if !v.IsNil() {
			f.spots(v.Elem(), name, depth, store, out)
		}
		return
	case reflect.Slice:
		for i := range v.Len() {
			*out = append(*out, spot{v.Index(i), name, depth + 1, store})
			f.spots(v.Index(i), name, depth+1, store, out)
		}
		return
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			put := func() {
				v.SetMapIndex(k, e)
				if store != nil {
					store()
				}
			}
			*out = append(*out, spot{e, name, depth + 1, put})
			f.spots(e, name, depth+1, put, out)
		}
	}
}
