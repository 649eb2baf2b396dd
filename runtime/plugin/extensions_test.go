package plugin_test

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
)

// TestEarlierGenerationFields: with groupVersion, fields sit directly under
// the object; they move under spec only where the model keeps them there.
func TestEarlierGenerationFields(t *testing.T) {
	withSpec := &model.Model{Group: "g.example.com", Version: "v1", Kind: "Thing", Plural: "things",
		Schema: []byte(`{"properties":{"apiVersion":{},"kind":{},"metadata":{},"spec":{},"status":{}}}`)}
	flat := &model.Model{Version: "v1alpha1", Kind: "Role", Plural: "roles",
		Schema: []byte(`{"properties":{"apiVersion":{},"kind":{},"metadata":{},"rules":{}}}`)}
	lookup := func(gvk model.GroupVersionKind) (*model.Model, bool) {
		switch gvk.Kind {
		case "Thing":
			return withSpec, true
		case "Role":
			return flat, true
		}
		return nil, false
	}
	files := fstest.MapFS{"a.yaml": {Data: []byte(
		"groupVersion: g.example.com/v1\nkind: Thing\nmetadata: {name: t}\ncolor: red\nsize: 3\n---\n" +
			"groupVersion: v1alpha1\nkind: Role\nmetadata: {name: r}\nrules: []\n")}}
	docs, err := plugin.LoadExtensions(files, plugin.LoadOptions{Plugin: "p", Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	var thing, role map[string]any
	json.Unmarshal(docs[0].JSON, &thing)
	json.Unmarshal(docs[1].JSON, &role)
	if spec, _ := thing["spec"].(map[string]any); spec["color"] != "red" || spec["size"] != float64(3) || thing["color"] != nil {
		t.Errorf("Thing = %s, want color and size under spec", docs[0].JSON)
	}
	if thing["apiVersion"] != "g.example.com/v1" || thing["groupVersion"] != nil {
		t.Errorf("Thing = %s, want apiVersion from groupVersion", docs[0].JSON)
	}
	if _, ok := role["rules"]; !ok || role["spec"] != nil {
		t.Errorf("Role = %s, want rules kept at the top", docs[1].JSON)
	}
}
