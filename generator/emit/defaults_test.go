package emit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func schema(t *testing.T, js string) *openapi3.Schema {
	t.Helper()
	var s openapi3.Schema
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestDefaults(t *testing.T) {
	d, err := Defaults(schema(t, `{"type":"object","properties":{
		"spec":{"type":"object","properties":{
			"visible":{"type":"string","enum":["PUBLIC","PRIVATE"],"default":"PUBLIC"},
			"name":{"type":"string"},
			"links":{"type":"array","items":{"type":"object","properties":{"rel":{"type":"string","default":"next"}}}},
			"weights":{"type":"object","additionalProperties":{"type":"number","default":1}}}},
		"status":{"type":"object","properties":{"phase":{"type":"string"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(d)
	want := `{"Value":null,"Props":{"spec":{"Value":null,"Props":{"links":{"Value":null,"Props":null,"Items":{"Value":null,"Props":{"rel":{"Value":"next","Props":null,"Items":null,"Values":null}},"Items":null,"Values":null},"Values":null},"visible":{"Value":"PUBLIC","Props":null,"Items":null,"Values":null},"weights":{"Value":null,"Props":null,"Items":null,"Values":{"Value":1,"Props":null,"Items":null,"Values":null}}},"Items":null,"Values":null}},"Items":null,"Values":null}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	if d, err := Defaults(schema(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"name":{"type":"string"}}}}}`)); d != nil || err != nil {
		t.Errorf("no defaults: %v, %v", d, err)
	}

	_, err = Defaults(schema(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"visible":{"type":"string","enum":["PUBLIC","PRIVATE"],"default":"HIDDEN"}}}}}`))
	if err == nil || !strings.Contains(err.Error(), "default of spec.visible") {
		t.Errorf("a default outside its enum: err = %v", err)
	}
	// A partial object default is checked with the defaults below it.
	if _, err := Defaults(schema(t, `{"type":"object","properties":{"owner":{"type":"object","default":{},"required":["kind"],"properties":{"kind":{"type":"string","default":"user"}}}}}`)); err != nil {
		t.Errorf("a partial object default: %v", err)
	}
	_, err = Defaults(schema(t, `{"type":"object","properties":{"owner":{"type":"object","default":{},"required":["kind","name"],"properties":{"kind":{"type":"string","default":"user"},"name":{"type":"string"}}}}}`))
	if err == nil || !strings.Contains(err.Error(), "default of owner") {
		t.Errorf("a partial default missing a required property without a default: err = %v", err)
	}
	_, err = Defaults(schema(t, `{"type":"object","properties":{"age":{"type":"integer","maximum":150,"default":200}}}`))
	if err == nil || !strings.Contains(err.Error(), "default of age") {
		t.Errorf("a default over its maximum: err = %v", err)
	}
}
