package codec

import "testing"

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
