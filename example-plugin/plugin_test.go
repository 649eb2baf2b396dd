package example_test

import (
	"io/fs"
	"strings"
	"testing"

	example "github.com/svcrun/svc/example-plugin"
)

// TestGeneratedPluginType: the plugin type svcgen -register emits has the
// name, templates and branded document the hand-written one had.
func TestGeneratedPluginType(t *testing.T) {
	p := example.Plugin{}
	if p.Name() != "example" || p.GeneratedFor() != example.PluginName {
		t.Errorf("Name() = %q, GeneratedFor() = %q", p.Name(), p.GeneratedFor())
	}
	if _, err := fs.Stat(p.Extensions(), "roles.yaml"); err != nil {
		t.Errorf("Extensions() lacks roles.yaml: %v", err)
	}
	doc := string(p.OpenAPI("example.org"))
	if !strings.Contains(doc, "/apis/plugin.api.example.org/v1alpha1/plugins/example/stats") || strings.Contains(doc, "plugin.api.svc.run") {
		t.Errorf("OpenAPI(example.org) does not follow the brand")
	}
}
