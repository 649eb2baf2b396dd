package object

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// SetStatus replaces obj's status with raw (nil or null: none). A typed
// object without a status field has none to set, and raw is ignored.
func SetStatus(obj Object, raw json.RawMessage) error {
	if u, ok := obj.(*Unstructured); ok {
		if isNull(raw) {
			delete(u.Fields, "status")
			return nil
		}
		if u.Fields == nil {
			u.Fields = make(map[string]json.RawMessage)
		}
		u.Fields["status"] = bytes.Clone(raw)
		return nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("object: set status of %T: not a pointer to a struct", obj)
	}
	i := statusField(v.Elem().Type())
	if i < 0 {
		return nil
	}
	f := v.Elem().Field(i)
	// Zeroed first: decoding into a set pointer would merge the old
	// status's fields into the new one.
	f.SetZero()
	if isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
		return fmt.Errorf("object: set status of %T: %w", obj, err)
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

var statusFields sync.Map // reflect.Type → int

// statusField returns the index of t's field encoded as "status", or -1.
func statusField(t reflect.Type) int {
	if i, ok := statusFields.Load(t); ok {
		return i.(int)
	}
	i := -1
	for j := range t.NumField() {
		f := t.Field(j)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "status" || name == "" && f.Name == "Status" {
			i = j
			break
		}
	}
	statusFields.Store(t, i)
	return i
}
