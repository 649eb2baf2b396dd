package store

// This file frames records for the write-ahead log and snapshots (kind,
// table, name, version, JSON, index keys). It is not runtime/codec, which
// decodes request bodies.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Log and snapshot record kinds. These numbers are on disk: never renumber
// them; retire a kind by leaving its number unused.
const (
	kindPut     byte = 1 // table, name, version, JSON
	kindRemove  byte = 2 // table, name
	kindPutKeys byte = 3 // table, name, version, JSON, then the index keys
)

// encodePut frames a stored object: kind, table key, name, version, JSON,
// and, when the record has them, its index keys (its keys section, see
// internal/record/keys.go), so a restart can index it without decoding
// the JSON.
func encodePut(table string, r *Record) []byte {
	return appendPut(make([]byte, 0, putSize(table, r)), table, r)
}

// putSize is the most bytes appendPut adds for r.
func putSize(table string, r *Record) int {
	return 1 + 4*binary.MaxVarintLen64 + len(table) + len(r.Name) + len(r.Data) + len(r.Sec)
}

// appendPut appends encodePut's frame to b, so a snapshot can reuse one
// buffer for every record.
func appendPut(b []byte, table string, r *Record) []byte {
	kind := kindPut
	if r.Sec != "" {
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
	return append(b, r.Sec...)
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
