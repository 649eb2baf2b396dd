package rbac

import "strings"

// RulesCover reports whether owner grants everything rules grant, so that
// a holder of owner may hand rules on without privilege escalation. As in
// Kubernetes' rbac validation (Covers, BreakdownRule), every rule is broken
// down into single (verb, group, resource, resource name) and (verb, URL)
// grants, and each must be covered by one owner rule on its own; wildcards
// and patterns are compared as sets (the owner's must contain the
// granted one's), never by sampling requests. So the answer errs towards
// "not covered" only where several owner rules together cover one grant.
func RulesCover(owner, rules []PolicyRule) bool {
	for i := range rules {
		if !ruleCovered(owner, &rules[i]) {
			return false
		}
	}
	return true
}

func ruleCovered(owner []PolicyRule, r *PolicyRule) bool {
	names := r.ResourceNames
	if len(names) == 0 {
		// No names means any name: the pattern with no segments.
		names = []string{""}
	}
	for _, verb := range r.Verbs {
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				for _, name := range names {
					if !grantCovered(owner, func(o *PolicyRule) bool {
						return contains(o.APIGroups, group) && resourceCovers(o.Resources, res) && namesCover(o.ResourceNames, name)
					}, verb) {
						return false
					}
				}
			}
		}
		for _, u := range r.NonResourceURLs {
			if !grantCovered(owner, func(o *PolicyRule) bool { return urlCovers(o.NonResourceURLs, u) }, verb) {
				return false
			}
		}
	}
	return true
}

// grantCovered reports whether one owner rule holds verb and passes match.
// contains does the verb: a "*" owner verb holds any, and a granted "*"
// is held only by an owner "*".
func grantCovered(owner []PolicyRule, match func(*PolicyRule) bool, verb string) bool {
	for i := range owner {
		if contains(owner[i].Verbs, verb) && match(&owner[i]) {
			return true
		}
	}
	return false
}

// resourceCovers: "*", the same string, or "*/<sub>" for "<res>/<sub>".
func resourceCovers(owner []string, res string) bool {
	for _, o := range owner {
		if o == All || o == res {
			return true
		}
		if _, sub, ok := strings.Cut(res, "/"); ok && len(o) == len(sub)+2 && o[:2] == "*/" && o[2:] == sub {
			return true
		}
	}
	return false
}

// namesCover reports whether some owner pattern matches every name the
// granted pattern matches; an owner without names matches any name.
func namesCover(owner []string, name string) bool {
	if len(owner) == 0 {
		return true
	}
	for _, o := range owner {
		if patternCovers(o, name) {
			return true
		}
	}
	return false
}

// patternCovers compares two resource-name patterns segment by segment.
// Where the granted pattern has run out of segments a request segment can
// be anything (or missing), so the owner may only say "*" there.
func patternCovers(owner, granted string) bool {
	oi, gi := 0, 0
	for {
		var os, gs string
		os, oi = nextSegment(owner, oi)
		if oi < 0 {
			return true
		}
		if gi >= 0 {
			gs, gi = nextSegment(granted, gi)
		}
		if gi < 0 {
			if os != All {
				return false
			}
			continue
		}
		if !segmentCovers(os, gs) {
			return false
		}
	}
}

// segment pattern kinds, read in segmentMatches' order.
const (
	segAny = iota
	segSuffix
	segPrefix
	segLiteral
)

func segmentKind(p string) (int, string) {
	switch {
	case p == All:
		return segAny, ""
	case strings.HasPrefix(p, "*"):
		return segSuffix, p[1:]
	case strings.HasSuffix(p, "*"):
		return segPrefix, p[:len(p)-1]
	}
	return segLiteral, p
}

// segmentCovers reports whether every segment matched by granted is
// matched by owner.
func segmentCovers(owner, granted string) bool {
	ok, ov := segmentKind(owner)
	gk, gv := segmentKind(granted)
	switch ok {
	case segAny:
		return true
	case segSuffix:
		return (gk == segSuffix || gk == segLiteral) && strings.HasSuffix(gv, ov)
	case segPrefix:
		return (gk == segPrefix || gk == segLiteral) && strings.HasPrefix(gv, ov)
	}
	return gk == segLiteral && gv == ov
}

// urlCovers: the same string, or an owner prefix pattern whose prefix
// starts the granted URL (Kubernetes' nonResourceURLCovers). Since the
// prefix never ends in "*", a granted prefix pattern "p*" passes only when
// its own prefix p is long enough, and "*" only under an owner "*".
func urlCovers(owner []string, u string) bool {
	for _, o := range owner {
		if o == u || o == All {
			return true
		}
		if strings.HasSuffix(o, "*") && strings.HasPrefix(u, strings.TrimRight(o, "*")) {
			return true
		}
	}
	return false
}
