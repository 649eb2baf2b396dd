package jsonfast

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
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

// TestTimeTakesOnlyWhatTheSchemaTakes: the fast path reads exactly the
// date-times the schema's format accepts and leaves the rest (a one-digit
// hour, which time.Time's UnmarshalJSON takes; an escape) to the generic
// path, whose problem names the field.
func TestTimeTakesOnlyWhatTheSchemaTakes(t *testing.T) {
	for doc, ok := range map[string]bool{
		`"2026-01-02T03:04:05Z"`:        true,
		`"2026-01-02T03:04:05.5+01:00"`: true,
		`"0000-01-01T00:00:00Z"`:        true,
		`"2026-01-02T3:04:05Z"`:         false,
		`"0000-01-01T0:00:00+00:00"`:    false,
		`"2026-02-30T03:04:05Z"`:        false,
		`"2026-01-02T03:04:05+24:00"`:   false,
		`"2026-01-02T03:04:05\u005a"`:   false,
		`"2026-01-02 03:04:05Z"`:        false,
		`""`:                            false,
		`20260102`:                      false,
	} {
		d := NewDecoder([]byte(doc))
		got := d.Time()
		if d.OK() != ok {
			t.Errorf("Time(%s): OK %v, want %v", doc, d.OK(), ok)
		}
		if ok {
			var want time.Time
			if err := json.Unmarshal([]byte(doc), &want); err != nil || !got.Equal(want) {
				t.Errorf("Time(%s) = %v, encoding/json %v, %v", doc, got, want, err)
			}
		}
		d.Release()
	}
}
