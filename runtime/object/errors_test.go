package object

import (
	"reflect"
	"testing"
)

func TestFieldErrorsMerge(t *testing.T) {
	errs := FieldErrors{{"spec.age", "must be <= 150"}, {"metadata", "must be an object"}, {"spec.tags[1]", "must be a string"}}
	errs.Merge(FieldErrors{
		{"spec.age", "must be between 0 and 150"}, // the same field
		{"metadata.name", "is required"},          // inside a reported field
		{"spec.tags[1].x", "unknown field"},       // inside, through an index
		{"spec.agent", "unknown field"},           // a longer name, not inside
		{"spec.tags", "must hold unique items"},   // around a reported field
		{"kind", "must be \"Person\""},            // elsewhere
		{"kind", "must be \"Person\", not \"\""},  // extras are all kept
	})
	want := FieldErrors{{"spec.age", "must be <= 150"}, {"metadata", "must be an object"}, {"spec.tags[1]", "must be a string"},
		{"spec.agent", "unknown field"}, {"spec.tags", "must hold unique items"}, {"kind", "must be \"Person\""}, {"kind", "must be \"Person\", not \"\""}}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("merged = %v\nwant %v", errs, want)
	}
	root := FieldErrors{{"(root)", "must be an object"}}
	if root.Merge(FieldErrors{{"metadata.name", "is required"}}); len(root) != 1 {
		t.Errorf("merged into (root) = %v, want nothing added", root)
	}
}
