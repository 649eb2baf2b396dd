package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Log and snapshot record kinds. These numbers are on disk: never renumber
// them; retire a kind by leaving its number unused.
const (
	kindPut    byte = 1 // table, name, version, JSON
	kindRemove byte = 2 // table, name
)

// encodePut frames a stored object: kind, table key, name, version, JSON.
func encodePut(table string, r *Record) []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(table)+len(r.Name)+binary.MaxVarintLen64+len(r.Data))
	b = append(b, kindPut)
	b = binary.AppendUvarint(b, uint64(len(table)))
	b = append(b, table...)
	b = binary.AppendUvarint(b, uint64(len(r.Name)))
	b = append(b, r.Name...)
	b = binary.AppendVarint(b, r.Version)
	return append(b, r.Data...)
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

// logEntry is a decoded log or snapshot record. data aliases the input.
type logEntry struct {
	kind    byte
	table   string
	name    string
	version int64
	data    []byte
}

var errShort = errors.New("record too short")

func decodeEntry(b []byte) (logEntry, error) {
	var e logEntry
	if len(b) == 0 {
		return e, errShort
	}
	e.kind, b = b[0], b[1:]
	str := func() (string, error) {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return "", errShort
		}
		s := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return s, nil
	}
	var err error
	if e.table, err = str(); err != nil {
		return e, err
	}
	if e.name, err = str(); err != nil {
		return e, err
	}
	switch e.kind {
	case kindPut:
		v, w := binary.Varint(b)
		if w <= 0 {
			return e, errShort
		}
		e.version, e.data = v, b[w:]
	case kindRemove:
		if len(b) != 0 {
			return e, fmt.Errorf("%d trailing bytes after a removal", len(b))
		}
	default:
		return e, fmt.Errorf("unknown record kind %d", e.kind)
	}
	return e, nil
}
