package object

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Unstructured is an object whose model has no Go type: the envelope is
// decoded, every other top-level field is kept as raw JSON. It serves models
// registered without generated code and extension files of any kind.
type Unstructured struct {
	Envelope
	// Fields holds the top-level fields other than apiVersion, kind and
	// metadata (usually spec and status).
	Fields map[string]json.RawMessage
}

// UnmarshalJSON decodes the envelope and keeps the other fields raw.
func (u *Unstructured) UnmarshalJSON(data []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	u.Envelope = Envelope{}
	u.Fields = nil
	for k, v := range all {
		var err error
		switch k {
		case "apiVersion":
			err = json.Unmarshal(v, &u.APIVersion)
		case "kind":
			err = json.Unmarshal(v, &u.Kind)
		case "metadata":
			err = json.Unmarshal(v, &u.Metadata)
		default:
			if u.Fields == nil {
				u.Fields = make(map[string]json.RawMessage)
			}
			u.Fields[k] = v
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// MarshalJSON writes the envelope first, then the other fields in key
// order, so the output is deterministic.
func (u Unstructured) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	env, err := json.Marshal(u.Envelope)
	if err != nil {
		return nil, err
	}
	b.Write(env[:len(env)-1])
	for _, k := range slices.Sorted(maps.Keys(u.Fields)) {
		v := u.Fields[k]
		if len(v) == 0 || bytes.Equal(v, []byte("null")) {
			continue
		}
		kb, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, v); err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
