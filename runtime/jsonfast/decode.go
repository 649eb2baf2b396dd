// Package jsonfast holds what the generated JSON codecs of models call: a
// strict decoder on a tokenizer (github.com/go-json-experiment/json's
// jsontext) and append-style encoding that writes what encoding/json
// writes. The generated code decodes a request body straight into a
// model's Go type and encodes it back without reflection (model.Model's
// DecodeJSON and EncodeJSON).
//
// The decoder is a fast path only: it gives up (OK reports false) on
// anything it is not sure to read exactly as the generic path does
// (runtime/codec: a generic document, the schema validator, then
// encoding/json) — an unknown or escaped property name, a value of
// another type, null, an escape it would unquote differently, a
// duplicate name, invalid UTF-8 — and the caller decodes again the
// generic way, which names every violation.
package jsonfast

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/validation"
)

// Decoder reads one JSON document. Every method is a no-op once the
// decoder has failed, so generated code checks OK once, at the end.
type Decoder struct {
	dec    jsontext.Decoder
	buf    bytes.Buffer
	failed bool
}

var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// NewDecoder returns a decoder of data from a pool; Release returns it.
// data must not change until then.
func NewDecoder(data []byte) *Decoder {
	d := decoders.Get().(*Decoder)
	d.failed = false
	// The tokenizer reads a bytes.Buffer in place, without copying.
	d.buf = *bytes.NewBuffer(data)
	d.dec.Reset(&d.buf)
	return d
}

// Release returns d to the pool.
func (d *Decoder) Release() {
	d.buf = bytes.Buffer{}
	d.dec.Reset(&d.buf)
	decoders.Put(d)
}

// Fail gives up the fast path.
func (d *Decoder) Fail() { d.failed = true }

// OK reports whether everything read so far was read exactly.
func (d *Decoder) OK() bool { return !d.failed }

// value reads the next value whole, or fails unless it is of kind k.
func (d *Decoder) value(k jsontext.Kind) jsontext.Value {
	if d.failed {
		return nil
	}
	if d.dec.PeekKind() != k {
		d.failed = true
		return nil
	}
	v, err := d.dec.ReadValue()
	if err != nil {
		d.failed = true
		return nil
	}
	return v
}

// begin reads the opening delimiter k ('{' or '[').
func (d *Decoder) begin(k jsontext.Kind) bool {
	if d.failed {
		return false
	}
	if d.dec.PeekKind() != k {
		d.failed = true
		return false
	}
	if _, err := d.dec.ReadToken(); err != nil {
		d.failed = true
		return false
	}
	return true
}

// BeginObject reads the start of an object; false (and failed) for
// anything else, null included.
func (d *Decoder) BeginObject() bool { return d.begin('{') }

// BeginArray reads the start of an array.
func (d *Decoder) BeginArray() bool { return d.begin('[') }

// More reports whether the object or array being read has another
// member; at its end it reads the closing delimiter and reports false.
func (d *Decoder) More() bool {
	if d.failed {
		return false
	}
	switch d.dec.PeekKind() {
	case '}', ']':
		if _, err := d.dec.ReadToken(); err != nil {
			d.failed = true
		}
		return false
	case 0:
		d.failed = true
		return false
	}
	return true
}

// Name reads an object member's name. The result aliases the input and
// is valid until the next read; a name with escapes fails (the generic
// path unquotes it), and so reads as no known name.
func (d *Decoder) Name() []byte {
	v := d.value('"')
	if len(v) < 2 || bytes.IndexByte(v, '\\') >= 0 {
		d.failed = true
		return nil
	}
	return v[1 : len(v)-1]
}

// String reads a string.
func (d *Decoder) String() string {
	v := d.value('"')
	if len(v) < 2 {
		d.failed = true
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	// The tokenizer has checked the escapes; this unquotes them as
	// encoding/json does for valid input.
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		d.failed = true
		return ""
	}
	return string(s)
}

// Int reads an integer that fits in bits bits: no fraction or exponent,
// as encoding/json requires of a Go integer.
func (d *Decoder) Int(bits int) int64 {
	v := d.value('0')
	if d.failed {
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, bits)
	if err != nil {
		d.failed = true
	}
	return n
}

// Float reads a number that a float of bits bits holds.
func (d *Decoder) Float(bits int) float64 {
	v := d.value('0')
	if d.failed {
		return 0
	}
	f, err := strconv.ParseFloat(string(v), bits)
	if err != nil {
		d.failed = true
	}
	return f
}

// Bool reads true or false.
func (d *Decoder) Bool() bool {
	if d.failed {
		return false
	}
	switch d.dec.PeekKind() {
	case 't', 'f':
		tok, err := d.dec.ReadToken()
		if err != nil {
			d.failed = true
			return false
		}
		return tok.Bool()
	}
	d.failed = true
	return false
}

// Time reads a time.Time as encoding/json does (time.Time's
// UnmarshalJSON: RFC 3339), but only what the schema's date-time format
// accepts (validation.IsDateTime): UnmarshalJSON also takes a one-digit
// hour ("T0:00:00Z"), which the generic path refuses with a problem
// naming the field, so the fast path must leave it to that path.
func (d *Decoder) Time() time.Time {
	var t time.Time
	v := d.value('"')
	if d.failed {
		return t
	}
	// Read in place: an update's body carries a timestamp or two, and a
	// copy of each would be garbage at once.
	if len(v) < 3 || !validation.IsDateTime(unsafe.String(&v[1], len(v)-2)) {
		d.failed = true // an escape, or not a date-time the schema takes
		return t
	}
	if err := t.UnmarshalJSON(v); err != nil {
		d.failed = true
	}
	return t
}

// Any reads a free-form value (any JSON but null) into v with
// encoding/json, as the generic path decodes it.
func (d *Decoder) Any(v any) {
	if d.failed {
		return
	}
	if d.dec.PeekKind() == 'n' {
		d.failed = true
		return
	}
	raw, err := d.dec.ReadValue()
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		d.failed = true
	}
}

// Skip reads the next value, whatever it is, without decoding it: for
// readers that want a few members of a document and pass over the rest.
func (d *Decoder) Skip() {
	if d.failed {
		return
	}
	if err := d.dec.SkipValue(); err != nil {
		d.failed = true
	}
}

// End checks that nothing but white space follows the document.
func (d *Decoder) End() bool {
	if d.failed {
		return false
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		d.failed = true
	}
	return !d.failed
}

// Envelope reads the member named name of an object's envelope into env
// and reports whether name is one (apiVersion, kind or metadata); seen
// gets the bits EnvAPIVersion, EnvKind and EnvMetadata. Whether the
// apiVersion and kind are the model's is the caller's to check.
func (d *Decoder) Envelope(env *object.Envelope, name []byte, seen *uint8) bool {
	switch string(name) {
	case "apiVersion":
		env.APIVersion = d.String()
		*seen |= EnvAPIVersion
	case "kind":
		env.Kind = d.String()
		*seen |= EnvKind
	case "metadata":
		d.metadata(&env.Metadata)
		*seen |= EnvMetadata
	default:
		return false
	}
	return true
}

// Bits of Envelope's seen; the schema requires all three.
const (
	EnvAPIVersion uint8 = 1 << iota
	EnvKind
	EnvMetadata
	EnvAll = EnvAPIVersion | EnvKind | EnvMetadata
)

func (d *Decoder) metadata(md *object.Metadata) {
	if !d.BeginObject() {
		return
	}
	for d.More() {
		switch string(d.Name()) {
		case "name":
			md.Name = d.String()
		case "generateName":
			md.GenerateName = d.String()
		case "labels":
			md.Labels = d.StringMap()
		case "annotations":
			md.Annotations = d.StringMap()
		case "version":
			v := d.Int(64)
			md.Version = &v
		case "creationTimestamp":
			t := d.Time()
			md.CreationTimestamp = &t
		case "deletionTimestamp":
			t := d.Time()
			md.DeletionTimestamp = &t
		case "finalizers":
			md.Finalizers = d.Strings()
		default:
			d.failed = true
		}
	}
}

// StringMap reads an object of strings.
func (d *Decoder) StringMap() map[string]string {
	if !d.BeginObject() {
		return nil
	}
	m := map[string]string{}
	for d.More() {
		k := d.String() // a name is a string token
		m[k] = d.String()
	}
	return m
}

// Strings reads an array of strings.
func (d *Decoder) Strings() []string {
	if !d.BeginArray() {
		return nil
	}
	s := []string{}
	for d.More() {
		s = append(s, d.String())
	}
	return s
}

// Member returns the value of the top-level member name of data, a JSON
// object, without decoding the others: nil when it is absent or null.
func Member(data []byte, name string) ([]byte, error) {
	d := NewDecoder(data)
	defer d.Release()
	if !d.BeginObject() {
		return nil, errors.New("jsonfast: not a JSON object")
	}
	for d.More() {
		k := d.Name()
		if d.failed {
			break
		}
		if string(k) != name {
			if err := d.dec.SkipValue(); err != nil {
				return nil, fmt.Errorf("jsonfast: %w", err)
			}
			continue
		}
		v, err := d.dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("jsonfast: %w", err)
		}
		if v.Kind() == 'n' {
			return nil, nil
		}
		return bytes.Clone(v), nil
	}
	if d.failed {
		// An escaped name, say: read it the general way.
		var v map[string]json.RawMessage
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("jsonfast: %w", err)
		}
		if raw := v[name]; len(raw) > 0 && string(raw) != "null" {
			return raw, nil
		}
	}
	return nil, nil
}
