package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/svcrun/svc/runtime/object"
)

// Names of the default indexes every model has.
const (
	IndexName              = "metadata.name"
	IndexLabels            = "metadata.labels"
	IndexCreationTimestamp = "metadata.creationTimestamp"
	IndexDeletionTimestamp = "metadata.deletionTimestamp"
)

// Order is an index's declared order. The store can walk every index both
// ways; the order only matters to tools that display the declaration.
type Order int

// Index orders.
const (
	Asc Order = iota
	Desc
)

// KeyType says how an index's values are typed, so that selector values
// given as text are converted to keys that compare in the value's natural
// order (9 < 10, -1 < 0, earlier < later).
type KeyType int

// Key types.
const (
	String KeyType = iota
	Int
	Float
	Time
	Bool
	// Label is the type of the labels index only: one key per label.
	Label
)

var keyTypeNames = [...]string{"string", "integer", "number", "date-time", "boolean", "label"}

func (t KeyType) String() string {
	if t < 0 || int(t) >= len(keyTypeNames) {
		return "KeyType(" + strconv.Itoa(int(t)) + ")"
	}
	return keyTypeNames[t]
}

// Key is an index value in its order-preserving binary form. Keys of one
// index compare with plain byte order. Build them with StringKey, IntKey,
// FloatKey, TimeKey and BoolKey; every form is self-delimiting, so a key can
// be followed by other bytes without changing the order.
type Key string

// StringKey encodes s. A 0x00 byte is escaped as 0x00 0xFF and the key ends
// with 0x00 0x01, which keeps "a" < "a\x00" < "ab".
func StringKey(s string) Key {
	b := AppendStringKey(nil, s) // the one encoder; b is not written again
	return Key(unsafe.String(unsafe.SliceData(b), len(b)))
}

// AppendStringKey appends StringKey(s) to dst, growing it at most once.
func AppendStringKey(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+2+strings.Count(s, "\x00"))
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		dst = append(append(dst, s[:i]...), 0, 0xff)
		s = s[i+1:]
	}
	return append(append(dst, s...), 0, 1)
}

// IntKey encodes v as 8 big-endian bytes with the sign bit flipped, so that
// negative numbers sort before positive ones.
func IntKey(v int64) Key {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v)^(1<<63))
	return Key(b[:])
}

// FloatKey encodes v so that byte order is numeric order: positive numbers
// get the sign bit set, negative numbers have every bit inverted. -Inf
// sorts first and +Inf last. Negative zero is encoded as zero, because the
// two are equal numbers: an equality selector "0" must find a stored -0,
// and a unique index must not hold both. NaN has no place in numeric order
// (ParseKey refuses it; JSON cannot carry it).
func FloatKey(v float64) Key {
	if v == 0 {
		v = 0 // turns -0 into +0
	}
	u := math.Float64bits(v)
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], u)
	return Key(b[:])
}

// TimeKey encodes t as its Unix seconds (as IntKey does) followed by the
// nanoseconds within the second as 4 big-endian bytes: 12 bytes that order
// every time.Time correctly. (Unix nanoseconds in an int64 only cover the
// years 1678 to 2262; the zero time.Time, year 1, and RFC 3339 dates such as
// 9999-12-31 fall outside and would overflow into a wrong order.) Times
// that are the same instant in different zones get the same key.
func TimeKey(t time.Time) Key {
	var b [timeKeyLen]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.Unix())^(1<<63))
	binary.BigEndian.PutUint32(b[8:], uint32(t.Nanosecond()))
	return Key(b[:])
}

const timeKeyLen = 12

// KeyTime decodes a TimeKey; false when k is not one.
func KeyTime(k Key) (time.Time, bool) {
	if len(k) != timeKeyLen {
		return time.Time{}, false
	}
	sec := int64(binary.BigEndian.Uint64([]byte(k[:8])) ^ (1 << 63))
	nsec := int64(binary.BigEndian.Uint32([]byte(k[8:])))
	return time.Unix(sec, nsec).UTC(), true
}

// BoolKey encodes false before true.
func BoolKey(v bool) Key {
	if v {
		return "\x01"
	}
	return "\x00"
}

// LabelKey encodes one label for the labels index: the key, a 0x00, the
// value, a 0x00. Label keys and values never hold 0x00, so the prefix
// LabelKeyPrefix(k) finds every object that has label k.
func LabelKey(k, v string) Key { return Key(k + "\x00" + v + "\x00") }

// LabelKeyPrefix is the prefix of every LabelKey for label key k.
func LabelKeyPrefix(k string) Key { return Key(k + "\x00") }

// ParseKey converts a selector value written as text into a key of type t.
func ParseKey(t KeyType, s string) (Key, error) {
	switch t {
	case String:
		return StringKey(s), nil
	case Int:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not an integer", s)
		}
		return IntKey(v), nil
	case Float:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) {
			return "", fmt.Errorf("%q is not a number", s)
		}
		return FloatKey(v), nil
	case Time:
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return "", fmt.Errorf("%q is not an RFC 3339 date-time", s)
		}
		return TimeKey(v), nil
	case Bool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return "", fmt.Errorf("%q is not a boolean", s)
		}
		return BoolKey(v), nil
	}
	return "", fmt.Errorf("index of type %s cannot be compared with a value", t)
}

// FormatKey turns a key of type t back into text, for error messages.
func FormatKey(t KeyType, k Key) string {
	switch t {
	case String:
		s := strings.TrimSuffix(string(k), "\x00\x01")
		return strings.ReplaceAll(s, "\x00\xff", "\x00")
	case Int:
		if len(k) != 8 {
			break
		}
		return strconv.FormatInt(int64(binary.BigEndian.Uint64([]byte(k))^(1<<63)), 10)
	case Time:
		if t, ok := KeyTime(k); ok {
			return t.Format(time.RFC3339Nano)
		}
	case Float:
		if len(k) != 8 {
			break
		}
		u := binary.BigEndian.Uint64([]byte(k))
		if u&(1<<63) != 0 {
			u &^= 1 << 63
		} else {
			u = ^u
		}
		return strconv.FormatFloat(math.Float64frombits(u), 'g', -1, 64)
	case Bool:
		return strconv.FormatBool(k == "\x01")
	case Label:
		kv := strings.SplitN(strings.TrimSuffix(string(k), "\x00"), "\x00", 2)
		return strings.Join(kv, "=")
	}
	return fmt.Sprintf("%q", string(k))
}

// KeyFunc appends an object's keys for one index to dst and returns it.
// Appending nothing means the object has no value for the index. A
// single-valued index appends at most one key.
type KeyFunc func(obj object.Object, dst []Key) []Key

// Index declares one index of a model.
type Index struct {
	// Name is unique within the model; the field path is recommended
	// ("spec.slug"), and it is what sort and fieldSelector name.
	Name  string
	Order Order
	// Unique makes a write fail when another object already has one of
	// its keys for this index.
	Unique bool
	// Multi marks an index that may hold several keys per object.
	Multi bool
	Type  KeyType
	Keys  KeyFunc
}

// DefaultIndexes returns the indexes every model has without declaring
// them, as a copy the caller may change.
func DefaultIndexes() []Index { return slices.Clone(defaultIndexes) }

// defaultIndexes is built once and never changed: lists look indexes up
// on every call.
var defaultIndexes = []Index{
	{Name: IndexName, Unique: true, Type: String, Keys: func(o object.Object, dst []Key) []Key {
		return append(dst, StringKey(o.GetEnvelope().Metadata.Name))
	}},
	{Name: IndexLabels, Multi: true, Type: Label, Keys: func(o object.Object, dst []Key) []Key {
		for k, v := range o.GetEnvelope().Metadata.Labels {
			dst = append(dst, LabelKey(k, v))
		}
		return dst
	}},
	{Name: IndexCreationTimestamp, Type: Time, Keys: func(o object.Object, dst []Key) []Key {
		if t := o.GetEnvelope().Metadata.CreationTimestamp; t != nil {
			dst = append(dst, TimeKey(*t))
		}
		return dst
	}},
	{Name: IndexDeletionTimestamp, Type: Time, Keys: func(o object.Object, dst []Key) []Key {
		if t := o.GetEnvelope().Metadata.DeletionTimestamp; t != nil {
			dst = append(dst, TimeKey(*t))
		}
		return dst
	}},
}
