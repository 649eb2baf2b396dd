package codec

import (
	"reflect"
	"testing"
)

type inner struct {
	Deep *int `json:"deep,omitempty"`
}

type withEmbedded struct {
	*inner
	Own *int `json:"own,omitempty"`
}

// A property promoted through an embedded pointer is not planned: the
// pointer may be nil in a decoded object, and setting through it would
// panic.
func TestPlannedFieldsSkipWhatAnEmbeddedPointerPromotes(t *testing.T) {
	got := plannedFields(reflect.TypeOf(withEmbedded{}))
	if _, ok := got["own"]; !ok {
		t.Error("own field missing")
	}
	if _, ok := got["deep"]; ok {
		t.Error("a field promoted through an embedded pointer was planned")
	}
}
