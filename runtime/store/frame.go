package store

// This file frames records for the write-ahead log and snapshots (kind,
// table, name, version, JSON, index keys). It is not runtime/codec, which
// decodes request bodies.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Log and snapshot record kinds. These numbers are on disk: never renumber
// them; retire a kind by leaving its number unused.
const (
	kindPut     byte = 1 // table, name, version, JSON
	kindRemove  byte = 2 // table, name
	kindPutKeys byte = 3 // table, name, version, JSON, then the index keys
)

// encodePut frames a stored object: kind, table key, name, version, JSON,
// and, when the record knows them, its index keys (see appendKeys), so a
// restart can index it without decoding the JSON.
func encodePut(table string, r *Record) []byte {
	return appendPut(make([]byte, 0, putSize(table, r)), table, r)
}

// putSize is the most bytes appendPut adds for r.
func putSize(table string, r *Record) int {
	return 1 + 4*binary.MaxVarintLen64 + len(table) + len(r.Name) + len(r.Data) + keysSize(r)
}

// appendPut appends encodePut's frame to b, so a snapshot can reuse one
// buffer for every record.
func appendPut(b []byte, table string, r *Record) []byte {
	kind := kindPut
	if r.FP != 0 || r.Blob != nil {
		kind = kindPutKeys
	}
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(len(table)))
	b = append(b, table...)
	b = binary.AppendUvarint(b, uint64(len(r.Name)))
	b = append(b, r.Name...)
	b = binary.AppendVarint(b, r.Version)
	if kind == kindPut {
		return append(b, r.Data...)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Data)))
	b = append(b, r.Data...)
	if r.Blob != nil {
		return append(b, r.Blob...)
	}
	return appendKeys(b, r)
}

// appendKeys writes the keys section: the fingerprint (8 bytes, little
// endian), the labels, creation and deletion keys, the finalizer flag, and
// the keys of each of the model's own indexes; strings are length-prefixed.
func appendKeys(b []byte, r *Record) []byte {
	b = binary.LittleEndian.AppendUint64(b, r.FP)
	b = binary.AppendUvarint(b, uint64(len(r.Labels)))
	for _, l := range r.Labels {
		b = appendString(b, l)
	}
	b = appendString(b, string(r.Creation))
	b = appendString(b, string(r.Deletion))
	if r.Pending {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Keys)))
	for _, ks := range r.Keys {
		b = binary.AppendUvarint(b, uint64(len(ks)))
		for _, k := range ks {
			b = appendString(b, string(k))
		}
	}
	return b
}

func keysSize(r *Record) int {
	if r.Blob != nil {
		return len(r.Blob)
	}
	if r.FP == 0 {
		return 0
	}
	n := 32 + len(r.Creation) + len(r.Deletion)
	for _, l := range r.Labels {
		n += len(l) + 2
	}
	for _, ks := range r.Keys {
		n += 2
		for _, k := range ks {
			n += len(k) + 2
		}
	}
	return n
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// parseKeys fills r's index fields (not fp) from a keys section; false
// means the section is malformed (the caller decodes the JSON instead).
// The keys are substrings of the section itself, which must never change
// (a record's Blob, copied out of the log for it alone): a record costs
// three allocations whatever its number of keys, and its keys are not
// held twice (a copy of the section as a string cost 17% of the heap of
// a restarted store).
func parseKeys(r *Record, section []byte) bool {
	if len(section) < 8 {
		return false
	}
	blob := unsafe.String(unsafe.SliceData(section[8:]), len(section)-8)
	ok := true
	uv := func() int {
		n, w := uvarintString(blob)
		if w <= 0 || n > uint64(len(blob)) {
			ok = false
			return 0
		}
		blob = blob[w:]
		return int(n)
	}
	str := func() string {
		n := uv()
		if !ok || n > len(blob) {
			ok = false
			return ""
		}
		s := blob[:n]
		blob = blob[n:]
		return s
	}
	if n := uv(); ok && n > 0 {
		r.Labels = make([]string, n)
		for i := range r.Labels {
			r.Labels[i] = str()
		}
		r.Sig = record.LabelSig(r.Labels)
	}
	r.Creation = model.Key(str())
	r.Deletion = model.Key(str())
	if !ok || len(blob) == 0 {
		return false
	}
	r.Pending, blob = blob[0] == 1, blob[1:]
	if n := uv(); ok && n > 0 {
		// One backing array serves every index: count the keys first.
		rest, total := blob, 0
		for range n {
			m := uv()
			for range m {
				str()
			}
			total += m
		}
		if !ok {
			return false
		}
		blob = rest
		r.Keys = make([][]model.Key, n)
		all := make([]model.Key, 0, total)
		for i := range r.Keys {
			if m := uv(); m > 0 {
				start := len(all)
				for range m {
					all = append(all, model.Key(str()))
				}
				r.Keys[i] = all[start:len(all):len(all)]
			}
		}
	}
	r.Indexed = ok && len(blob) == 0
	return r.Indexed
}

// uvarintString is binary.Uvarint over a string.
func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// encodeRemove frames the final removal of an object.
func encodeRemove(table, name string) []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(table)+len(name))
	b = append(b, kindRemove)
	b = binary.AppendUvarint(b, uint64(len(table)))
	b = append(b, table...)
	b = binary.AppendUvarint(b, uint64(len(name)))
	return append(b, name...)
}

// logEntry is a decoded log or snapshot record. data and keys alias the
// input.
type logEntry struct {
	kind    byte
	table   string
	name    string
	version int64
	data    []byte
	keys    []byte // kindPutKeys: the keys section
}

var errShort = errors.New("record too short")

// cutBytes splits a length-prefixed field (a uvarint, then the bytes)
// off the front of b.
func cutBytes(b []byte) (field, rest []byte, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, errShort
	}
	return b[w : w+int(n)], b[w+int(n):], nil
}

// entryKey returns the part of a framed record that names the object it
// writes (its table and name, as framed, so a put and a removal of one
// object give the same bytes), aliasing b: disk.Options.Key.
func entryKey(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errShort
	}
	_, rest, err := cutBytes(b[1:]) // the table
	if err == nil {
		_, rest, err = cutBytes(rest) // the name
	}
	if err != nil {
		return nil, err
	}
	return b[1 : len(b)-len(rest)], nil
}

func decodeEntry(b []byte) (logEntry, error) {
	var e logEntry
	if len(b) == 0 {
		return e, errShort
	}
	e.kind, b = b[0], b[1:]
	table, b, err := cutBytes(b)
	if err != nil {
		return e, err
	}
	name, b, err := cutBytes(b)
	if err != nil {
		return e, err
	}
	e.table, e.name = string(table), string(name)
	switch e.kind {
	case kindPut:
		v, w := binary.Varint(b)
		if w <= 0 {
			return e, errShort
		}
		e.version, e.data = v, b[w:]
	case kindPutKeys:
		v, w := binary.Varint(b)
		if w <= 0 {
			return e, errShort
		}
		if e.data, e.keys, err = cutBytes(b[w:]); err != nil {
			return e, err
		}
		e.version, e.kind = v, kindPut
	case kindRemove:
		if len(b) != 0 {
			return e, fmt.Errorf("%d trailing bytes after a removal", len(b))
		}
	default:
		return e, fmt.Errorf("unknown record kind %d", e.kind)
	}
	return e, nil
}
