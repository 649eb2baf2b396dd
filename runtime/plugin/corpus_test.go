package plugin_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
)

// corpusDir holds real Halo plugins' extension files (shared/corpus).
const corpusDir = "../../../shared/corpus/halo-plugins"

func corpusPlugins(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Skipf("no plugin corpus beside the checkout: %v", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestLoadCorpusFiles reads every extension file of the corpus with a
// lookup that knows every kind: every document of every file must come
// out, typed and labelled, whatever the file's shape (multi-document,
// comment-only, .yml, no trailing newline).
func TestLoadCorpusFiles(t *testing.T) {
	anyKind := func(gvk model.GroupVersionKind) (*model.Model, bool) {
		return &model.Model{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}, true
	}
	docs, files, kinds := 0, 0, map[string]int{}
	for _, name := range corpusPlugins(t) {
		dir := filepath.Join(corpusDir, name, "extensions")
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		entries, _ := os.ReadDir(dir)
		files += len(entries)
		got, err := plugin.LoadExtensions(os.DirFS(dir), plugin.LoadOptions{Plugin: name, Brand: "halo.run", Lookup: anyKind})
		if name == "plugin-oauth2" {
			// Its AuthProviders carry auth.halo.run/auth-binding, a key
			// under the brand that the service does not define (CONTRACT §2).
			if err == nil || !strings.Contains(err.Error(), "auth-provider.yaml: document 1, AuthProvider github: metadata.labels[auth.halo.run/auth-binding]") {
				t.Errorf("plugin-oauth2: err = %v, want the reserved auth.halo.run key refused", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, d := range got {
			docs++
			kinds[d.Model.Kind]++
			if !strings.Contains(string(d.JSON), `"plugin.halo.run/plugin-name":"`+name+`"`) {
				t.Errorf("%s: %s lacks the plugin-name label: %s", name, d, d.JSON)
			}
		}
	}
	// The corpus README: 41 files, 71 documents, 26 of them Roles;
	// plugin-oauth2 holds 14 documents, 1 of them a Role.
	if files != 41 || docs != 71-14 || kinds["Role"] != 26-1 {
		t.Errorf("read %d files, %d documents, %d roles; want 41, 57, 25 (kinds: %v)", files, docs, kinds["Role"], kinds)
	}
}

// TestCorpusPluginsUnderHaloBrand starts every corpus plugin's extension
// files in one server under brand halo.run. Only Roles are served here,
// so a plugin with any other kind fails with a message naming its file
// and object (CONTRACT §7), while the others, and the server, keep going.
func TestCorpusPluginsUnderHaloBrand(t *testing.T) {
	var plugins []plugin.Plugin
	for _, name := range corpusPlugins(t) {
		p := &dirPlugin{name: name, dir: filepath.Join(corpusDir, name, "extensions")}
		plugins = append(plugins, p)
	}
	e := start(t, "", "halo.run", plugins...)
	want := map[string]struct {
		phase   string
		mention []string
	}{
		"plugin-links":    {plugin.Failed, []string{"settings.yaml", "Setting plugin-links-settings", "unknown kind"}},
		"plugin-sitemap":  {plugin.Failed, []string{"settings.yml", "Setting"}},
		"plugin-oauth2":   {plugin.Failed, []string{"auth-provider.yaml", "AuthProvider github"}},
		"plugin-sticker":  {plugin.Failed, []string{"attachment-local-policy.yaml", "Group"}},
		"plugin-todolist": {plugin.Started, nil}, // one comment-only file
		"plugin-migrate":  {plugin.Started, nil}, // its one Role is shipped deleted: skipped
		"plugin-umami":    {plugin.Failed, []string{"settings.yaml"}},
	}
	for name, w := range want {
		msg := e.waitPhase(name, w.phase)
		for _, m := range w.mention {
			if !strings.Contains(msg, m) {
				t.Errorf("%s: message %q does not mention %q", name, msg, m)
			}
		}
	}
	if s := e.status("GET", "/api/v1alpha1/roles/role-template-migration", "", false); s != 404 {
		t.Errorf("a Role shipped with a deletionTimestamp was created (%d)", s)
	}
	// A failed plugin leaves none of its objects behind, even the valid ones.
	if s := e.status("GET", "/api/v1alpha1/roles/role-template-link-view", "", false); s != 404 {
		t.Errorf("a failed plugin's role exists (%d)", s)
	}
	if s := e.status("GET", "/healthz", "", true); s != 200 {
		t.Errorf("healthz = %d", s)
	}
}

type dirPlugin struct {
	name, dir string
}

func (p *dirPlugin) Name() string { return p.name }
func (p *dirPlugin) Extensions() fs.FS {
	if _, err := os.Stat(p.dir); err != nil {
		return nil
	}
	return os.DirFS(p.dir)
}
func (p *dirPlugin) Start(_ context.Context, h *plugin.Host) error { return nil }
