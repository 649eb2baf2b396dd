package rt

import (
	"encoding/json"
	"math"
	"net/url"
	"testing"
	"time"

	"github.com/svcrun/svc/generator/validators"
	"github.com/svcrun/svc/generator/validators/internal/kintest"
	"github.com/svcrun/svc/runtime/object"
)

// formatCases seed the format tests and FuzzFormats.
var formatCases = []string{
	"", "a", "a@b", "@b", "a@", "a@@b", "a@b c", "a b@c", "a@b,c", "é@ü.de", "a@b\n", "\xff@b",
	"http://example.com", "https://user:pw@example.com:8080/p?q=1#f", "mailto:a@b.c", "urn:isbn:123",
	"http://[::1]:80/", "http://[::1", "http://a b", "http://a:b:c/", "http://a:99x/", "//x", "/x", "x",
	"1http://x", "h:", "h://", "http://%zz", "http://x/%zz", "http://x/%41", "http://x#%zz", "http://ä.de",
	"ht~tp://x", "a+b.c-d://x", "http://a_b.c~d/", "http://x:/", "HTTP://X", "http://x\x7f",
	"2017-07-21", "2017-13-21", "2017-02-31", "17-07-21", "2017-07-21 ",
	"2017-07-21T17:32:28Z", "2017-07-21T17:32:28.123456789Z", "2017-07-21T17:32:28+02:00",
	"2017-07-21T17:32:28-23:59", "2017-07-21T17:32:28+24:00", "2017-07-21T17:32:28+05:60",
	"2017-07-21T17:32:60Z", "2017-02-29T00:00:00Z", "2016-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
	"2000-02-29T00:00:00Z", "0000-02-29T00:00:00Z", "2017-07-21t17:32:28Z", "2017-07-21T17:32:28z",
	"2017-07-21T17:32:28.Z", "2017-07-21T17:32:28", "2017-07-21T24:00:00Z", "2017-04-31T00:00:00Z",
	"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-42661417400g", "123e4567e89b12d3a456426614174000",
	"00000000-0000-0000-0000-000000000000", "123e4567-e89b-12d3-a456_426614174000",
}

func TestFormatsAgreeWithKin(t *testing.T) {
	for _, s := range formatCases {
		checkFormats(t, s)
	}
}

func FuzzFormats(f *testing.F) {
	for _, s := range formatCases {
		f.Add(s)
	}
	f.Fuzz(checkFormats)
}

func checkFormats(t *testing.T, s string) {
	t.Helper()
	kin := validators.KinFormats()
	for name, ours := range map[string]func(string) bool{
		"email": isEmail, "uri": isURI, "uuid": isUUID, "date": isDate, "date-time": isDateTime,
	} {
		want := kin[name].Validate(s) == nil
		if got := ours(s); got != want {
			t.Errorf("format %s of %q: generated check says %v, kin-openapi's says %v", name, s, got, want)
		}
	}
	if simpleURI(s) {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			t.Errorf("simpleURI(%q) is true, but url.Parse gives %v, %v", s, u, err)
		}
	}
	if isDateTime(s) {
		// What the check accepts must survive a round trip through a
		// typed field.
		var tm time.Time
		q, _ := json.Marshal(s)
		if err := json.Unmarshal(q, &tm); err != nil {
			t.Errorf("isDateTime(%q), but time.Time cannot read it: %v", s, err)
		} else if _, err := json.Marshal(tm); err != nil || !isJSONTime(tm) {
			t.Errorf("isDateTime(%q), but time.Time cannot write it back: %v", s, err)
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
		if got := isJSONTime(tc.t); got != tc.want || got != (err == nil) {
			t.Errorf("isJSONTime(%v) = %v, want %v (json.Marshal: %v)", tc.t, got, tc.want, err)
		}
	}
}

func TestFieldPath(t *testing.T) {
	var root *fieldPath
	spec := fieldPath{parent: root, name: "spec"}
	tags := fieldPath{parent: &spec, name: "tags"}
	item := fieldPath{parent: &tags, index: 3, kind: stepIndex}
	labels := fieldPath{parent: &item, name: "labels"}
	for _, tc := range []struct{ got, want string }{
		{root.String(), "(root)"},
		{root.field("kind"), "kind"},
		{spec.String(), "spec"},
		{spec.field("age"), "spec.age"},
		{tags.item(1), "spec.tags[1]"},
		{item.field("name"), "spec.tags[3].name"},
		{labels.entry("a.b/c"), "spec.tags[3].labels[a.b/c]"},
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
		eachKey(m, &errs, func(k string) {
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
		{"empty", unique([]string{}), true},
		{"strings", unique([]string{"a", "b", "c"}), true},
		{"duplicate strings", unique([]string{"a", "b", "a"}), false},
		{"big", unique(big), true},
		{"big with duplicate", unique(append(big, 42)), false},
		{"floats", uniqueFloats([]float64{1, 2, 1.5}), true},
		{"zero and negative zero", uniqueFloats([]float64{0, math.Copysign(0, -1)}), true},
		{"duplicate floats", uniqueFloats([]float64{1, 2, 1}), false},
		{"big floats", uniqueFloats(bigFloats), true},
		{"big floats with duplicate", uniqueFloats(append(bigFloats, 3)), false},
		{"json", uniqueJSON([]any{1.0, "1", map[string]any{"a": 1.0}, map[string]any{"a": 2.0}}), true},
		{"json duplicate objects", uniqueJSON([]any{map[string]any{"a": 1.0, "b": true}, map[string]any{"b": true, "a": 1.0}}), false},
		{"json numbers by text", uniqueJSON([]any{json.Number("1"), json.Number("1.0")}), true},
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
		got, ok := jsonNumber(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("jsonNumber(%#v) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
	if !isInt64(1<<63) || isInt64(1<<64) || !isInt64(-(1 << 63)) || isInt64(-(1<<63)-4096) {
		t.Error("isInt64 bounds are wrong")
	}
	if !isInt32(math.MaxInt32) || isInt32(math.MaxInt32+1) || !isInt32(math.MinInt32) || isInt32(math.MinInt32-1) {
		t.Error("isInt32 bounds are wrong")
	}
}

func TestJSONObject(t *testing.T) {
	if m, ok := jsonObject(map[any]any{"a": 1}); !ok || m["a"] != 1 {
		t.Errorf("map[any]any with string keys: %v, %v", m, ok)
	}
	if _, ok := jsonObject(map[any]any{1: 1}); ok {
		t.Error("map[any]any with an int key accepted")
	}
	if _, ok := jsonObject([]any{}); ok {
		t.Error("array accepted as object")
	}
}

func TestBadType(t *testing.T) {
	var errs object.FieldErrors
	badType(&errs, "a", nil, "a string")
	badType(&errs, "b", 1.0, "a string")
	want := object.FieldErrors{{Field: "a", Message: "must not be null"}, {Field: "b", Message: "must be a string"}}
	if len(errs) != 2 || errs[0] != want[0] || errs[1] != want[1] {
		t.Errorf("got %v, want %v", errs, want)
	}
}

func TestPathsDoNotAllocate(t *testing.T) {
	if kintest.Race {
		t.Skip("the race detector allocates")
	}
	m := map[string]int{"a": 1, "b": 2}
	xs := []string{"a", "b", "c"}
	allocs := testing.AllocsPerRun(100, func() {
		var errs object.FieldErrors
		spec := fieldPath{name: "spec"}
		tags := fieldPath{parent: &spec, name: "tags"}
		for i := range xs {
			it := fieldPath{parent: &tags, index: i, kind: stepIndex}
			_ = it
		}
		eachKey(m, &errs, func(k string) {
			if m[k] > 5 {
				errs.Add(tags.entry(k), "too big")
			}
		})
		if !unique(xs) || !isEmail("a@b") || !isURI("https://example.com/x?y#z") || !isUUID("123e4567-e89b-12d3-a456-426614174000") {
			panic("unexpected")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations on valid values, want 0", allocs)
	}
}
