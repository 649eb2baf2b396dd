package object_test

import (
	"encoding/json"
	"testing"

	"github.com/svcrun/svc/runtime/object"
)

type thing struct {
	object.Envelope
	Spec   map[string]int `json:"spec"`
	Status *thingStatus   `json:"status,omitempty"`
}

type thingStatus struct {
	A int `json:"a,omitempty"`
	B int `json:"b,omitempty"`
}

type noStatus struct {
	object.Envelope
	Rules []string `json:"rules"`
}

// TestSetStatusReplaces: the new status replaces the old one whole; none
// of the old one's fields survive in it.
func TestSetStatusReplaces(t *testing.T) {
	x := &thing{Spec: map[string]int{"n": 1}, Status: &thingStatus{A: 1, B: 2}}
	if err := object.SetStatus(x, json.RawMessage(`{"a":5}`)); err != nil {
		t.Fatal(err)
	}
	if *x.Status != (thingStatus{A: 5}) || x.Spec["n"] != 1 {
		t.Errorf("after SetStatus: %+v %+v, want status {A:5} and the spec kept", x.Spec, *x.Status)
	}
	if err := object.SetStatus(x, nil); err != nil || x.Status != nil {
		t.Errorf("SetStatus(nil): status %+v, %v; want none", x.Status, err)
	}
	if err := object.SetStatus(x, json.RawMessage(`{"a":"no"}`)); err == nil {
		t.Error("SetStatus of a mistyped status: no error")
	}
	r := &noStatus{Rules: []string{"r"}}
	if err := object.SetStatus(r, json.RawMessage(`{"a":1}`)); err != nil || len(r.Rules) != 1 {
		t.Errorf("SetStatus on a model without status: %v %+v", err, r)
	}
}

func TestSetStatusUnstructured(t *testing.T) {
	var u object.Unstructured
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"u"},"spec":{"x":1}}`), &u); err != nil {
		t.Fatal(err)
	}
	if err := object.SetStatus(&u, json.RawMessage(`{"y":2}`)); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(u)
	if got, want := string(b), `{"apiVersion":"","kind":"","metadata":{"name":"u"},"spec":{"x":1},"status":{"y":2}}`; got != want {
		t.Errorf("after SetStatus: %s, want %s", got, want)
	}
	if err := object.SetStatus(&u, json.RawMessage(`null`)); err != nil {
		t.Fatal(err)
	}
	if _, ok := u.Fields["status"]; ok {
		t.Error("SetStatus(null) left a status")
	}
}
