package codec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestJSONPatchMustBeAnArray(t *testing.T) {
	for _, p := range []string{"null", " null ", "{}", `{"op":"add"}`, "1", `"x"`, ""} {
		if _, err := ParsePatch(JSONPatch, []byte(p)); err == nil {
			t.Errorf("ParsePatch(%q) accepted a JSON Patch that is not an array", p)
		}
	}
	apply, err := ParsePatch(JSONPatch, []byte(" [] "))
	if err != nil {
		t.Fatalf("empty patch: %v", err)
	}
	if out, err := apply([]byte(`{"a":1}`)); err != nil || string(out) != `{"a":1}` {
		t.Errorf("empty patch gave %s, %v", out, err)
	}
}

// person is a document to patch: an object with an array and a map.
const person = `{"metadata":{"name":"ann","labels":{"a":"1"}},"spec":{"tags":["x","y","z"]}}`

// TestCopyBombIsRefused: copy operations that double an array each time
// are refused once what they copied passes the limit, before the memory
// is spent (22 of them took a server from 29 MB to 569 MB).
func TestCopyBombIsRefused(t *testing.T) {
	ops := []string{`{"op":"add","path":"/spec/tags/-","value":"` + strings.Repeat("t", 1000) + `"}`}
	for range 40 {
		ops = append(ops, `{"op":"copy","from":"/spec/tags","path":"/spec/tags/-"}`)
	}
	apply, err := ParsePatch(JSONPatch, []byte("["+strings.Join(ops, ",")+"]"))
	if err != nil {
		t.Fatalf("ParsePatch: %v", err)
	}
	_, err = apply([]byte(person))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxPatchedBytes" {
		t.Fatalf("apply = %v, want a *LimitError naming MaxPatchedBytes", err)
	}
}

// TestPatchedDocumentIsBounded: a patch whose result is larger than a
// body may be is refused, whatever built it.
func TestPatchedDocumentIsBounded(t *testing.T) {
	big := strings.Repeat("b", 600)
	apply, err := ParsePatchLimits(JSONPatch, []byte(`[{"op":"add","path":"/spec/big","value":"`+big+`"}]`), PatchLimits{MaxBytes: 512})
	if err != nil {
		t.Fatalf("ParsePatchLimits: %v", err)
	}
	var le *LimitError
	if _, err := apply([]byte(person)); !errors.As(err, &le) {
		t.Errorf("JSON Patch: apply = %v, want a *LimitError", err)
	}
	apply, err = ParsePatchLimits(MergePatch, []byte(`{"spec":{"big":"`+big+`"}}`), PatchLimits{MaxBytes: 512})
	if err != nil {
		t.Fatalf("ParsePatchLimits: %v", err)
	}
	if _, err := apply([]byte(person)); !errors.As(err, &le) {
		t.Errorf("merge patch: apply = %v, want a *LimitError", err)
	}
}

// TestTooManyOperations: the operations are counted before any is decoded.
func TestTooManyOperations(t *testing.T) {
	patch := "[" + strings.Repeat(`{"op":"test","path":"/a","value":1},`, MaxPatchOps) + `{"op":"test","path":"/a","value":1}]`
	_, err := ParsePatch(JSONPatch, []byte(patch))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxPatchOps" {
		t.Fatalf("ParsePatch(%d operations) = %v, want a *LimitError naming MaxPatchOps", MaxPatchOps+1, err)
	}
	patch = "[" + strings.Repeat(`{"op":"test","path":"/a","value":1},`, MaxPatchOps-1) + `{"op":"test","path":"/a","value":1}]`
	if _, err := ParsePatch(JSONPatch, []byte(patch)); err != nil {
		t.Errorf("ParsePatch(%d operations) = %v, want it accepted", MaxPatchOps, err)
	}
}

// TestArrayIndexes: RFC 6901 array indexes are digits without a leading
// zero, or "-"; the same segments are fine as object keys.
func TestArrayIndexes(t *testing.T) {
	tests := []struct {
		name, patch string
		bad         string // substring of the error; "" when it applies
	}{
		{"negative", `[{"op":"add","path":"/spec/tags/-1","value":"n"}]`, `path "/spec/tags/-1"`},
		{"negative replace", `[{"op":"replace","path":"/spec/tags/-1","value":"n"}]`, `path "/spec/tags/-1"`},
		{"negative remove", `[{"op":"remove","path":"/spec/tags/-1"}]`, `path "/spec/tags/-1"`},
		{"negative from", `[{"op":"copy","from":"/spec/tags/-1","path":"/spec/x"}]`, `path "/spec/tags/-1"`},
		{"leading zero", `[{"op":"replace","path":"/spec/tags/01","value":"n"}]`, `path "/spec/tags/01"`},
		{"plus", `[{"op":"replace","path":"/spec/tags/+1","value":"n"}]`, `path "/spec/tags/+1"`},
		{"minus zero", `[{"op":"replace","path":"/spec/tags/-0","value":"n"}]`, `path "/spec/tags/-0"`},
		{"negative in a new array", `[{"op":"add","path":"/spec/new","value":["a"]},{"op":"add","path":"/spec/new/-1","value":"n"}]`, "invalid index"},
		{"bad escape", `[{"op":"add","path":"/spec/a~2b","value":"n"}]`, `"~" must be followed by 0 or 1`},
		{"no slash", `[{"op":"add","path":"spec","value":"n"}]`, `starts with "/"`},
		{"index", `[{"op":"replace","path":"/spec/tags/0","value":"n"},{"op":"add","path":"/spec/tags/3","value":"n"}]`, ""},
		{"append", `[{"op":"add","path":"/spec/tags/-","value":"n"}]`, ""},
		{"object key -1", `[{"op":"add","path":"/metadata/labels/-1","value":"n"}]`, ""},
		{"object key 01", `[{"op":"add","path":"/metadata/labels/01","value":"n"}]`, ""},
		{"escapes", `[{"op":"add","path":"/metadata/labels/a~1b~0c","value":"n"}]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			apply, err := ParsePatch(JSONPatch, []byte(tc.patch))
			if err == nil {
				_, err = apply([]byte(person))
			}
			var ce *Error
			switch {
			case tc.bad == "" && err != nil:
				t.Errorf("%s: %v, want it applied", tc.patch, err)
			case tc.bad != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), tc.bad)):
				t.Errorf("%s: %v, want an *Error containing %q", tc.patch, err, tc.bad)
			}
		})
	}
}

// TestDeepPatchIsRefusedFirst: a merge patch nested ten thousand levels
// cost ~950 MB before it was refused; it is refused before it is decoded.
func TestDeepPatchIsRefusedFirst(t *testing.T) {
	const levels = 9990
	deep := strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels)
	for _, pt := range []PatchType{MergePatch, JSONPatch} {
		patch := deep
		if pt == JSONPatch {
			patch = `[{"op":"add","path":"/spec/a","value":` + deep + `}]`
		}
		body := []byte(patch)
		_, err := ParsePatch(pt, body)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "MaxDepth") {
			t.Errorf("%s: ParsePatch = %v, want an *Error naming MaxDepth", pt, err)
		}
		// Averaged over runs, so that the runtime's own allocations
		// elsewhere in the process do not count: decoding would take
		// thousands (one per level), the refusal a few (its error).
		if n := testing.AllocsPerRun(20, func() { ParsePatch(pt, body) }); n > 8 {
			t.Errorf("%s: refusing it made %.0f allocations", pt, n)
		}
	}
}

func TestCheckDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"at the limit", nest(MaxDepth), true},
		{"over the limit", nest(MaxDepth + 1), false},
		{"objects", strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), false},
		{"brackets in strings", `["` + strings.Repeat("[{", MaxDepth) + `"]`, true},
		{"escaped quote", `["\"` + strings.Repeat("[", MaxDepth) + `"]`, true},
		{"escaped backslash", `["\\",` + nest(MaxDepth-1) + `]`, true},
		{"escaped backslash then deep", `["\\",` + nest(MaxDepth) + `]`, false},
		{"siblings", "[" + strings.Repeat(nest(MaxDepth-1)+",", 50) + "1]", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckDepth([]byte(tc.in)); (err == nil) != tc.ok {
				t.Errorf("CheckDepth = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// FuzzCheckDepth: on valid JSON, CheckDepth refuses exactly the documents
// that nest deeper than MaxDepth.
func FuzzCheckDepth(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"[["}]}`, `["\\\"["]`, strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := CheckDepth([]byte(s))
		if !json.Valid([]byte(s)) {
			return
		}
		depth, maxDepth := 0, 0
		dec := json.NewDecoder(strings.NewReader(s))
		for {
			tok, terr := dec.Token()
			if terr != nil {
				break
			}
			switch tok {
			case json.Delim('['), json.Delim('{'):
				depth++
				maxDepth = max(maxDepth, depth)
			case json.Delim(']'), json.Delim('}'):
				depth--
			}
		}
		if (err == nil) != (maxDepth <= MaxDepth) {
			t.Errorf("CheckDepth(%q) = %v; depth %d", s, err, maxDepth)
		}
	})
}

// BenchmarkCheckDepth3MiB scans a body at the default size limit: objects
// of strings, numbers and escapes, as a large create would send.
func BenchmarkCheckDepth3MiB(b *testing.B) {
	item := `{"name":"a \"quoted\" [name]","tags":["x","y"],"age":42},`
	body := []byte("[" + strings.Repeat(item, (3<<20)/len(item)) + "1]")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckDepth(body); err != nil {
			b.Fatal(err)
		}
	}
}
