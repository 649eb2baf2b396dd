package plugin_test

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
)

// FuzzLoadExtensions feeds arbitrary bytes as an extension file: loading
// never panics, and whatever loads is a named, typed object of valid JSON
// carrying the plugin's label.
func FuzzLoadExtensions(f *testing.F) {
	f.Add([]byte(roleFile))
	f.Add([]byte("# only a comment\n"))
	f.Add([]byte("groupVersion: people.example.com/v1alpha1\nkind: Person\nmetadata:\n  name: x\nname: X\n"))
	f.Add([]byte("apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: a\n  labels: {1: 2}\n---\n- a\n"))
	f.Add([]byte("apiVersion: v1alpha1\nkind: Role\nmetadata:\n  name: a\n  deletionTimestamp: 2024-02-18T08:27:41Z\n"))
	f.Add([]byte("{{{"))
	known := map[model.GroupVersionKind]*model.Model{
		{Version: "v1alpha1", Kind: "Role"}:                                {Version: "v1alpha1", Kind: "Role", Plural: "roles"},
		{Group: "people.example.com", Version: "v1alpha1", Kind: "Person"}: {Group: "people.example.com", Version: "v1alpha1", Kind: "Person", Plural: "persons"},
	}
	lookup := func(gvk model.GroupVersionKind) (*model.Model, bool) { m, ok := known[gvk]; return m, ok }
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := plugin.LoadExtensions(fstest.MapFS{"f.yaml": {Data: data}}, plugin.LoadOptions{Plugin: "fz", Lookup: lookup})
		if err != nil {
			return
		}
		for _, d := range docs {
			if d.Name == "" || d.Model == nil {
				t.Fatalf("loaded a document without a name or model: %+v", d)
			}
			var obj struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(d.JSON, &obj); err != nil {
				t.Fatalf("loaded invalid JSON %q: %v", d.JSON, err)
			}
			if obj.Metadata.Labels["plugin.svc.run/plugin-name"] != "fz" {
				t.Fatalf("loaded %s without the plugin label", d.JSON)
			}
		}
	})
}
