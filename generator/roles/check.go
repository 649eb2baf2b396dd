package roles

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/svcrun/svc/generator/spec"
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
	// Brand is the brand domain of the labels and annotations (docs/operations.md); empty means DefaultBrand.
	Brand string
	// Served lists what the plugin serves: its models' plurals and
	// "<plural>/status", and the resources of its custom routes.
	Served []Served
	// KnownRoles are roles outside the plugin that dependencies may name
	// (the service's built-in roles, other plugins' templates).
	KnownRoles []string
	// ServedUnknown skips the checks against Served: the plugin's schema
	// did not load, and its mistakes are reported instead.
	ServedUnknown bool
}

// Served is one resource the plugin serves in one API group, as rules
// name it: "persons", "persons/status", "persons/greeting",
// "plugins/stats".
type Served struct {
	Group, Resource string
	// File, Line and Pointer say where the plugin declares it (a model's
	// x-svc-model, a path), for messages; they do not take part in
	// matching rules.
	File    string
	Line    int
	Pointer string
}

// Issue is one problem with a template, located in its file.
type Issue struct {
	File string
	Line int
	// Pointer is the JSON pointer of the offending value within its
	// document, such as /rules/0/verbs/2.
	Pointer string
	Message string
	// Notes point at related places (where a group is declared).
	Notes []Issue
	// Warning marks an issue that never fails a run: something that may
	// be right, such as a label aggregating into a role another plugin
	// defines.
	Warning bool
	// Soft marks an issue that access control copes with: a breach of
	// the documented conventions for plugin templates (a name without the
	// plugin's prefix, a rule on a resource the plugin does not serve, a
	// dependency on an unknown role, a UI permission of another form) or
	// a part that grants nothing (a rule that can never match, a label
	// key written as an annotation). Templates written for Halo have them
	// routinely; a lenient run reports them as warnings. Reserved keys,
	// unknown verbs, a missing role-template label and malformed
	// annotations are never soft.
	Soft bool
}

// String is "file:line: /pointer: message", with each note on a line of
// its own.
func (i Issue) String() string {
	var b strings.Builder
	b.WriteString(i.File)
	if i.Line > 0 {
		fmt.Fprintf(&b, ":%d", i.Line)
	}
	b.WriteString(": ")
	if i.Pointer != "" {
		b.WriteString(i.Pointer + ": ")
	}
	b.WriteString(i.Message)
	for _, n := range i.Notes {
		b.WriteString("\n" + n.String())
	}
	return b.String()
}

// Check returns every problem of the plugin's templates, in template order;
// none means the templates may ship. It refuses a template that lacks the
// role-template label, is not named "<plugin>-…", names an unknown verb or
// a concrete resource the plugin does not serve, depends on a role that is
// neither its own template nor a known role, has a UI permission outside
// "plugin:<plugin>:<scope>", carries a malformed dependencies or
// ui-permissions annotation, or carries a label or annotation key that is
// unprefixed or under the brand's prefixes without being one the service
// defines (docs/api.md). Rules that can never match (mixed resource and
// URL rules, nonResourceURLs that only resource requests reach) are
// refused too, since they grant nothing their author meant.
func Check(ts []Template, opts Options) []Issue {
	if opts.Brand == "" {
		opts.Brand = DefaultBrand
	}
	c := checker{opts: opts, names: map[string]*Template{}, served: map[Served]bool{}, groups: map[string]*Served{}, known: map[string]bool{}}
	for i, s := range opts.Served {
		c.served[Served{Group: s.Group, Resource: s.Resource}] = true
		if c.groups[s.Group] == nil || c.groups[s.Group].File == "" {
			c.groups[s.Group] = &opts.Served[i]
		}
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
	served map[Served]bool      // by group and resource only
	groups map[string]*Served   // first declaration of each group
	known  map[string]bool
	issues []Issue
}

func (c *checker) add(t *Template, ptr string, format string, args ...any) {
	name := fmt.Sprintf("template %q", t.Name)
	if t.Name == "" {
		name = "template without a name"
	}
	c.issues = append(c.issues, Issue{File: t.File, Line: t.lineOf(ptr), Pointer: ptr, Message: name + ": " + fmt.Sprintf(format, args...)})
}

// key is the pointer of a label or annotation.
func key(field, k string) string {
	return "/metadata/" + field + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// warn adds an Issue that never fails a run.
func (c *checker) warn(t *Template, ptr string, format string, args ...any) {
	c.add(t, ptr, format, args...)
	c.issues[len(c.issues)-1].Warning = true
}

// soft adds a soft Issue.
func (c *checker) soft(t *Template, ptr string, format string, args ...any) {
	c.add(t, ptr, format, args...)
	c.issues[len(c.issues)-1].Soft = true
}

func (c *checker) template(t *Template) {
	brand, plugin := c.opts.Brand, c.opts.Plugin
	if t.APIVersion != "v1alpha1" {
		c.add(t, "/apiVersion", "apiVersion is %q; a Role has apiVersion v1alpha1", t.APIVersion)
	}
	switch {
	case t.Name == "":
		c.add(t, "/metadata", "metadata.name is missing")
	case !validName(t.Name):
		c.add(t, "/metadata/name", "metadata.name %q is not a valid name (lowercase letters, digits and '-', alphanumeric at both ends, at most 253 characters)", t.Name)
	}
	if t.Name != "" && !strings.HasPrefix(t.Name, plugin+"-") {
		c.soft(t, "/metadata/name", "name must start with %q (docs/plugins.md: <plugin>-role-<view|manage>-<plural>)", plugin+"-")
	}
	if first := c.names[t.Name]; first != t && t.Name != "" {
		c.add(t, "/metadata/name", "name is also used by the template at %s:%d", first.File, first.Line)
	}

	roleTemplate := brand + "/role-template"
	if v, ok := t.Labels[roleTemplate]; !ok {
		c.add(t, "/metadata/labels", "missing label %s: \"true\"%s", roleTemplate, otherBrandHint(t.Labels, "/role-template"))
	} else if v != "true" {
		c.add(t, key("labels", roleTemplate), "label %s is %q; a role template has \"true\"", roleTemplate, v)
	}
	for _, k := range sortedKeys(t.Labels) {
		if msg := c.labelKey(k); msg != "" {
			c.add(t, key("labels", k), "label %s: %s", k, msg)
		}
	}
	for _, k := range sortedKeys(t.Annotations) {
		if msg := c.annotationKey(k); msg == labelAsAnnotation {
			c.soft(t, key("annotations", k), "annotation %s: %s", k, msg)
		} else if msg != "" {
			c.add(t, key("annotations", k), "annotation %s: %s", k, msg)
		}
	}
	for _, msg := range t.AnnotationErrors {
		c.add(t, "/metadata/annotations", "%s", msg)
	}
	c.dependencies(t)
	c.uiPermissions(t)
	c.aggregation(t)
	for i := range t.Rules {
		c.rule(t, i)
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
		return "unprefixed keys are reserved (docs/plugins.md); put the key under a domain the plugin owns"
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
		return "unprefixed keys are reserved (docs/plugins.md); put the key under a domain the plugin owns"
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
		c.add(t, key("annotations", t.DependenciesKey), "annotation %s is not read under brand %s; use %s", t.DependenciesKey, c.opts.Brand, want)
		return
	}
	for _, d := range t.Dependencies {
		if d == "" {
			c.add(t, key("annotations", want), "dependency names an empty role")
			continue
		}
		if _, own := c.names[d]; !own && !c.known[d] {
			c.soft(t, key("annotations", want), "dependency %q is neither a template of plugin %q nor a known role", d, c.opts.Plugin)
		}
	}
}

func (c *checker) uiPermissions(t *Template) {
	want := "rbac.authorization." + c.opts.Brand + "/ui-permissions"
	if t.UIPermissionsKey == "" {
		return
	}
	if t.UIPermissionsKey != want {
		c.add(t, key("annotations", t.UIPermissionsKey), "annotation %s is not read under brand %s; use %s", t.UIPermissionsKey, c.opts.Brand, want)
		return
	}
	prefix := "plugin:" + c.opts.Plugin + ":"
	for _, p := range t.UIPermissions {
		scope, ok := strings.CutPrefix(p, prefix)
		if !ok || scope == "" || slices.Contains(strings.Split(scope, ":"), "") || strings.ContainsAny(scope, " \t\n") {
			c.soft(t, key("annotations", want), "UI permission %q is not of the form %s<scope> (e.g. %sperson:view)", p, prefix, prefix)
		}
	}
}

func (c *checker) rule(t *Template, i int) {
	r := &t.Rules[i]
	n := i + 1
	at := func(field string, j int) string { return fmt.Sprintf("/rules/%d/%s/%d", i, field, j) }
	for j, v := range r.Verbs {
		if !slices.Contains(rbac.ResourceVerbs(), v) {
			hint := ""
			if near := spec.Nearest(v, rbac.ResourceVerbs()); near != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", near)
			}
			c.add(t, at("verbs", j), "rule %d: unknown verb %q%s (allowed: %s)", n, v, hint, strings.Join(rbac.ResourceVerbs(), ", "))
		}
	}
	if len(r.NonResourceURLs) > 0 {
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
			c.soft(t, fmt.Sprintf("/rules/%d", i), "rule %d: mixes nonResourceURLs with apiGroups/resources/resourceNames; write two rules", n)
		}
		for j, u := range r.NonResourceURLs {
			if msg := urlProblem(u, r.Verbs); msg != "" {
				c.soft(t, at("nonResourceURLs", j), "rule %d: nonResourceURL %q %s", n, u, msg)
			}
		}
		return
	}
	if len(r.APIGroups) == 0 || len(r.Resources) == 0 {
		c.soft(t, fmt.Sprintf("/rules/%d", i), "rule %d: a resource rule needs apiGroups and resources (or use nonResourceURLs); as written it grants nothing", n)
	}
	for gi, g := range r.APIGroups {
		if g == rbac.All || c.opts.ServedUnknown {
			continue
		}
		if c.groups[g] == nil && !slices.ContainsFunc(r.Resources, func(res string) bool { return res == rbac.All || strings.HasPrefix(res, "*/") }) {
			c.groupNotServed(t, at("apiGroups", gi), n, g, r.Resources)
			continue
		}
		for ri, res := range r.Resources {
			if res == rbac.All || strings.HasPrefix(res, "*/") || c.served[Served{Group: g, Resource: res}] {
				continue
			}
			hint := ""
			// <plugin>/<plural>: the documented example form. (A plugin named
			// like its plural writes <plural>/<subresource> the same way.)
			if rest, ok := strings.CutPrefix(res, c.opts.Plugin+"/"); ok && c.served[Served{Group: g, Resource: rest}] {
				hint = "; rules name <plural> as in the path, not <plugin>/<plural> (docs/plugins.md)"
			} else if near := spec.Nearest(res, c.resources(g)); near != "" {
				hint = fmt.Sprintf("; did you mean %q?", near)
			}
			c.soft(t, at("resources", ri), "rule %d: resource %q in group %q is not served by plugin %q%s (it serves %s there)", n, res, g, c.opts.Plugin, hint, strings.Join(c.resources(g), ", "))
		}
	}
}

// groupNotServed reports a rule's group that none of the plugin's models
// or routes is in, naming the groups it does serve and where each is
// declared, so both ends of the mismatch are one jump away.
func (c *checker) groupNotServed(t *Template, ptr string, n int, g string, resources []string) {
	names := slices.Sorted(maps.Keys(c.groups))
	hint := ""
	if near := spec.Nearest(g, names); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	served := "none"
	if len(names) > 0 {
		served = strings.Join(names, ", ")
	}
	what := "resource"
	if len(resources) > 1 {
		what += "s"
	}
	quoted := make([]string, len(resources))
	for i, r := range resources {
		quoted[i] = strconv.Quote(r)
	}
	c.soft(t, ptr, "rule %d: %s %s in group %q is not served by plugin %q: it serves nothing in group %q%s; its groups are: %s",
		n, what, strings.Join(quoted, ", "), g, c.opts.Plugin, g, hint, served)
	is := &c.issues[len(c.issues)-1]
	for _, name := range names {
		if s := c.groups[name]; s.File != "" {
			is.Notes = append(is.Notes, Issue{File: s.File, Line: s.Line, Pointer: s.Pointer, Message: fmt.Sprintf("group %q is declared here", name)})
		}
	}
}

// resources are the resources the plugin serves in group g, sorted.
func (c *checker) resources(g string) []string {
	var out []string
	for s := range c.served {
		if s.Group == g {
			out = append(out, s.Resource)
		}
	}
	slices.Sort(out)
	return out
}

// aggregation warns of aggregate-to-<role> labels naming a role that is
// neither known nor a template of the plugin: the template's rules would
// reach nobody through it (a misspelt anonymous made a public template
// useless). Roles may come from other plugins, so this only warns; the
// server warns again at start if the role does not exist then.
func (c *checker) aggregation(t *Template) {
	prefix := "rbac.authorization." + c.opts.Brand + "/aggregate-to-"
	for _, k := range sortedKeys(t.Labels) {
		role, ok := strings.CutPrefix(k, prefix)
		if !ok || !validName(role) || c.known[role] || c.names[role] != nil {
			continue
		}
		hint := ""
		if near := spec.Nearest(role, c.roleNames()); near != "" {
			hint = fmt.Sprintf("; did you mean %q?", near)
		}
		c.warn(t, key("labels", k), "label %s: role %q is neither built in nor a template of plugin %q%s", k, role, c.opts.Plugin, hint)
	}
}

func (c *checker) roleNames() []string {
	out := slices.Collect(maps.Keys(c.known))
	for n := range c.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// urlProblem returns why a nonResourceURL can never match, or "". Under
// /api and /apis only short paths and POST <plural>/<name> are
// non-resource requests (docs/api.md), so a URL deeper than that only
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

// validName is the documented metadata.name rule.
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
