package roles

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/rbac"
)

var exampleOptions = Options{
	Plugin: "example",
	Brand:  "svc.run",
	Served: []Served{
		{Group: "people.example.com", Resource: "persons"},
		{Group: "people.example.com", Resource: "persons/status"},
		{Group: "api.people.example.com", Resource: "persons/greeting"},
		{Group: "plugin.api.svc.run", Resource: "plugins/stats"},
	},
	KnownRoles: []string{"anonymous", "authenticated", "super-role"},
}

// valid returns a template that passes Check with exampleOptions.
func valid() Template {
	return Template{
		File:       "roles.yaml",
		Line:       3,
		APIVersion: "v1alpha1",
		Name:       "example-role-view-persons",
		Labels:     map[string]string{"svc.run/role-template": "true", "svc.run/hidden": "false", "example.com/team": "people"},
		Annotations: map[string]string{
			"rbac.authorization.svc.run/module":         "Persons",
			"rbac.authorization.svc.run/display-name":   "View persons",
			"rbac.authorization.svc.run/ui-permissions": `["plugin:example:person:view"]`,
			"rbac.authorization.svc.run/dependencies":   `["anonymous"]`,
		},
		Rules: []rbac.PolicyRule{
			{APIGroups: []string{"people.example.com"}, Resources: []string{"persons", "persons/status"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"*"}, Resources: []string{"*/greeting"}, Verbs: []string{"get"}},
			{NonResourceURLs: []string{"/apis/api.people.example.com/v1alpha1/persons/-/*", "/apis/api.people.example.com/v1alpha1/persons/import"}, Verbs: []string{"create"}},
		},
		RuleLines:        []int{10, 13, 16},
		UIPermissions:    []string{"plugin:example:person:view"},
		UIPermissionsKey: "rbac.authorization.svc.run/ui-permissions",
		Dependencies:     []string{"anonymous"},
		DependenciesKey:  "rbac.authorization.svc.run/dependencies",
	}
}

// A plugin named like its plural writes <plural>/<subresource>, which
// looks like the documented <plugin>/<plural>: only a served plural after the
// plugin's name earns the hint.
func TestPluginNamedLikeItsPluralGetsNoPluginPluralHint(t *testing.T) {
	opts := exampleOptions
	opts.Plugin = "persons"
	tpl := valid()
	tpl.Name = "persons-role-view-persons"
	tpl.Rules[0].Resources = []string{"persons/sort"}
	tpl.UIPermissions = []string{"plugin:persons:person:view"}
	issues := Check([]Template{tpl}, opts)
	if len(issues) != 1 || !strings.Contains(issues[0].Message, `resource "persons/sort"`) || strings.Contains(issues[0].Message, "<plugin>/<plural>") {
		t.Fatalf("issues = %v, want one about persons/sort without the <plugin>/<plural> hint", issues)
	}
}

func TestCheckValid(t *testing.T) {
	if issues := Check([]Template{valid()}, exampleOptions); len(issues) != 0 {
		t.Errorf("valid template has issues: %v", issues)
	}
}

func TestCheckRefusals(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(*Template)
		line   int
		substr string
	}{
		{"missing role-template label", func(t *Template) { delete(t.Labels, "svc.run/role-template") }, 3,
			`template "example-role-view-persons": missing label svc.run/role-template: "true"`},
		{"role-template label under another brand", func(t *Template) {
			delete(t.Labels, "svc.run/role-template")
			t.Labels["halo.run/role-template"] = "true"
		}, 3, "found halo.run/role-template"},
		{"role-template label not true", func(t *Template) { t.Labels["svc.run/role-template"] = "yes" }, 3, `is "yes"`},
		{"name without plugin prefix", func(t *Template) { t.Name = "role-template-view-persons" }, 3, `name must start with "example-"`},
		{"name of another plugin", func(t *Template) { t.Name = "examples-role-view" }, 3, `name must start with "example-"`},
		{"invalid name", func(t *Template) { t.Name = "example-Role" }, 3, "not a valid name"},
		{"missing name", func(t *Template) { t.Name = "" }, 3, "template without a name: metadata.name is missing"},
		{"wrong apiVersion", func(t *Template) { t.APIVersion = "rbac.authorization.k8s.io/v1" }, 3, "apiVersion v1alpha1"},
		{"unknown verb", func(t *Template) { t.Rules[0].Verbs = []string{"get", "read"} }, 10, `rule 1: unknown verb "read"`},
		{"HTTP method as verb", func(t *Template) { t.Rules[0].Verbs = []string{"post"} }, 10, `rule 1: unknown verb "post"`},
		{"unserved resource", func(t *Template) { t.Rules[0].Resources = []string{"people"} }, 10, `resource "people" in group "people.example.com" is not served by plugin "example"`},
		{"unserved subresource", func(t *Template) { t.Rules[0].Resources = []string{"persons/scale"} }, 10, `resource "persons/scale"`},
		{"unserved group", func(t *Template) {
			t.Rules[0].APIGroups, t.Rules[0].Resources = []string{"other.example.com"}, []string{"persons"}
		}, 10, `in group "other.example.com"`},
		{"core resource", func(t *Template) { t.Rules[0].APIGroups, t.Rules[0].Resources = []string{""}, []string{"persons"} }, 10, `in group ""`},
		{"the documented plugin/plural form", func(t *Template) { t.Rules[0].Resources = []string{"example/persons"} }, 10, "not <plugin>/<plural>"},
		{"resource rule without groups", func(t *Template) { t.Rules[0].APIGroups = nil }, 10, "needs apiGroups and resources"},
		{"mixed rule", func(t *Template) { t.Rules[2].Resources = []string{"persons"} }, 16, "mixes nonResourceURLs"},
		{"URL under a resource path", func(t *Template) {
			t.Rules[2].NonResourceURLs = []string{"/apis/api.plugin.svc.run/v1alpha1/plugins/example/friendPost/*"}
		}, 16, "can never match: every path under it is a resource request"},
		{"URL of a collection", func(t *Template) {
			t.Rules[2].NonResourceURLs = []string{"/apis/people.example.com/v1alpha1/persons"}
		}, 16, "can never match: it is a resource path"},
		{"URL reached only by create", func(t *Template) { t.Rules[2].Verbs = []string{"get"} }, 16, "only matches POST"},
		{"URL without slash", func(t *Template) { t.Rules[2].NonResourceURLs = []string{"healthz"} }, 16, "does not start with /"},
		{"unknown dependency", func(t *Template) { t.Dependencies = []string{"example-role-missing"} }, 3,
			`dependency "example-role-missing" is neither a template of plugin "example" nor a known role`},
		{"empty dependency", func(t *Template) { t.Dependencies = []string{""} }, 3, "empty role"},
		{"dependencies under another brand", func(t *Template) { t.DependenciesKey = "rbac.authorization.halo.run/dependencies" }, 3,
			"is not read under brand svc.run; use rbac.authorization.svc.run/dependencies"},
		{"malformed JSON", func(t *Template) {
			t.AnnotationErrors = []string{"annotation rbac.authorization.svc.run/ui-permissions is not a JSON array of strings: unexpected end of JSON input"}
		}, 3, "not a JSON array of strings"},
		{"ui permission of another plugin", func(t *Template) { t.UIPermissions = []string{"plugin:links:view"} }, 3, `UI permission "plugin:links:view" is not of the form plugin:example:<scope>`},
		{"ui permission without scope", func(t *Template) { t.UIPermissions = []string{"plugin:example:"} }, 3, "UI permission"},
		{"ui permission with empty segment", func(t *Template) { t.UIPermissions = []string{"plugin:example:person::view"} }, 3, "UI permission"},
		{"system ui permission", func(t *Template) { t.UIPermissions = []string{"system:posts:manage"} }, 3, "UI permission"},
		{"unprefixed label", func(t *Template) { t.Labels["team"] = "people" }, 3, "label team: unprefixed keys are reserved"},
		{"unprefixed annotation", func(t *Template) { t.Annotations["note"] = "x" }, 3, "annotation note: unprefixed keys are reserved"},
		{"unknown brand label", func(t *Template) { t.Labels["svc.run/system-reserved"] = "true" }, 3, "label svc.run/system-reserved: svc.run is reserved"},
		{"unknown brand subdomain label", func(t *Template) { t.Labels["rbac.authorization.svc.run/system-reserved"] = "true" }, 3, "rbac.authorization.svc.run is reserved"},
		{"other brand subdomain", func(t *Template) { t.Labels["content.svc.run/x"] = "1" }, 3, "content.svc.run is reserved"},
		{"plugin-name label", func(t *Template) { t.Labels["plugin.svc.run/plugin-name"] = "example" }, 3, "the service sets this label"},
		{"annotation key as label", func(t *Template) { t.Labels["rbac.authorization.svc.run/module"] = "x" }, 3, "is an annotation, not a label"},
		{"aggregate label as annotation", func(t *Template) { t.Annotations["rbac.authorization.svc.run/aggregate-to-editor"] = "true" }, 3, "is a label; as an annotation it has no effect"},
		{"aggregate to a bad role name", func(t *Template) { t.Labels["rbac.authorization.svc.run/aggregate-to-"] = "true" }, 3, `"" is not a role name`},
		{"unknown brand annotation", func(t *Template) { t.Annotations["rbac.authorization.svc.run/redirect-on-login"] = "/uc" }, 3, "annotation rbac.authorization.svc.run/redirect-on-login"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl := valid()
			tc.edit(&tpl)
			issues := Check([]Template{tpl}, exampleOptions)
			if len(issues) != 1 {
				t.Fatalf("got %d issues, want 1 containing %q:\n%v", len(issues), tc.substr, issues)
			}
			if is := issues[0]; !strings.Contains(is.Message, tc.substr) || is.Line != tc.line || is.File != "roles.yaml" {
				t.Errorf("got %s, want roles.yaml:%d containing %q", is, tc.line, tc.substr)
			}
		})
	}
}

func TestCheckAcrossTemplates(t *testing.T) {
	view := valid()
	manage := valid()
	manage.Name, manage.Line = "example-role-manage-persons", 20
	manage.Dependencies = []string{"example-role-view-persons"} // a template of this plugin
	if issues := Check([]Template{view, manage}, exampleOptions); len(issues) != 0 {
		t.Errorf("dependency on a sibling template refused: %v", issues)
	}
	dup := valid()
	dup.Line = 30
	issues := Check([]Template{view, dup}, exampleOptions)
	if len(issues) != 1 || issues[0].Line != 30 || !strings.Contains(issues[0].Message, "also used by the template at roles.yaml:3") {
		t.Errorf("duplicate name: %v", issues)
	}
	// Brand defaults to svc.run.
	opts := exampleOptions
	opts.Brand = ""
	if issues := Check([]Template{view}, opts); len(issues) != 0 {
		t.Errorf("default brand: %v", issues)
	}
}

func TestCheckExamplePlugin(t *testing.T) {
	ts, err := Load(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	if issues := Check(ts, exampleOptions); len(issues) != 0 {
		t.Errorf("example plugin's templates have issues:\n%v", issues)
	}
}

// TestCheckCorpus checks real Halo templates under brand halo.run: they
// break our naming rules, and a few carry real mistakes.
func TestCheckCorpus(t *testing.T) {
	root := corpusDir(t)
	cases := []struct {
		plugin string
		opts   Options
		want   []string // each must appear in some issue
		not    []string // none may appear
	}{
		{"plugin-links", Options{Plugin: "links", Served: []Served{
			{Group: "core.halo.run", Resource: "links"}, {Group: "core.halo.run", Resource: "linkgroups"}, {Group: "core.halo.run", Resource: "linkapplications"},
		}}, []string{
			`template "role-template-link-view": name must start with "links-"`,
			`rule 1: resources "links", "linkgroups", "linkapplications" in group "console.api.link.halo.run" is not served by plugin "links"`,
		}, []string{
			`resource "links" in group "core.halo.run"`,
			`captcha`, // a POST <plural>/<name> URL is a real non-resource request
		}},
		{"plugin-sticker", Options{Plugin: "stickers"}, []string{
			`annotation rbac.authorization.halo.run/aggregate-to-editor: this key is a label; as an annotation it has no effect`,
		}, nil},
		{"plugin-friends", Options{Plugin: "friends"}, []string{
			`nonResourceURL "/apis/api.plugin.halo.run/v1alpha1/plugins/plugin-friends/friendPost/*" can never match`,
		}, nil},
		{"plugin-moments", Options{Plugin: "moments"}, []string{
			`UI permission "uc:plugin:moments:publish" is not of the form plugin:moments:<scope>`,
		}, []string{
			`role-template-uc-moments-approved": rule`, // a verb-less marker rule is allowed
		}},
		{"plugin-app-store", Options{Plugin: "appstore"}, []string{
			`dependency "role-template-manage-plugins" is neither a template of plugin "appstore" nor a known role`,
			`UI permission "system:appstore:manage"`,
			`resource "secrets" in group ""`,
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.plugin, func(t *testing.T) {
			ts, err := Load(filepath.Join(root, tc.plugin, "extensions"))
			if err != nil {
				t.Fatal(err)
			}
			tc.opts.Brand = "halo.run"
			issues := Check(ts, tc.opts)
			var all strings.Builder
			for _, is := range issues {
				all.WriteString(is.String() + "\n")
				if is.Line < 1 || is.File == "" {
					t.Errorf("issue without a position: %s", is)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("no issue contains %q; issues:\n%s", w, all.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(all.String(), w) {
					t.Errorf("an issue contains %q; issues:\n%s", w, all.String())
				}
			}
		})
	}

	// Under our brand, a Halo template is missing our label.
	ts, err := Load(filepath.Join(root, "plugin-feed", "extensions"))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, is := range Check(ts, Options{Plugin: "feed"}) {
		msgs = append(msgs, is.Message)
	}
	want := `template "template-feed-public-apis": missing label svc.run/role-template: "true" (found halo.run/role-template; this service's brand is different)`
	if !slices.Contains(msgs, want) {
		t.Errorf("plugin-feed under svc.run: no %q in\n%s", want, strings.Join(msgs, "\n"))
	}
}

func TestIssueString(t *testing.T) {
	if got := (Issue{File: "a.yaml", Line: 3, Message: "m"}).String(); got != "a.yaml:3: m" {
		t.Errorf("got %q", got)
	}
	if got := (Issue{File: "a.yaml", Message: "m"}).String(); got != "a.yaml: m" {
		t.Errorf("got %q", got)
	}
}

// TestSoftIssues checks which issues a lenient run may pass over: every
// issue of the real Halo corpus is soft (those plugins run under Halo's
// access control as written), and the issues that make a template
// dangerous or unreadable are not.
func TestSoftIssues(t *testing.T) {
	soft := 0
	for name, ts := range corpusTemplates(t) {
		for _, is := range Check(ts, Options{Plugin: strings.TrimPrefix(name, "plugin-"), Brand: "halo.run"}) {
			if !is.Soft && !is.Warning {
				t.Errorf("%s: hard issue in a real plugin: %s", name, is)
			}
			soft++
		}
	}
	if soft == 0 {
		t.Error("the corpus gave no soft issues; the check no longer applies its conventions")
	}

	hard := valid()
	hard.Labels = map[string]string{"team": "a", "svc.run/role-template": "true", "svc.run/owner": "x"}
	hard.Rules[0].Verbs = []string{"get", "destroy"}
	noLabel := valid()
	noLabel.Name = "example-role-manage-persons"
	delete(noLabel.Labels, "svc.run/role-template")
	issues := Check([]Template{hard, noLabel}, exampleOptions)
	if len(issues) != 4 {
		t.Fatalf("issues = %v, want 4", issues)
	}
	for _, is := range issues {
		if is.Soft {
			t.Errorf("soft: %s", is)
		}
	}
}
