package roles

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/rbac"
)

// DefaultBrand is the brand domain when Options.Brand is empty.
const DefaultBrand = "svc.run"

// Options says what the templates are checked against.
type Options struct {
	// Plugin is the plugin's name; template names start with "<Plugin>-"
	// and UI permissions with "plugin:<Plugin>:".
	Plugin string
	// Brand is the brand domain of the labels and annotations (CONTRACT
	// §1); empty means DefaultBrand.
	Brand string
	// Served lists what the plugin serves: its models' plurals and
	// "<plural>/status", and the resources of its custom routes.
	Served []Served
	// KnownRoles are roles outside the plugin that dependencies may name
	// (the service's built-in roles, other plugins' templates).
	KnownRoles []string
}

// Served is one resource the plugin serves in one API group, as rules
// name it: "persons", "persons/status", "persons/greeting",
// "plugins/stats".
type Served struct {
	Group, Resource string
}

// Issue is one problem with a template, located in its file.
type Issue struct {
	File    string
	Line    int
	Message string
	// Soft marks an issue that access control copes with: a breach of
	// SPEC.md's conventions for plugin templates (a name without the
	// plugin's prefix, a rule on a resource the plugin does not serve, a
	// dependency on an unknown role, a UI permission of another form) or
	// a part that grants nothing (a rule that can never match, a label
	// key written as an annotation). Templates written for Halo have them
	// routinely; a lenient run reports them as warnings. Reserved keys,
	// unknown verbs, a missing role-template label and malformed
	// annotations are never soft.
	Soft bool
}

func (i Issue) String() string {
	if i.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", i.File, i.Line, i.Message)
	}
	return fmt.Sprintf("%s: %s", i.File, i.Message)
}

// Check returns every problem of the plugin's templates, in template order;
// none means the templates may ship. It refuses a template that lacks the
// role-template label, is not named "<plugin>-…", names an unknown verb or
// a concrete resource the plugin does not serve, depends on a role that is
// neither its own template nor a known role, has a UI permission outside
// "plugin:<plugin>:<scope>", carries a malformed dependencies or
// ui-permissions annotation, or carries a label or annotation key that is
// unprefixed or under the brand's prefixes without being one the service
// defines (CONTRACT §2). Rules that can never match (mixed resource and
// URL rules, nonResourceURLs that only resource requests reach) are
// refused too, since they grant nothing their author meant.
func Check(ts []Template, opts Options) []Issue {
	if opts.Brand == "" {
		opts.Brand = DefaultBrand
	}
	c := checker{opts: opts, names: map[string]*Template{}, served: map[Served]bool{}, known: map[string]bool{}}
	for _, s := range opts.Served {
		c.served[s] = true
	}
	for _, r := range opts.KnownRoles {
		c.known[r] = true
	}
	for i := range ts {
		if _, dup := c.names[ts[i].Name]; !dup {
			c.names[ts[i].Name] = &ts[i]
		}
	}
	for i := range ts {
		c.template(&ts[i])
	}
	return c.issues
}

type checker struct {
	opts   Options
	names  map[string]*Template // first template of each name
	served map[Served]bool
	known  map[string]bool
	issues []Issue
}

func (c *checker) add(t *Template, line int, format string, args ...any) {
	name := fmt.Sprintf("template %q", t.Name)
	if t.Name == "" {
		name = "template without a name"
	}
	c.issues = append(c.issues, Issue{File: t.File, Line: line, Message: name + ": " + fmt.Sprintf(format, args...)})
}

// soft adds a soft Issue.
func (c *checker) soft(t *Template, line int, format string, args ...any) {
	c.add(t, line, format, args...)
	c.issues[len(c.issues)-1].Soft = true
}

func (c *checker) template(t *Template) {
	brand, plugin := c.opts.Brand, c.opts.Plugin
	if t.APIVersion != "v1alpha1" {
		c.add(t, t.Line, "apiVersion is %q; a Role has apiVersion v1alpha1", t.APIVersion)
	}
	switch {
	case t.Name == "":
		c.add(t, t.Line, "metadata.name is missing")
	case !validName(t.Name):
		c.add(t, t.Line, "metadata.name %q is not a valid name (lowercase letters, digits and '-', alphanumeric at both ends, at most 253 characters)", t.Name)
	}
	if t.Name != "" && !strings.HasPrefix(t.Name, plugin+"-") {
		c.soft(t, t.Line, "name must start with %q (SPEC.md: <plugin>-role-<view|manage>-<plural>)", plugin+"-")
	}
	if first := c.names[t.Name]; first != t && t.Name != "" {
		c.add(t, t.Line, "name is also used by the template at %s:%d", first.File, first.Line)
	}

	roleTemplate := brand + "/role-template"
	if v, ok := t.Labels[roleTemplate]; !ok {
		c.add(t, t.Line, "missing label %s: \"true\"%s", roleTemplate, otherBrandHint(t.Labels, "/role-template"))
	} else if v != "true" {
		c.add(t, t.Line, "label %s is %q; a role template has \"true\"", roleTemplate, v)
	}
	for _, k := range sortedKeys(t.Labels) {
		if msg := c.labelKey(k); msg != "" {
			c.add(t, t.Line, "label %s: %s", k, msg)
		}
	}
	for _, k := range sortedKeys(t.Annotations) {
		if msg := c.annotationKey(k); msg == labelAsAnnotation {
			c.soft(t, t.Line, "annotation %s: %s", k, msg)
		} else if msg != "" {
			c.add(t, t.Line, "annotation %s: %s", k, msg)
		}
	}
	for _, msg := range t.AnnotationErrors {
		c.add(t, t.Line, "%s", msg)
	}
	c.dependencies(t)
	c.uiPermissions(t)
	for i := range t.Rules {
		line := t.Line
		if i < len(t.RuleLines) {
			line = t.RuleLines[i]
		}
		c.rule(t, i, line)
	}
}

// otherBrandHint points at a label of the same name under another domain,
// the usual mistake when a Halo plugin is ported.
func otherBrandHint(labels map[string]string, suffix string) string {
	for _, k := range sortedKeys(labels) {
		if strings.HasSuffix(k, suffix) {
			return fmt.Sprintf(" (found %s; this service's brand is different)", k)
		}
	}
	return ""
}

// labelKey returns why a label key may not be used on a template, or "".
func (c *checker) labelKey(key string) string {
	b := c.opts.Brand
	prefix, name, ok := strings.Cut(key, "/")
	switch {
	case !ok:
		return "unprefixed keys are reserved (SPEC.md); put the key under a domain the plugin owns"
	case !model.InBrand(prefix, c.opts.Brand):
		return ""
	case key == b+"/role-template", key == b+"/hidden", key == b+"/do-not-overwrite":
		return ""
	case prefix == "rbac.authorization."+b && strings.HasPrefix(name, "aggregate-to-"):
		if role := strings.TrimPrefix(name, "aggregate-to-"); !validName(role) {
			return fmt.Sprintf("%q is not a role name", role)
		}
		return ""
	case key == "plugin."+b+"/plugin-name":
		return "the service sets this label when it loads the plugin"
	case c.annotationDefined(key):
		return "this key is an annotation, not a label"
	}
	return fmt.Sprintf("%s is reserved; the labels defined for templates are %s/role-template, %s/hidden, %s/do-not-overwrite and rbac.authorization.%s/aggregate-to-<role>", prefix, b, b, b, b)
}

const labelAsAnnotation = "this key is a label; as an annotation it has no effect"

// annotationKey returns why an annotation key may not be used on a
// template, or "".
func (c *checker) annotationKey(key string) string {
	b := c.opts.Brand
	prefix, _, ok := strings.Cut(key, "/")
	switch {
	case !ok:
		return "unprefixed keys are reserved (SPEC.md); put the key under a domain the plugin owns"
	case !model.InBrand(prefix, c.opts.Brand), c.annotationDefined(key):
		return ""
	case c.labelKey(key) == "":
		return labelAsAnnotation
	}
	return fmt.Sprintf("%s is reserved; the annotations defined for templates are rbac.authorization.%s/{dependencies,ui-permissions,module,display-name}", prefix, b)
}

func (c *checker) annotationDefined(key string) bool {
	prefix, name, _ := strings.Cut(key, "/")
	if prefix != "rbac.authorization."+c.opts.Brand {
		return false
	}
	switch name {
	case "dependencies", "ui-permissions", "module", "display-name":
		return true
	}
	return false
}

func (c *checker) dependencies(t *Template) {
	want := "rbac.authorization." + c.opts.Brand + "/dependencies"
	if t.DependenciesKey == "" {
		return
	}
	if t.DependenciesKey != want {
		c.add(t, t.Line, "annotation %s is not read under brand %s; use %s", t.DependenciesKey, c.opts.Brand, want)
		return
	}
	for _, d := range t.Dependencies {
		if d == "" {
			c.add(t, t.Line, "dependency names an empty role")
			continue
		}
		if _, own := c.names[d]; !own && !c.known[d] {
			c.soft(t, t.Line, "dependency %q is neither a template of plugin %q nor a known role", d, c.opts.Plugin)
		}
	}
}

func (c *checker) uiPermissions(t *Template) {
	want := "rbac.authorization." + c.opts.Brand + "/ui-permissions"
	if t.UIPermissionsKey == "" {
		return
	}
	if t.UIPermissionsKey != want {
		c.add(t, t.Line, "annotation %s is not read under brand %s; use %s", t.UIPermissionsKey, c.opts.Brand, want)
		return
	}
	prefix := "plugin:" + c.opts.Plugin + ":"
	for _, p := range t.UIPermissions {
		scope, ok := strings.CutPrefix(p, prefix)
		if !ok || scope == "" || slices.Contains(strings.Split(scope, ":"), "") || strings.ContainsAny(scope, " \t\n") {
			c.soft(t, t.Line, "UI permission %q is not of the form %s<scope> (e.g. %sperson:view)", p, prefix, prefix)
		}
	}
}

func (c *checker) rule(t *Template, i, line int) {
	r := &t.Rules[i]
	n := i + 1
	for _, v := range r.Verbs {
		if !slices.Contains(rbac.ResourceVerbs(), v) {
			c.add(t, line, "rule %d: unknown verb %q (allowed: %s)", n, v, strings.Join(rbac.ResourceVerbs(), ", "))
		}
	}
	if len(r.NonResourceURLs) > 0 {
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
			c.soft(t, line, "rule %d: mixes nonResourceURLs with apiGroups/resources/resourceNames; write two rules", n)
		}
		for _, u := range r.NonResourceURLs {
			if msg := urlProblem(u, r.Verbs); msg != "" {
				c.soft(t, line, "rule %d: nonResourceURL %q %s", n, u, msg)
			}
		}
		return
	}
	if len(r.APIGroups) == 0 || len(r.Resources) == 0 {
		c.soft(t, line, "rule %d: a resource rule needs apiGroups and resources (or use nonResourceURLs); as written it grants nothing", n)
	}
	for _, g := range r.APIGroups {
		if g == rbac.All {
			continue
		}
		for _, res := range r.Resources {
			if res == rbac.All || strings.HasPrefix(res, "*/") || c.served[Served{Group: g, Resource: res}] {
				continue
			}
			hint := ""
			// <plugin>/<plural>: SPEC.md's example form. (A plugin named
			// like its plural writes <plural>/<subresource> the same way.)
			if rest, ok := strings.CutPrefix(res, c.opts.Plugin+"/"); ok && c.served[Served{Group: g, Resource: rest}] {
				hint = "; rules name <plural> as in the path, not <plugin>/<plural> (CONTRACT §6)"
			}
			c.soft(t, line, "rule %d: resource %q in group %q is not served by plugin %q%s", n, res, g, c.opts.Plugin, hint)
		}
	}
}

// urlProblem returns why a nonResourceURL can never match, or "". Under
// /api and /apis only short paths and POST <plural>/<name> are
// non-resource requests (CONTRACT §6), so a URL deeper than that only
// ever meets resource requests.
func urlProblem(u string, verbs []string) string {
	if u != rbac.All && !strings.HasPrefix(u, "/") {
		return "does not start with /"
	}
	exact := !strings.HasSuffix(u, "*")
	parts := strings.FieldsFunc(strings.TrimRight(u, "*"), func(r rune) bool { return r == '/' })
	var rest []string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return ""
	}
	special := rest[0] == "watch" || rest[0] == "proxy"
	switch {
	case len(rest) >= 3:
		return "can never match: every path under it is a resource request, so write a resource rule"
	case exact && len(rest) == 1 && !special:
		return "can never match: it is a resource path (a collection), so write a resource rule"
	case exact && len(rest) == 2 && !special && !slices.Contains(verbs, rbac.VerbCreate) && !slices.Contains(verbs, rbac.All):
		return "only matches POST, whose verb is create, and the rule does not grant create"
	}
	return ""
}

// validName is SPEC.md's metadata.name rule.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		alnum := ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9'
		if !alnum && (ch != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
