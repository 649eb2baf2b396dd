package jsonfast

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestAppendMatchesEncodingJSON: strings and floats are written as
// encoding/json writes them.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\\\b\f\n\r\t\x00\x1f\x7f", "\u2028\u2029", "é€😀", "\xff\xfe", "a\xc3", "\xed\xa0\x80"} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324} {
		want, _ := json.Marshal(f)
		if got := AppendFloat(nil, f, 64); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v, 64) = %s, want %s", f, got, want)
		}
		if math.IsInf(float64(float32(f)), 0) {
			continue
		}
		want, _ = json.Marshal(float32(f))
		if got := AppendFloat(nil, float64(float32(f)), 32); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v, 32) = %s, want %s", f, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add("<\u2028\xff", 1.5)
	f.Fuzz(func(t *testing.T, s string, x float64) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		want, _ = json.Marshal(x)
		if got := AppendFloat(nil, x, 64); !bytes.Equal(got, want) {
			t.Fatalf("AppendFloat(%v) = %s, want %s", x, got, want)
		}
	})
}

// TestMember finds a top-level member without decoding the others, and
// reads the general way what the tokenizer leaves (an escaped name).
func TestMember(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a":1,"status":{"x":[1,2]},"b":{"status":3}}`: `{"x":[1,2]}`,
		`{"a":{"status":1}}`:                            ``,
		`{"status":null}`:                               ``,
		`{"st\u0061tus":{"y":1}}`:                       `{"y":1}`,
		`{"a":"\u0022status\u0022","status":"s"}`:       `"s"`,
	} {
		got, err := Member([]byte(doc), "status")
		if err != nil || string(got) != want {
			t.Errorf("Member(%s) = %s, %v; want %s", doc, got, err, want)
		}
	}
	for _, bad := range []string{`[]`, `{"a":`, ``} {
		if _, err := Member([]byte(bad), "status"); err == nil {
			t.Errorf("Member(%q): no error", bad)
		}
	}
}
