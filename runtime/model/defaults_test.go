package model_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/svcrun/svc/runtime/model"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDefaultsApply(t *testing.T) {
	d := &model.Defaults{Props: map[string]*model.Defaults{
		"spec": {Props: map[string]*model.Defaults{
			"visible":  {Value: json.RawMessage(`"PUBLIC"`)},
			"priority": {Value: json.RawMessage(`5`)},
			"tags":     {Value: json.RawMessage(`["a"]`)},
			"owner": {Value: json.RawMessage(`{}`), Props: map[string]*model.Defaults{
				"kind": {Value: json.RawMessage(`"user"`)},
			}},
			"links":  {Items: &model.Defaults{Props: map[string]*model.Defaults{"rel": {Value: json.RawMessage(`"next"`)}}}},
			"byName": {Values: &model.Defaults{Props: map[string]*model.Defaults{"weight": {Value: json.RawMessage(`1.5`)}}}},
		}},
	}}
	cases := []struct {
		name, in, want string
		changed        bool
	}{
		{"all absent", `{"spec":{}}`, `{"spec":{"owner":{"kind":"user"},"priority":5,"tags":["a"],"visible":"PUBLIC"}}`, true},
		{"present kept", `{"spec":{"visible":"PRIVATE","priority":0,"tags":[],"owner":{"kind":"team"}}}`, `{"spec":{"owner":{"kind":"team"},"priority":0,"tags":[],"visible":"PRIVATE"}}`, false},
		{"null kept", `{"spec":{"visible":null,"priority":null,"tags":null,"owner":null}}`, `{"spec":{"owner":null,"priority":null,"tags":null,"visible":null}}`, false},
		{"partial object", `{"spec":{"owner":{"name":"ann"},"visible":"PUBLIC","priority":1,"tags":["b"]}}`, `{"spec":{"owner":{"kind":"user","name":"ann"},"priority":1,"tags":["b"],"visible":"PUBLIC"}}`, true},
		{"items and values", `{"spec":{"visible":"PUBLIC","priority":1,"tags":["b"],"owner":{"kind":"x"},"links":[{},{"rel":"prev"}],"byName":{"a":{},"b":{"weight":2}}}}`,
			`{"spec":{"byName":{"a":{"weight":1.5},"b":{"weight":2}},"links":[{"rel":"next"},{"rel":"prev"}],"owner":{"kind":"x"},"priority":1,"tags":["b"],"visible":"PUBLIC"}}`, true},
		{"no spec", `{"metadata":{}}`, `{"metadata":{}}`, false},
		{"wrong type left for validation", `{"spec":"nope"}`, `{"spec":"nope"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := decode(t, tc.in)
			changed, err := d.Apply(doc)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(doc)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
		})
	}

	// Each object gets its own copy of a default.
	a, b := decode(t, `{"spec":{}}`), decode(t, `{"spec":{}}`)
	d.Apply(a)
	d.Apply(b)
	a.(map[string]any)["spec"].(map[string]any)["tags"].([]any)[0] = "changed"
	if got := b.(map[string]any)["spec"].(map[string]any)["tags"].([]any)[0]; got != "a" {
		t.Errorf("defaults are shared between objects: %v", got)
	}

	var none *model.Defaults
	if changed, err := none.Apply(decode(t, `{}`)); changed || err != nil {
		t.Errorf("nil defaults: %v, %v", changed, err)
	}
	bad := &model.Defaults{Props: map[string]*model.Defaults{"x": {Value: json.RawMessage(`{`)}}}
	if _, err := bad.Apply(decode(t, `{}`)); err == nil {
		t.Error("a malformed default was applied")
	}
}
