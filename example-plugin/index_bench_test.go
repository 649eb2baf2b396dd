package example

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/model"
)

// reflectKeys is what an index function would cost without the generator:
// walk a dotted path through the struct by JSON field names with reflect,
// then encode the value found.
func reflectKeys(obj any, path string, dst []model.Key) []model.Key {
	v := reflect.ValueOf(obj)
	multi := strings.HasSuffix(path, "[]")
	for _, part := range strings.Split(strings.TrimSuffix(path, "[]"), ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return dst
			}
			v = v.Elem()
		}
		v = fieldByJSONName(v, part)
		if !v.IsValid() {
			return dst
		}
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return dst
		}
		v = v.Elem()
	}
	if multi && v.Kind() == reflect.Slice {
		for i := range v.Len() {
			dst = append(dst, keyOf(v.Index(i)))
		}
		return dst
	}
	return append(dst, keyOf(v))
}

func fieldByJSONName(v reflect.Value, name string) reflect.Value {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			if r := fieldByJSONName(v.Field(i), name); r.IsValid() {
				return r
			}
			continue
		}
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

func keyOf(v reflect.Value) model.Key {
	switch v.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return model.IntKey(v.Int())
	case reflect.String:
		return model.StringKey(v.String())
	}
	return model.StringKey(strconv.Quote(v.String()))
}

func benchPerson() *Person {
	p := NewPerson("ann")
	age, email, friend := int64(42), "ann@example.com", "bob"
	p.Spec = PersonSpec{Name: "Ann", Age: &age, Email: &email, Friend: &friend, Tags: []string{"go", "rust", "sql"}}
	return p
}

func TestReflectKeysAgreeWithGenerated(t *testing.T) {
	p := benchPerson()
	m := PersonModel()
	fields := map[string]string{"spec.name": "spec.name", "spec.age": "spec.age", "spec.email": "spec.email", "spec.friend": "spec.friend", "spec.tags": "spec.tags[]"}
	for _, ix := range m.Indexes {
		got := ix.Keys(p, nil)
		want := reflectKeys(p, fields[ix.Name], nil)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: generated %v, reflect %v", ix.Name, got, want)
		}
	}
}

// BenchmarkIndexKeysGenerated computes all five Person index keys with the
// generated functions.
func BenchmarkIndexKeysGenerated(b *testing.B) {
	p, m := benchPerson(), PersonModel()
	buf := make([]model.Key, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		for _, ix := range m.Indexes {
			buf = ix.Keys(p, buf[:0])
		}
	}
}

// BenchmarkIndexKeysReflect computes the same keys by reflection.
func BenchmarkIndexKeysReflect(b *testing.B) {
	p := benchPerson()
	paths := []string{"spec.name", "spec.age", "spec.email", "spec.friend", "spec.tags[]"}
	buf := make([]model.Key, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		for _, path := range paths {
			buf = reflectKeys(p, path, buf[:0])
		}
	}
}
