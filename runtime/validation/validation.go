// Package validation holds the helpers that generated validators call:
// lazily built field paths, deterministic map walks, uniqueness checks,
// JSON value coercions and the string formats (email, uri, uuid, date,
// date-time). The generated code of every plugin imports it, so each
// check is compiled, vetted and tested once.
//
// The format checks define what the generated validators accept; the
// kin-openapi options in generator/validators (KinOptions) define the
// same formats independently, and generator/validators' tests compare the
// two.
package validation

import (
	"encoding/json"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/svcrun/svc/runtime/object"
)

// Path is a field path built lazily: a chain of steps kept on the
// stack while valid values are checked, turned into a string
// ("spec.parts[1].sku", "metadata.labels[team]") only when a violation is
// reported. A nil *Path is the document root.
//
// Generated validators build steps as composite literals on the stack and
// call Field, Item and Entry only to report; none of it allocates until a
// violation is reported.
type Path struct {
	Parent *Path
	Name   string // property name, or map key for a StepKey
	Index  int
	Kind   uint8
}

// Kinds of Path steps.
const (
	StepName uint8 = iota
	StepIndex
	StepKey
)

// String returns the path, or "(root)" for the root.
func (p *Path) String() string {
	if p == nil {
		return "(root)"
	}
	return string(p.appendTo(make([]byte, 0, 48)))
}

func (p *Path) appendTo(b []byte) []byte {
	if p == nil {
		return b
	}
	b = p.Parent.appendTo(b)
	switch p.Kind {
	case StepIndex:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(p.Index), 10)
		return append(b, ']')
	case StepKey:
		b = append(b, '[')
		b = append(b, p.Name...)
		return append(b, ']')
	}
	if len(b) > 0 {
		b = append(b, '.')
	}
	return append(b, p.Name...)
}

// Field returns the path of property name below p.
func (p *Path) Field(name string) string {
	q := Path{Parent: p, Name: name}
	return q.String()
}

// Item returns the path of array item i below p.
func (p *Path) Item(i int) string {
	q := Path{Parent: p, Index: i, Kind: StepIndex}
	return q.String()
}

// Entry returns the path of map entry k below p.
func (p *Path) Entry(k string) string {
	q := Path{Parent: p, Name: k, Kind: StepKey}
	return q.String()
}

// EachKey calls check for every key of m. Map order is random, so when
// check reports a violation the keys are checked again in sorted order:
// the error list comes out the same on every run, and sorting costs
// nothing while the map is valid.
func EachKey[V any](m map[string]V, errs *object.FieldErrors, check func(k string)) {
	mark := len(*errs)
	for k := range m {
		check(k)
	}
	if len(*errs) == mark || len(m) < 2 {
		return
	}
	*errs = (*errs)[:mark]
	for _, k := range slices.Sorted(maps.Keys(m)) {
		check(k)
	}
}

// smallSet is the size up to which uniqueness is checked pairwise, which
// allocates nothing; bigger arrays use a map.
const smallSet = 32

// Unique reports whether xs holds no value twice.
func Unique[T comparable](xs []T) bool {
	if len(xs) <= smallSet {
		for i := 1; i < len(xs); i++ {
			for j := range i {
				if xs[i] == xs[j] {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[T]struct{}, len(xs))
	for _, x := range xs {
		if _, ok := seen[x]; ok {
			return false
		}
		seen[x] = struct{}{}
	}
	return true
}

// UniqueFloats reports whether xs holds no number twice, comparing as
// JSON text does (kin-openapi compares encodings): 0 and -0 differ.
func UniqueFloats(xs []float64) bool {
	bits := func(f float64) uint64 { return math.Float64bits(f) }
	if len(xs) <= smallSet {
		for i := 1; i < len(xs); i++ {
			for j := range i {
				if bits(xs[i]) == bits(xs[j]) {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[uint64]struct{}, len(xs))
	for _, x := range xs {
		if _, ok := seen[bits(x)]; ok {
			return false
		}
		seen[bits(x)] = struct{}{}
	}
	return true
}

// UniqueJSON reports whether a decoded JSON array holds no value twice,
// two values being the same when they encode to the same JSON, as
// kin-openapi decides it (so 1 and json.Number("1.0") differ).
func UniqueJSON(xs []any) bool {
	if len(xs) < 2 {
		return true
	}
	seen := make(map[string]struct{}, len(xs))
	for _, x := range xs {
		b, err := json.Marshal(x)
		if err != nil {
			return false
		}
		if _, ok := seen[string(b)]; ok {
			return false
		}
		seen[string(b)] = struct{}{}
	}
	return true
}

// JSONObject returns v as a JSON object: a map[string]any, or a
// map[any]any whose keys are all strings (as YAML decoders produce).
func JSONObject(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, e := range m {
			s, ok := k.(string)
			if !ok {
				return nil, false
			}
			out[s] = e
		}
		return out, true
	}
	return nil, false
}

// JSONNumber returns v as a finite float64 when v is a number as JSON and
// YAML decoders produce them.
func JSONNumber(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// IsInt64 reports whether an integral f is within int64. 2^63 passes:
// it is how float64 spells math.MaxInt64, and kin-openapi lets it pass.
func IsInt64(f float64) bool { return f >= -(1<<63) && f <= 1<<63 }

// IsInt32 reports whether an integral f is within int32.
func IsInt32(f float64) bool { return f >= math.MinInt32 && f <= math.MaxInt32 }

// BadType reports a value of the wrong JSON type at path.
func BadType(errs *object.FieldErrors, path string, v any, want string) {
	if v == nil {
		errs.Add(path, "must not be null")
		return
	}
	errs.Add(path, "must be %s", want)
}

// IsEmail reports whether s looks like an email address: one "@" with
// text on both sides, and no whitespace, '<', '>', '"' or ',' after it
// (kin-openapi's FormatOfStringForEmail, without a regexp).
func IsEmail(s string) bool {
	at := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			if at >= 0 {
				return false
			}
			at = i
		}
	}
	if at <= 0 || at == len(s)-1 {
		return false
	}
	for i := at + 1; i < len(s); i++ {
		switch s[i] {
		case '<', '>', '"', ',', ' ', '\t', '\n', '\f', '\r':
			return false
		}
	}
	return true
}

// IsURI reports whether s is an absolute URI: net/url parses it and finds
// a scheme. Common URIs are recognised without url.Parse, which
// allocates; anything unusual goes to url.Parse itself.
func IsURI(s string) bool {
	if simpleURI(s) {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// simpleURI recognises a subset of what url.Parse accepts with a scheme:
// printable ASCII without '%' (no escapes to check), and an authority
// without userinfo, IP literal or second colon. false means "ask
// url.Parse", not "invalid".
func simpleURI(s string) bool {
	colon := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '%' {
			return false
		}
		if colon < 0 && c == ':' {
			colon = i
		}
	}
	if colon < 1 || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	rest := s[colon+1:]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '#' || rest[i] == '?' {
			rest = rest[:i]
			break
		}
	}
	if len(rest) < 2 || rest[0] != '/' || rest[1] != '/' {
		return true
	}
	auth := rest[2:]
	for i := 0; i < len(auth); i++ {
		if auth[i] == '/' {
			auth = auth[:i]
			break
		}
	}
	port := false
	for i := 0; i < len(auth); i++ {
		c := auth[i]
		switch {
		case port:
			if !isDigit(c) {
				return false
			}
		case c == ':':
			port = true
		case isLetter(c) || isDigit(c):
		default:
			switch c {
			case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
			default:
				return false
			}
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// IsUUID reports whether s is a UUID in its text form: 32 hex digits in
// groups of 8-4-4-4-12, any version and variant.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// IsDate reports whether s is a date as kin-openapi's FormatOfStringDate
// has it: YYYY-MM-DD with month 01-12 and day 01-31 (any month).
func IsDate(s string) bool {
	return len(s) == 10 && digits(s[0:4]) && s[4] == '-' && s[7] == '-' &&
		inRange(s[5:7], 1, 12) && inRange(s[8:10], 1, 31)
}

// IsDateTime reports whether s is an RFC 3339 date-time that Go's
// time.Time reads and writes back: kin-openapi's FormatOfStringDateTime,
// a day that exists in its month, seconds 00-59 (no leap second) and a
// UTC offset of at most 23:59.
func IsDateTime(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") || !IsDate(s[:10]) || s[10] != 'T' ||
		s[13] != ':' || s[16] != ':' ||
		!inRange(s[11:13], 0, 23) || !inRange(s[14:16], 0, 59) || !inRange(s[17:19], 0, 59) {
		return false
	}
	year, _ := strconv.Atoi(s[0:4])
	month, _ := strconv.Atoi(s[5:7])
	day, _ := strconv.Atoi(s[8:10])
	if day > daysIn(month, year) {
		return false
	}
	rest := s[19:]
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	if rest == "Z" {
		return true
	}
	return len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' &&
		inRange(rest[1:3], 0, 23) && inRange(rest[4:6], 0, 59)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// inRange reports whether s is two digits whose value is in [lo, hi].
func inRange(s string, lo, hi int) bool {
	if len(s) != 2 || !digits(s) {
		return false
	}
	n := int(s[0]-'0')*10 + int(s[1]-'0')
	return lo <= n && n <= hi
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// IsJSONTime reports whether encoding/json can write t as an RFC 3339
// date-time: a four-digit year and a UTC offset under 24 hours.
func IsJSONTime(t time.Time) bool {
	if y := t.Year(); y < 0 || y > 9999 {
		return false
	}
	_, off := t.Zone()
	return off > -24*3600 && off < 24*3600
}
