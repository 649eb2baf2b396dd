package jsonfast

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/svcrun/svc/runtime/object"
)

// Encoder appends JSON to B as encoding/json's Marshal writes it (same
// member order, omitempty rules, string escaping, number and time
// formats). The first error sticks in Err.
type Encoder struct {
	B   []byte
	Err error
}

// Raw appends s as it is (punctuation and quoted names).
func (e *Encoder) Raw(s string) { e.B = append(e.B, s...) }

// Byte appends c.
func (e *Encoder) Byte(c byte) { e.B = append(e.B, c) }

// String appends s quoted.
func (e *Encoder) String(s string) { e.B = AppendString(e.B, s) }

// Int appends n.
func (e *Encoder) Int(n int64) { e.B = strconv.AppendInt(e.B, n, 10) }

// Bool appends b.
func (e *Encoder) Bool(b bool) { e.B = strconv.AppendBool(e.B, b) }

// Float appends f, a float of bits bits.
func (e *Encoder) Float(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.fail(errors.New("jsonfast: unsupported value: " + strconv.FormatFloat(f, 'g', -1, bits)))
		return
	}
	e.B = AppendFloat(e.B, f, bits)
}

// Time appends t as time.Time's MarshalJSON does.
func (e *Encoder) Time(t time.Time) {
	if y := t.Year(); y < 0 || y >= 10000 {
		e.fail(errors.New("jsonfast: Time.MarshalJSON: year outside of range [0,9999]"))
		return
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		e.fail(errors.New("jsonfast: Time.MarshalJSON: timezone hour outside of range [0,23]"))
		return
	}
	e.B = append(e.B, '"')
	e.B = t.AppendFormat(e.B, time.RFC3339Nano)
	e.B = append(e.B, '"')
}

// Any appends a free-form value with encoding/json.
func (e *Encoder) Any(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		e.fail(err)
		return
	}
	e.B = append(e.B, b...)
}

// Marshal appends v encoded by encoding/json to dst: the generated
// encoders' answer for a value not of their type.
func Marshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// StringMap appends a map of strings, keys sorted (as encoding/json
// sorts them); nil is null.
func (e *Encoder) StringMap(m map[string]string) {
	if m == nil {
		e.Raw("null")
		return
	}
	e.B = append(e.B, '{')
	for i, k := range SortedKeys(m) {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		e.String(k)
		e.B = append(e.B, ':')
		e.String(m[k])
	}
	e.B = append(e.B, '}')
}

// Strings appends a list of strings; nil is null.
func (e *Encoder) Strings(s []string) {
	if s == nil {
		e.Raw("null")
		return
	}
	e.B = append(e.B, '[')
	for i, v := range s {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		e.String(v)
	}
	e.B = append(e.B, ']')
}

func (e *Encoder) fail(err error) {
	if e.Err == nil {
		e.Err = err
	}
}

// SortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Envelope appends the envelope's members, apiVersion, kind and
// metadata, after the object's opening brace.
func (e *Encoder) Envelope(env *object.Envelope) {
	e.Raw(`"apiVersion":`)
	e.String(env.APIVersion)
	e.Raw(`,"kind":`)
	e.String(env.Kind)
	e.Raw(`,"metadata":{"name":`)
	md := &env.Metadata
	e.String(md.Name)
	if md.GenerateName != "" {
		e.Raw(`,"generateName":`)
		e.String(md.GenerateName)
	}
	if len(md.Labels) > 0 {
		e.Raw(`,"labels":`)
		e.StringMap(md.Labels)
	}
	if len(md.Annotations) > 0 {
		e.Raw(`,"annotations":`)
		e.StringMap(md.Annotations)
	}
	if md.Version != nil {
		e.Raw(`,"version":`)
		e.Int(*md.Version)
	}
	if md.CreationTimestamp != nil {
		e.Raw(`,"creationTimestamp":`)
		e.Time(*md.CreationTimestamp)
	}
	if md.DeletionTimestamp != nil {
		e.Raw(`,"deletionTimestamp":`)
		e.Time(*md.DeletionTimestamp)
	}
	if len(md.Finalizers) > 0 {
		e.Raw(`,"finalizers":`)
		e.Strings(md.Finalizers)
	}
	e.B = append(e.B, '}')
}

// AppendFloat appends f as encoding/json formats a float of bits bits:
// the shortest representation, in exponent form only for very small or
// large magnitudes, with a two-digit exponent at least ("1e-07").
func AppendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// strconv writes e-07; encoding/json writes e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hex = "0123456789abcdef"

// safe marks the ASCII bytes written as they are inside a string: not a
// control character, quote, backslash, or one of <, > and & (which
// encoding/json escapes so that JSON can sit in HTML).
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendString appends s quoted as encoding/json quotes it: HTML
// characters and U+2028, U+2029 escaped as \u00XX and \u20XX, invalid
// UTF-8 replaced by U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
