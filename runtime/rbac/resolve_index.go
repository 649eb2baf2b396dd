package rbac

import (
	"slices"
	"strings"
)

// ruleIndex answers RulesAllow over a fixed rule set without scanning every
// rule. Resource rules are filed under each API group, then each resource
// they name; non-resource rules under each URL. A rule naming "*" at a
// level also joins every list of that level and the level's fallback list,
// used for keys no rule names. Verbs are a bit mask on each entry rather
// than a level, so that rules granting many verbs are stored once. A lookup
// so yields the few rules that can match verb, group and resource, and
// each is then checked in full with RuleAllows: the index only has to
// never leave out a rule that allows, and it cannot grant what RulesAllow
// would not.
type ruleIndex struct {
	rules []*PolicyRule
	// verbBits gives each verb the rules name its bit; the last bit stands
	// for "*", and verbs past the others share the bit before it (a shared
	// bit only adds candidates, which RuleAllows then sorts out).
	verbBits map[string]uint64
	groups   map[string]*resourceNode
	anyGroup *resourceNode // rules naming group "*"
	urls     *urlNode
}

const (
	wildVerbBit  = uint64(1) << 63
	maxVerbIndex = 62
)

// entry is a candidate rule and the verbs it names.
type entry struct {
	rule  *PolicyRule
	verbs uint64
}

// resKey is a rule resource split at its first "/": "posts" is {posts, ""},
// "posts/status" is {posts, status} and "*/status" is {*, status}.
type resKey struct{ res, sub string }

// resourceNode holds the candidates of one API group. The list of {r, s}
// holds the rules naming "r/s" (or "r" when s is empty), plus those naming
// "*/s" when s is set, plus those naming "*"; the list of {*, s} holds
// those naming "*/s" or "*"; any holds those naming "*".
type resourceNode struct {
	keys  []resKey
	lists []candidates // lists[i] belongs to keys[i]
	byKey map[resKey]int
	any   candidates
}

// smallNode is the number of keys up to which a node is scanned rather
// than hashed.
const smallNode = 8

func (n *resourceNode) find(k resKey) (*candidates, bool) {
	if n.byKey != nil {
		i, ok := n.byKey[k]
		if !ok {
			return nil, false
		}
		return &n.lists[i], true
	}
	for i := range n.keys {
		if n.keys[i] == k {
			return &n.lists[i], true
		}
	}
	return nil, false
}

// candidates are the rules of one group and resource. Where many of them
// pin the name's first segment to a literal (plugins/<plugin>/… templates,
// one per plugin), those are filed under that segment, since they can
// match no other request.
type candidates struct {
	entries []entry
	byName  map[string][]entry
}

// nameIndexMin is the list length from which candidates are filed by name.
const nameIndexMin = 8

// urlNode holds the non-resource candidates.
type urlNode struct {
	exact    map[string][]entry
	prefixes []prefixEntry
	any      []entry
}

type prefixEntry struct {
	prefix string
	entry
}

// newRuleIndex indexes rules, which must not change afterwards.
func newRuleIndex(rules []*PolicyRule) *ruleIndex {
	ix := &ruleIndex{rules: rules, verbBits: map[string]uint64{}, groups: map[string]*resourceNode{}, urls: &urlNode{}}
	var res, urls []entry
	for _, r := range rules {
		e := entry{rule: r, verbs: ix.verbMask(r.Verbs)}
		if e.verbs == 0 {
			continue // no verbs grants nothing
		}
		if len(r.APIGroups) > 0 && len(r.Resources) > 0 {
			res = append(res, e)
		}
		if len(r.NonResourceURLs) > 0 {
			urls = append(urls, e)
		}
	}
	ix.indexGroups(res)
	ix.indexURLs(urls)
	return ix
}

// verbMask gives verbs their bits, numbering new ones.
func (ix *ruleIndex) verbMask(verbs []string) uint64 {
	var m uint64
	for _, v := range verbs {
		if v == All {
			m |= wildVerbBit
			continue
		}
		b, ok := ix.verbBits[v]
		if !ok {
			b = uint64(1) << min(len(ix.verbBits), maxVerbIndex)
			ix.verbBits[v] = b
		}
		m |= b
	}
	return m
}

func (ix *ruleIndex) indexGroups(es []entry) {
	lists := map[string][]entry{}
	for _, e := range es {
		for _, g := range e.rule.APIGroups {
			if g != All {
				lists[g] = nil
			}
		}
	}
	var anyList []entry
	for _, e := range es {
		if slices.Contains(e.rule.APIGroups, All) {
			anyList = append(anyList, e)
			for g, l := range lists {
				lists[g] = append(l, e)
			}
			continue
		}
		for _, g := range e.rule.APIGroups {
			lists[g] = appendOnce(lists[g], e)
		}
	}
	ix.anyGroup = newResourceNode(anyList)
	for g, l := range lists {
		ix.groups[g] = newResourceNode(l)
	}
}

// appendOnce appends e unless the list already ends with its rule; entries
// arrive in rule order, so that is the only place a duplicate can be.
func appendOnce(l []entry, e entry) []entry {
	if len(l) > 0 && l[len(l)-1].rule == e.rule {
		return l
	}
	return append(l, e)
}

func newResourceNode(es []entry) *resourceNode {
	lists := map[resKey][]entry{}
	// Create every key first so that wildcard rules reach all of them, and
	// note the keys of each subresource for rules naming "*/<sub>".
	bySub := map[string][]resKey{}
	var order []resKey
	for _, e := range es {
		for _, rr := range e.rule.Resources {
			if k, ok := splitResource(rr); ok {
				if _, seen := lists[k]; !seen {
					lists[k] = nil
					bySub[k.sub] = append(bySub[k.sub], k)
					order = append(order, k)
				}
			}
		}
	}
	var anyList []entry
	for _, e := range es {
		if slices.Contains(e.rule.Resources, All) {
			anyList = append(anyList, e)
			for k, l := range lists {
				lists[k] = append(l, e)
			}
			continue
		}
		for _, rr := range e.rule.Resources {
			k, ok := splitResource(rr)
			if !ok {
				continue
			}
			if k.res != All || k.sub == "" {
				lists[k] = appendOnce(lists[k], e)
				continue
			}
			for _, other := range bySub[k.sub] {
				lists[other] = appendOnce(lists[other], e)
			}
		}
	}
	n := &resourceNode{keys: order, lists: make([]candidates, len(order)), any: newCandidates(anyList)}
	for i, k := range order {
		n.lists[i] = newCandidates(lists[k])
	}
	if len(order) > smallNode {
		n.byKey = make(map[resKey]int, len(order))
		for i, k := range order {
			n.byKey[k] = i
		}
	}
	return n
}

// splitResource returns the key of a rule resource, or false for "*" and
// for forms that match no request ("x/", "a/b/c": a request's resource and
// subresource hold no "/").
func splitResource(rr string) (resKey, bool) {
	if rr == All {
		return resKey{}, false
	}
	res, sub, found := strings.Cut(rr, "/")
	if found && (sub == "" || strings.IndexByte(sub, '/') >= 0) {
		return resKey{}, false
	}
	return resKey{res, sub}, true
}

func newCandidates(es []entry) candidates {
	var c candidates
	if len(es) < nameIndexMin {
		c.entries = es
		return c
	}
	for _, e := range es {
		firsts, ok := literalFirstSegments(e.rule.ResourceNames)
		if !ok {
			c.entries = append(c.entries, e)
			continue
		}
		if c.byName == nil {
			c.byName = map[string][]entry{}
		}
		for _, f := range firsts {
			c.byName[f] = appendOnce(c.byName[f], e)
		}
	}
	return c
}

// literalFirstSegments returns the first segments of names when each is a
// literal, the only case where a name is bound to match them.
func literalFirstSegments(names []string) ([]string, bool) {
	if len(names) == 0 {
		return nil, false
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		seg, next := nextSegment(n, 0)
		if next < 0 {
			return nil, false
		}
		if k, _ := segmentKind(seg); k != segLiteral {
			return nil, false
		}
		out = append(out, seg)
	}
	return out, true
}

func (ix *ruleIndex) indexURLs(es []entry) {
	u := ix.urls
	u.exact = map[string][]entry{}
	for _, e := range es {
		for _, p := range e.rule.NonResourceURLs {
			switch {
			case p == All:
				u.any = appendOnce(u.any, e)
			case strings.HasSuffix(p, "*"):
				// A prefix pattern also matches the path equal to itself,
				// so it needs no exact entry.
				u.prefixes = append(u.prefixes, prefixEntry{prefix: strings.TrimRight(p, "*"), entry: e})
			default:
				u.exact[p] = appendOnce(u.exact[p], e)
			}
		}
	}
}

// allows reports what RulesAllow over ix's rules reports. It does not
// allocate.
func (ix *ruleIndex) allows(info *RequestInfo) bool {
	if info == nil {
		return false
	}
	verbs := wildVerbBit | ix.verbBits[info.Verb]
	if !info.IsResourceRequest {
		u := ix.urls
		if anyAllows(u.any, verbs, info) || anyAllows(u.exact[info.Path], verbs, info) {
			return true
		}
		for i := range u.prefixes {
			p := &u.prefixes[i]
			if p.verbs&verbs != 0 && strings.HasPrefix(info.Path, p.prefix) && RuleAllows(p.rule, info) {
				return true
			}
		}
		return false
	}
	// Hand-built request info may carry a "/" the parser never puts there;
	// the keys assume none, so such a request takes the plain scan.
	if strings.IndexByte(info.Resource, '/') >= 0 || strings.IndexByte(info.Subresource, '/') >= 0 {
		for _, r := range ix.rules {
			if RuleAllows(r, info) {
				return true
			}
		}
		return false
	}
	n := ix.groups[info.APIGroup]
	if n == nil {
		n = ix.anyGroup
	}
	if c, ok := n.find(resKey{info.Resource, info.Subresource}); ok {
		return c.allows(verbs, info)
	}
	if info.Subresource != "" {
		if c, ok := n.find(resKey{All, info.Subresource}); ok {
			return c.allows(verbs, info)
		}
	}
	return n.any.allows(verbs, info)
}

func (c *candidates) allows(verbs uint64, info *RequestInfo) bool {
	if anyAllows(c.entries, verbs, info) {
		return true
	}
	if c.byName == nil {
		return false
	}
	first, _ := segments{a: info.Name, b: info.SubName}.next(0)
	return anyAllows(c.byName[first], verbs, info)
}

func anyAllows(es []entry, verbs uint64, info *RequestInfo) bool {
	for i := range es {
		if es[i].verbs&verbs != 0 && RuleAllows(es[i].rule, info) {
			return true
		}
	}
	return false
}
