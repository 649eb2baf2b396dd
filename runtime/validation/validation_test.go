package validation

import (
	"encoding/json"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/object"
)

// TestSimpleURIIsAShortcutOfURLParse: what simpleURI accepts without
// url.Parse, url.Parse accepts with a scheme.
func TestSimpleURIIsAShortcutOfURLParse(t *testing.T) {
	for _, s := range []string{"http://example.com", "https://a.b:8080/p?q=1#f", "mailto:a@b.c", "urn:isbn:1",
		"http://[::1]:80/", "http://a b", "http://a:b:c/", "//x", "x", "h:", "http://%zz", "ht~tp://x", "HTTP://X"} {
		checkSimpleURI(t, s)
	}
}

func FuzzSimpleURI(f *testing.F) {
	for _, s := range []string{"http://example.com", "a+b.c-d://x", "http://x:/", "http://[::1"} {
		f.Add(s)
	}
	f.Fuzz(checkSimpleURI)
}

func checkSimpleURI(t *testing.T, s string) {
	if simpleURI(s) {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			t.Errorf("simpleURI(%q) is true, but url.Parse gives %v, %v", s, u, err)
		}
	}
}

func TestIsJSONTime(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want bool
	}{
		{time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC), true},
		{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), true},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", 23*3600+59*60)), true},
		{time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", -24*3600)), false},
	} {
		_, err := json.Marshal(tc.t)
		if got := IsJSONTime(tc.t); got != tc.want || got != (err == nil) {
			t.Errorf("IsJSONTime(%v) = %v, want %v (json.Marshal: %v)", tc.t, got, tc.want, err)
		}
	}
}

func TestFieldPath(t *testing.T) {
	var root *Path
	spec := Path{Parent: root, Name: "spec"}
	tags := Path{Parent: &spec, Name: "tags"}
	item := Path{Parent: &tags, Index: 3, Kind: StepIndex}
	labels := Path{Parent: &item, Name: "labels"}
	for _, tc := range []struct{ got, want string }{
		{root.String(), "(root)"},
		{root.Field("kind"), "kind"},
		{spec.String(), "spec"},
		{spec.Field("age"), "spec.age"},
		{tags.Item(1), "spec.tags[1]"},
		{item.Field("name"), "spec.tags[3].name"},
		{labels.Entry("a.b/c"), "spec.tags[3].labels[a.b/c]"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestEachKeyIsDeterministic(t *testing.T) {
	m := map[string]int{"d": 4, "a": 1, "c": 3, "b": 2, "e": 5}
	for range 20 {
		errs := object.FieldErrors{{Field: "before"}}
		EachKey(m, &errs, func(k string) {
			if m[k]%2 == 1 {
				errs.Add(k, "odd")
			}
		})
		if len(errs) != 4 || errs[0].Field != "before" || errs[1].Field != "a" || errs[2].Field != "c" || errs[3].Field != "e" {
			t.Fatalf("errors %v, want before, a, c, e", errs)
		}
	}
}

func TestUnique(t *testing.T) {
	big := make([]int, 100)
	for i := range big {
		big[i] = i
	}
	bigFloats := make([]float64, 100)
	for i := range bigFloats {
		bigFloats[i] = float64(i) / 2
	}
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"empty", Unique([]string{}), true},
		{"strings", Unique([]string{"a", "b", "c"}), true},
		{"duplicate strings", Unique([]string{"a", "b", "a"}), false},
		{"big", Unique(big), true},
		{"big with duplicate", Unique(append(big, 42)), false},
		{"floats", UniqueFloats([]float64{1, 2, 1.5}), true},
		{"zero and negative zero", UniqueFloats([]float64{0, math.Copysign(0, -1)}), true},
		{"duplicate floats", UniqueFloats([]float64{1, 2, 1}), false},
		{"big floats", UniqueFloats(bigFloats), true},
		{"big floats with duplicate", UniqueFloats(append(bigFloats, 3)), false},
		{"json", UniqueJSON([]any{1.0, "1", map[string]any{"a": 1.0}, map[string]any{"a": 2.0}}), true},
		{"json duplicate objects", UniqueJSON([]any{map[string]any{"a": 1.0, "b": true}, map[string]any{"b": true, "a": 1.0}}), false},
		{"json numbers by text", UniqueJSON([]any{json.Number("1"), json.Number("1.0")}), true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestJSONNumber(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want float64
		ok   bool
	}{
		{1.5, 1.5, true},
		{json.Number("12"), 12, true},
		{json.Number("1e400"), 0, false},
		{math.NaN(), 0, false},
		{math.Inf(1), 0, false},
		{7, 7, true},
		{int64(-3), -3, true},
		{int32(4), 4, true},
		{uint(1), 0, false},
		{"1", 0, false},
		{nil, 0, false},
	} {
		got, ok := JSONNumber(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("JSONNumber(%#v) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
	if !IsInt64(1<<63) || IsInt64(1<<64) || !IsInt64(-(1 << 63)) || IsInt64(-(1<<63)-4096) {
		t.Error("IsInt64 bounds are wrong")
	}
	if !IsInt32(math.MaxInt32) || IsInt32(math.MaxInt32+1) || !IsInt32(math.MinInt32) || IsInt32(math.MinInt32-1) {
		t.Error("IsInt32 bounds are wrong")
	}
}

func TestJSONObject(t *testing.T) {
	if m, ok := JSONObject(map[any]any{"a": 1}); !ok || m["a"] != 1 {
		t.Errorf("map[any]any with string keys: %v, %v", m, ok)
	}
	if _, ok := JSONObject(map[any]any{1: 1}); ok {
		t.Error("map[any]any with an int key accepted")
	}
	if _, ok := JSONObject([]any{}); ok {
		t.Error("array accepted as object")
	}
}

func TestBadType(t *testing.T) {
	var errs object.FieldErrors
	BadType(&errs, "a", nil, "a string")
	BadType(&errs, "b", 1.0, "a string")
	want := object.FieldErrors{{Field: "a", Message: "must not be null"}, {Field: "b", Message: "must be a string"}}
	if len(errs) != 2 || errs[0] != want[0] || errs[1] != want[1] {
		t.Errorf("got %v, want %v", errs, want)
	}
}

// parentOf keeps a path from being optimised away: the paths below are
// built as generated validators build them, and passed on.
//
//go:noinline
func parentOf(p *Path) *Path { return p.Parent }

// TestPathsDoNotAllocate: building paths, walking map keys and the format
// checks allocate nothing on valid values (errors name their fields only
// when there are errors).
func TestPathsDoNotAllocate(t *testing.T) {
	m := map[string]int{"a": 1, "b": 2}
	xs := []string{"a", "b", "c"}
	allocs := testing.AllocsPerRun(100, func() {
		var errs object.FieldErrors
		spec := Path{Name: "spec"}
		tags := Path{Parent: &spec, Name: "tags"}
		for i := range xs {
			it := Path{Parent: &tags, Index: i, Kind: StepIndex}
			if parentOf(&it) != &tags {
				panic("lost parent")
			}
		}
		EachKey(m, &errs, func(k string) {
			if m[k] > 5 {
				errs.Add(tags.Entry(k), "too big")
			}
		})
		if !Unique(xs) || !IsEmail("a@b") || !IsURI("https://example.com/x?y#z") || !IsUUID("123e4567-e89b-12d3-a456-426614174000") {
			panic("unexpected")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations on valid values, want 0", allocs)
	}
}
