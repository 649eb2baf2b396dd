package rbac

import "strings"

// Verbs of resource requests. Non-resource requests use the lower-case
// HTTP method instead, except POST <plural>/<name> (VerbCreate).
const (
	VerbGet              = "get"
	VerbList             = "list"
	VerbWatch            = "watch"
	VerbCreate           = "create"
	VerbUpdate           = "update"
	VerbPatch            = "patch"
	VerbDelete           = "delete"
	VerbDeleteCollection = "deletecollection"
	// VerbProxy comes only from a /proxy/ path segment; svc serves no
	// such paths, but the parser keeps Kubernetes' reading of them.
	VerbProxy = "proxy"
	// All matches every verb, group, resource, name or URL where it is
	// allowed.
	All = "*"
)

// ResourceVerbs returns the verbs a role template may name, "*" included,
// in the order docs/api.md lists them.
func ResourceVerbs() []string {
	return []string{VerbCreate, VerbDelete, VerbDeleteCollection, VerbGet, VerbList, VerbPatch, VerbUpdate, VerbWatch, All}
}

// PolicyRule is one rule of a Role: either a resource rule (APIGroups,
// Resources, optional ResourceNames) or a non-resource rule
// (NonResourceURLs), each with the Verbs it allows. It is the wire type of
// Role.rules.
type PolicyRule struct {
	APIGroups []string `json:"apiGroups,omitempty" yaml:"apiGroups,omitempty"`
	// Resources are "<plural>", "<plural>/<subresource>", "*/<subresource>"
	// or "*".
	Resources []string `json:"resources,omitempty" yaml:"resources,omitempty"`
	// ResourceNames are "/"-separated patterns matched segment by segment
	// against RequestInfo.ResourceName; each segment is "*", "prefix*",
	// "*suffix" or literal. Empty means any name.
	ResourceNames []string `json:"resourceNames,omitempty" yaml:"resourceNames,omitempty"`
	// NonResourceURLs are exact paths, or prefixes ending in "*".
	NonResourceURLs []string `json:"nonResourceURLs,omitempty" yaml:"nonResourceURLs,omitempty"`
	Verbs           []string `json:"verbs,omitempty" yaml:"verbs,omitempty"`
}

// RulesAllow reports whether any of rules allows info. There are no deny
// rules, so the first allowing rule decides.
func RulesAllow(rules []PolicyRule, info *RequestInfo) bool {
	for i := range rules {
		if RuleAllows(&rules[i], info) {
			return true
		}
	}
	return false
}

// RuleAllows reports whether r allows info. The API version is not part of
// a rule; a rule without verbs allows nothing. It does not allocate.
func RuleAllows(r *PolicyRule, info *RequestInfo) bool {
	if r == nil || info == nil || !contains(r.Verbs, info.Verb) {
		return false
	}
	if !info.IsResourceRequest {
		return urlMatches(r.NonResourceURLs, info.Path)
	}
	return contains(r.APIGroups, info.APIGroup) &&
		resourceMatches(r.Resources, info.Resource, info.Subresource) &&
		namesMatch(r.ResourceNames, info.Name, info.SubName)
}

// contains reports whether list holds "*" or want.
func contains(list []string, want string) bool {
	for _, v := range list {
		if v == All || v == want {
			return true
		}
	}
	return false
}

// resourceMatches compares each rule resource with "res" or "res/sub"
// without building that string, and lets "*/sub" match sub of any resource.
func resourceMatches(ruleResources []string, res, sub string) bool {
	for _, rr := range ruleResources {
		switch {
		case rr == All:
			return true
		case sub == "":
			if rr == res {
				return true
			}
		case len(rr) == len(res)+1+len(sub) && rr[len(res)] == '/' &&
			rr[:len(res)] == res && rr[len(res)+1:] == sub:
			return true
		case len(rr) == len(sub)+2 && rr[:2] == "*/" && rr[2:] == sub:
			return true
		}
	}
	return false
}

// namesMatch tries every pattern against the request name "name/subName".
// Empty segments are dropped on both sides (Halo), so an empty pattern has
// no segments and matches any name; a request segment the name lacks is
// matched as "" and request segments beyond the pattern's are ignored.
func namesMatch(patterns []string, name, subName string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if nameMatches(p, name, subName) {
			return true
		}
	}
	return false
}

func nameMatches(pattern, name, subName string) bool {
	pi, ni := 0, 0
	req := segments{a: name, b: subName}
	for {
		var ps string
		ps, pi = nextSegment(pattern, pi)
		if pi < 0 {
			return true
		}
		var rs string
		rs, ni = req.next(ni)
		if !segmentMatches(ps, rs) {
			return false
		}
	}
}

// nextSegment returns the next non-empty "/"-separated segment of s at or
// after i and the index after it, or i < 0 when there is none.
func nextSegment(s string, i int) (string, int) {
	for i < len(s) && s[i] == '/' {
		i++
	}
	if i >= len(s) {
		return "", -1
	}
	j := strings.IndexByte(s[i:], '/')
	if j < 0 {
		return s[i:], len(s)
	}
	return s[i : i+j], i + j
}

// segments walks the non-empty segments of a, then of b, as if they were
// joined with "/", without joining them.
type segments struct{ a, b string }

// next returns the segment at position i (an index into a, or len(a)+1+
// an index into b) and the position after it; past the end it returns
// "" and stays there.
func (s segments) next(i int) (string, int) {
	if i <= len(s.a) {
		if seg, j := nextSegment(s.a, i); j >= 0 {
			return seg, j
		}
		i = len(s.a) + 1
	}
	seg, j := nextSegment(s.b, i-len(s.a)-1)
	if j < 0 {
		return "", len(s.a) + 1 + len(s.b)
	}
	return seg, len(s.a) + 1 + j
}

// segmentMatches applies one pattern segment: "*" matches anything,
// "*suffix" and "prefix*" match by suffix and prefix, anything else must
// be equal. The leading "*" is tested first, as Halo does.
func segmentMatches(pattern, seg string) bool {
	switch {
	case pattern == All:
		return true
	case strings.HasPrefix(pattern, "*"):
		return strings.HasSuffix(seg, pattern[1:])
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(seg, pattern[:len(pattern)-1])
	}
	return pattern == seg
}

// urlMatches: "*", the exact path, or a pattern ending in "*" whose prefix
// (all trailing stars removed) starts the path. So "/healthz/*" does not
// match "/healthz".
func urlMatches(patterns []string, path string) bool {
	for _, p := range patterns {
		if p == All || p == path {
			return true
		}
		if strings.HasSuffix(p, "*") && strings.HasPrefix(path, strings.TrimRight(p, "*")) {
			return true
		}
	}
	return false
}
