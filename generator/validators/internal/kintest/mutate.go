package kintest

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Values that sit on or next to the boundaries of the test schemas, or
// have the wrong type.
var pool = []any{
	nil, true, false,
	0.0, -1.0, 1.0, 0.5, 2.0, 10.0, 11.0, 100.0, 101.0, 150.0, 151.0, -9007199254740991.0, 9007199254740991.0,
	1000.5, 1000.4999, 2147483647.0, 2147483648.0, -2147483649.0, 9.223372036854775807e18, 1.8446744073709552e19, 1e300, -1e300,
	json.Number("1.0"), json.Number("12"), json.Number("1e400"), json.Number("-0"),
	"", "a", "ab", "A", "x", strings.Repeat("a", 20), strings.Repeat("a", 21), strings.Repeat("é", 63), strings.Repeat("é", 64),
	strings.Repeat("n", 100), strings.Repeat("n", 101), strings.Repeat("m", 253), strings.Repeat("m", 254),
	"MALE", "FEMALE", "male", "Pending", "Ready", "Failed", "Auto", "True", "Unknown", "mm", "get", "list",
	"ann@example.com", "not an email", "a@b@c", "https://example.com/x?y#z", "relative/path", "http://[::1", "mailto:a@b",
	"2020-01-02T03:04:05Z", "2020-01-02T03:04:05.5+05:30", "2020-02-30T00:00:00Z", "2020-01-02T03:04:60Z", "2020-01-02T03:04:05+24:00",
	"2020-01-02", "2020-13-02", "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-42661417400",
	"AB-123", "ab-123", "ABCD", "AB", "12345", "1234", "abc", "abc-def", "abc--def", "a%b",
	map[string]any{}, []any{}, []any{"a", "a"}, []any{1.0, 1.0}, []any{"a", "b"}, map[string]any{"x": 1.0},
	map[string]any{"name": "Ann"}, map[string]any{"sku": "ABCD", "quantity": 1.0},
	map[string]any{"text": "t"}, []any{map[string]any{"verbs": []any{"get"}}},
}

// Keys tried as unknown (or known, or differently cased) object keys.
var keys = []string{"extra", "Spec", "spec", "status", "name", "age", "tags", "metadata", "apiVersion", "kind", "", "labels", "a.b"}

// slot is one place in a document that holds a value.
type slot struct {
	get func() any
	set func(any)
	del func() // nil at the root
}

// Mutate applies ops to doc and returns the result: each three bytes name
// an operation (replace a value with one from the pool, delete it, add an
// object key, append an array item, copy another value over it), a place
// in the document (in depth-first order) and a value or key.
func Mutate(doc any, ops []byte) any {
	root := doc
	for len(ops) >= 3 {
		op, where, what := ops[0], int(ops[1]), int(ops[2])
		ops = ops[3:]
		slots := collect(&root)
		s := slots[where%len(slots)]
		switch op % 6 {
		case 0, 1:
			s.set(fresh(pool[what%len(pool)]))
		case 2:
			if s.del != nil {
				s.del()
			}
		case 3:
			if m, ok := s.get().(map[string]any); ok {
				m[keys[what%len(keys)]] = fresh(pool[(what/len(keys))%len(pool)])
			}
		case 4:
			if a, ok := s.get().([]any); ok {
				item := pool[what%len(pool)]
				if len(a) > 0 && what%2 == 0 {
					item = a[what%len(a)]
				}
				s.set(append(a, fresh(item)))
			}
		case 5:
			s.set(fresh(slots[what%len(slots)].get()))
		}
	}
	return root
}

// collect lists every value of the document rooted at *root, depth
// first, object keys in order.
func collect(root *any) []slot {
	var out []slot
	var walk func(get func() any, set func(any), del func())
	walk = func(get func() any, set func(any), del func()) {
		out = append(out, slot{get, set, del})
		switch v := get().(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(func() any { return v[k] }, func(x any) { v[k] = x }, func() { delete(v, k) })
			}
		case []any:
			for i := range v {
				walk(func() any { return v[i] }, func(x any) { v[i] = x }, func() {
					// Removing an item shifts the others: set through the
					// parent's setter.
					set(slices.Delete(slices.Clone(v), i, i+1))
				})
			}
		}
	}
	walk(func() any { return *root }, func(x any) { *root = x }, nil)
	return out
}

// fresh deep-copies v, so that a pool value or a copied subtree is never
// shared.
func fresh(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = fresh(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = fresh(x)
		}
		return out
	}
	return v
}
