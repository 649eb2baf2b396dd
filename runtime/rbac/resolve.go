package rbac

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Names of the roles the service relies on (docs/api.md): the two every
// requester holds, and the super administrator's.
const (
	// AnonymousRole is held by every requester, signed in or not.
	AnonymousRole = "anonymous"
	// AuthenticatedRole is held by every signed-in user.
	AuthenticatedRole = "authenticated"
	// SuperRole grants everything. The first administrator holds it, and
	// access control keeps at least one enabled user bound to it
	// (runtime/authz).
	SuperRole = "super-role"
)

// Role is what the resolver needs of a stored Role.
type Role struct {
	Name        string
	Rules       []PolicyRule
	Labels      map[string]string
	Annotations map[string]string
	// Deleting is set while the role carries a deletionTimestamp; such a
	// role grants nothing.
	Deleting bool
}

// Binding is what the resolver needs of a stored RoleBinding: the role it
// names and the subjects of kind User.
type Binding struct {
	Name    string
	RoleRef string
	Users   []string
}

// limitedCacheSize bounds the cache of token role sets, which no user
// holds on to and which are therefore never released one by one.
const limitedCacheSize = 1024

// Resolver decides requests from roles and bindings it is told about
// (PutRole, PutBinding, …), usually by rolesync.Sync following the store. It
// is safe for concurrent use; a change takes effect on the next decision.
//
// A decision never lists roles or bindings. Each user's bound roles are
// kept up to date as bindings change and interned as a role set shared by
// every user holding the same roles; the first decision for a set computes
// its effective roles (dependencies and aggregation, to a fixed point) and
// indexes their rules, and later decisions reuse that until a role
// changes. Role changes bump a generation, which retires every compiled
// set at once; binding changes only move the users they name to another
// set.
type Resolver struct {
	depsKey   string // rbac.authorization.<brand>/dependencies
	aggPrefix string // rbac.authorization.<brand>/aggregate-to-

	mu sync.RWMutex
	// gen counts role changes; a compiled set of an older generation is
	// stale.
	gen   uint64
	roles map[string]*roleState
	// aggregators maps a role name to the roles labelled aggregate-to it.
	aggregators map[string]map[string]struct{}
	bindings    map[string]Binding
	users       map[string]*userState
	// sets holds the role sets users are bound to, by key (appendSetKey), with
	// the number of users holding each.
	sets map[string]*roleSet
	// limited caches the sets of personal access tokens (AuthorizeRoles).
	limited   map[string]*roleSet
	anonymous *roleSet // a requester who has not signed in
	unbound   *roleSet // a signed-in user without bindings
}

type roleState struct {
	Role
	deps        []string
	aggregateTo []string
}

type userState struct {
	// bound counts, per role, the bindings that grant it to the user.
	bound map[string]int
	set   *roleSet
}

// roleSet is a set of bound roles; the effective rules follow from it.
type roleSet struct {
	key      string
	bound    []string // sorted
	signedIn bool
	users    int
	compiled atomic.Pointer[compiledSet]
	// compiling lets one of the requests that find the set stale compile
	// it while the others wait for the result.
	compiling sync.Mutex
}

// compiledSet is what a role set grants at generation gen. It is never
// modified once built.
type compiledSet struct {
	gen       uint64
	effective []string // sorted names of the roles in effect
	// rules point into the roles' own rules, which are never modified.
	rules []*PolicyRule
	index *ruleIndex
}

// NewResolver returns an empty resolver for the brand domain (svc.run by
// default), which names the dependency annotation and aggregation labels.
func NewResolver(brand string) *Resolver {
	return &Resolver{
		depsKey:     "rbac.authorization." + brand + "/dependencies",
		aggPrefix:   "rbac.authorization." + brand + "/aggregate-to-",
		roles:       map[string]*roleState{},
		aggregators: map[string]map[string]struct{}{},
		bindings:    map[string]Binding{},
		users:       map[string]*userState{},
		sets:        map[string]*roleSet{},
		limited:     map[string]*roleSet{},
		anonymous:   &roleSet{},
		unbound:     &roleSet{signedIn: true},
	}
}

// PutRole adds or replaces a role. The resolver keeps its own copy.
func (r *Resolver) PutRole(role Role) {
	st := r.stateOf(role)
	r.mu.Lock()
	defer r.mu.Unlock()
	// A resync puts every role again; an unchanged one keeps the caches.
	if old := r.roles[role.Name]; old != nil && reflect.DeepEqual(old, st) {
		return
	}
	r.removeRoleLocked(role.Name)
	r.roles[role.Name] = st
	for _, t := range st.aggregateTo {
		if r.aggregators[t] == nil {
			r.aggregators[t] = map[string]struct{}{}
		}
		r.aggregators[t][role.Name] = struct{}{}
	}
	r.gen++
}

// stateOf reads a role's dependencies and aggregation targets.
func (r *Resolver) stateOf(role Role) *roleState {
	st := &roleState{Role: cloneRole(role)}
	// An unreadable dependency list adds nothing; Halo, too, grants no
	// more than it had resolved when the list failed to parse.
	if raw := strings.TrimSpace(role.Annotations[r.depsKey]); raw != "" {
		if json.Unmarshal([]byte(raw), &st.deps) != nil {
			st.deps = nil
		}
	}
	for k, v := range role.Labels {
		// Halo reads the value with Boolean.parseBoolean: "true" in any case.
		if target, ok := strings.CutPrefix(k, r.aggPrefix); ok && target != "" && strings.EqualFold(v, "true") {
			st.aggregateTo = append(st.aggregateTo, target)
		}
	}
	slices.Sort(st.aggregateTo) // so that an unchanged role compares equal
	return st
}

// DeleteRole forgets a role.
func (r *Resolver) DeleteRole(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removeRoleLocked(name) {
		r.gen++
	}
}

func (r *Resolver) removeRoleLocked(name string) bool {
	old, ok := r.roles[name]
	if !ok {
		return false
	}
	for _, t := range old.aggregateTo {
		delete(r.aggregators[t], name)
		if len(r.aggregators[t]) == 0 {
			delete(r.aggregators, t)
		}
	}
	delete(r.roles, name)
	return true
}

// PutBinding adds or replaces a binding.
func (r *Resolver) PutBinding(b Binding) {
	b.Users = slices.Clone(b.Users)
	r.mu.Lock()
	defer r.mu.Unlock()
	touched := r.removeBindingLocked(b.Name)
	r.bindings[b.Name] = b
	for _, u := range distinct(b.Users) {
		us := r.users[u]
		if us == nil {
			us = &userState{bound: map[string]int{}}
			r.users[u] = us
		}
		us.bound[b.RoleRef]++
		touched[u] = struct{}{}
	}
	r.rebindLocked(touched)
}

// DeleteBinding forgets a binding.
func (r *Resolver) DeleteBinding(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rebindLocked(r.removeBindingLocked(name))
}

// removeBindingLocked takes a binding's grants away and returns the users
// it named.
func (r *Resolver) removeBindingLocked(name string) map[string]struct{} {
	touched := map[string]struct{}{}
	old, ok := r.bindings[name]
	if !ok {
		return touched
	}
	delete(r.bindings, name)
	for _, u := range distinct(old.Users) {
		touched[u] = struct{}{}
		us := r.users[u]
		if us == nil {
			continue
		}
		if us.bound[old.RoleRef]--; us.bound[old.RoleRef] <= 0 {
			delete(us.bound, old.RoleRef)
		}
	}
	return touched
}

// rebindLocked moves each touched user to the role set of their current
// bound roles, releasing sets no user holds any more.
func (r *Resolver) rebindLocked(touched map[string]struct{}) {
	for u := range touched {
		us := r.users[u]
		if us == nil {
			continue
		}
		var next *roleSet
		if len(us.bound) > 0 {
			bound := make([]string, 0, len(us.bound))
			for name := range us.bound {
				bound = append(bound, name)
			}
			slices.Sort(bound)
			key := string(appendSetKey(nil, bound))
			if us.set != nil && us.set.key == key {
				continue
			}
			next = r.sets[key]
			if next == nil {
				next = &roleSet{key: key, bound: bound, signedIn: true}
				r.sets[key] = next
			}
			next.users++
		}
		if old := us.set; old != nil {
			if old.users--; old.users == 0 {
				delete(r.sets, old.key)
			}
		}
		us.set = next
		if next == nil {
			delete(r.users, u)
		}
	}
}

// appendSetKey encodes sorted role names so that distinct lists never
// share a key: each name is preceded by its length.
func appendSetKey(dst []byte, sorted []string) []byte {
	for _, n := range sorted {
		dst = strconv.AppendInt(dst, int64(len(n)), 10)
		dst = append(dst, ':')
		dst = append(dst, n...)
	}
	return dst
}

// Authorize reports whether user (empty for an anonymous requester) may do
// what info describes.
func (r *Resolver) Authorize(user string, info *RequestInfo) bool {
	return r.compiledFor(user).index.allows(info)
}

// AuthorizeRoles decides for a personal access token of user limited to
// roles: the token holds those of roles still in user's effective set
// (plus anonymous and authenticated), with their dependencies and
// aggregates (TokenRoles).
func (r *Resolver) AuthorizeRoles(user string, roles []string, info *RequestInfo) bool {
	c, ok := r.compiledLimited(user, roles)
	if !ok {
		c = r.cacheLimited(user, roles)
	}
	return c.index.allows(info)
}

// compiledFor returns the current compiled set of a requester.
func (r *Resolver) compiledFor(user string) *compiledSet {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.compiledLocked(r.setLocked(user))
}

func (r *Resolver) setLocked(user string) *roleSet {
	if user == "" {
		return r.anonymous
	}
	if us := r.users[user]; us != nil {
		return us.set
	}
	return r.unbound
}

// compiledLocked returns s compiled at the current generation, compiling
// it if need be. Holding the read lock is enough: roles cannot change
// meanwhile.
func (r *Resolver) compiledLocked(s *roleSet) *compiledSet {
	if c := s.compiled.Load(); c != nil && c.gen == r.gen {
		return c
	}
	s.compiling.Lock()
	defer s.compiling.Unlock()
	if c := s.compiled.Load(); c != nil && c.gen == r.gen {
		return c
	}
	c := r.compileLocked(s.bound, s.signedIn)
	s.compiled.Store(c)
	return c
}

// maxStackRoles is how many token roles compiledLimited sorts without
// allocating.
const maxStackRoles = 32

// compiledLimited finds the compiled set of a token without allocating;
// false means the set is not cached yet.
func (r *Resolver) compiledLimited(user string, roles []string) (*compiledSet, bool) {
	var nameBuf [maxStackRoles]string
	var keyBuf [512]byte
	r.mu.RLock()
	defer r.mu.RUnlock()
	if user == "" {
		return r.compiledLocked(r.anonymous), true
	}
	us := r.users[user]
	if us == nil {
		return r.compiledLocked(r.unbound), true
	}
	own := r.compiledLocked(us.set)
	names := intersectHeld(nameBuf[:0], roles, own.effective)
	if len(names) == 0 {
		return r.compiledLocked(r.unbound), true
	}
	if holdsAll(names, us.bound) {
		return own, true
	}
	s := r.limited[string(appendSetKey(keyBuf[:0], names))]
	if s == nil {
		return nil, false
	}
	return r.compiledLocked(s), true
}

// cacheLimited adds a token's set to the bounded cache and compiles it.
func (r *Resolver) cacheLimited(user string, roles []string) *compiledSet {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := intersectHeld(nil, roles, r.compiledLocked(r.setLocked(user)).effective)
	key := string(appendSetKey(nil, names))
	s := r.limited[key]
	if s == nil {
		if len(r.limited) >= limitedCacheSize {
			clear(r.limited)
		}
		s = &roleSet{key: key, bound: names, signedIn: true}
		r.limited[key] = s
	}
	return r.compiledLocked(s)
}

// compileLocked resolves and indexes the effective rules of a signed-in
// user bound to bound, or of an anonymous requester.
func (r *Resolver) compileLocked(bound []string, signedIn bool) *compiledSet {
	start := make([]string, 0, len(bound)+2)
	start = append(start, AnonymousRole)
	if signedIn {
		start = append(start, AuthenticatedRole)
	}
	c := &compiledSet{gen: r.gen}
	for _, st := range r.closureLocked(append(start, bound...)) {
		c.effective = append(c.effective, st.Name)
		for i := range st.Rules {
			c.rules = append(c.rules, &st.Rules[i])
		}
	}
	slices.Sort(c.effective)
	c.index = newRuleIndex(c.rules)
	return c
}

// closureLocked returns the live roles reached from start (docs/api.md):
// the named roles, then to a fixed point each role's dependencies and the
// roles aggregated into it. A name without a live role (missing, or being
// deleted) grants nothing and leads nowhere, as in Halo, which expands
// only the roles it fetched. Cycles end at names already seen.
func (r *Resolver) closureLocked(start []string) []*roleState {
	return r.closureWithLocked(start, nil)
}

// closureWithLocked is closureLocked with override, when not nil, in
// place of the known role of its name.
func (r *Resolver) closureWithLocked(start []string, override *roleState) []*roleState {
	seen := make(map[string]struct{}, len(start))
	queue := make([]string, 0, len(start))
	push := func(n string) {
		if _, ok := seen[n]; !ok {
			seen[n] = struct{}{}
			queue = append(queue, n)
		}
	}
	for _, n := range start {
		push(n)
	}
	var out []*roleState
	for i := 0; i < len(queue); i++ {
		st := r.roles[queue[i]]
		if override != nil && queue[i] == override.Name {
			st = override
		}
		if st == nil || st.Deleting {
			continue
		}
		out = append(out, st)
		for _, d := range st.deps {
			push(d)
		}
		// Sorted so that rule order is the same on every compile.
		for _, a := range sortedKeys(r.aggregators[st.Name]) {
			push(a)
		}
	}
	return out
}

// EffectiveRoles returns the sorted names of the roles in effect for user
// (empty for anonymous): anonymous, authenticated for a signed-in user,
// the bound roles, their dependencies and aggregates. Only roles that
// exist and are not being deleted are listed.
func (r *Resolver) EffectiveRoles(user string) []string {
	return slices.Clone(r.compiledFor(user).effective)
}

// BoundRoles returns the sorted names of the roles user's bindings name,
// whether or not those roles exist.
func (r *Resolver) BoundRoles(user string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if us := r.users[user]; us != nil && us.set != nil {
		return slices.Clone(us.set.bound)
	}
	return []string{}
}

// RoleNames returns the sorted names of every known role, those being
// deleted included.
func (r *Resolver) RoleNames() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.roles)
}

// Covers reports whether user's effective rules grant everything rules
// grant (RulesCover), so that user may grant them without escalation.
func (r *Resolver) Covers(user string, rules []PolicyRule) bool {
	held := r.compiledFor(user).rules
	owner := make([]PolicyRule, len(held))
	for i, p := range held {
		owner[i] = *p
	}
	return RulesCover(owner, rules)
}

// RulesFor returns the rules that holding roles grants: theirs, their
// dependencies' and their aggregates', to a fixed point, without the
// implicit anonymous and authenticated roles. Hand them to Covers before
// granting roles.
func (r *Resolver) RulesFor(roles []string) []PolicyRule {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var rules []PolicyRule
	for _, st := range r.closureLocked(roles) {
		rules = append(rules, st.Rules...)
	}
	return cloneRules(rules)
}

// RulesWith returns the rules that holding role would grant were it
// stored as given, in place of any role of its name: its own, its
// dependencies' and those of the roles aggregated into it, to a fixed
// point. A role write is checked against it, so that the role cannot pick
// up, through roles labelled aggregate-to it, rules its writer does not
// hold.
func (r *Resolver) RulesWith(role Role) []PolicyRule {
	st := r.stateOf(role)
	r.mu.RLock()
	defer r.mu.RUnlock()
	var rules []PolicyRule
	for _, s := range r.closureWithLocked([]string{role.Name}, st) {
		rules = append(rules, s.Rules...)
	}
	return cloneRules(rules)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func distinct(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]struct{}, len(names))
	for _, n := range names {
		if _, dup := seen[n]; !dup {
			seen[n] = struct{}{}
			out = append(out, n)
		}
	}
	return out
}

func cloneRole(r Role) Role {
	r.Rules = cloneRules(r.Rules)
	r.Labels = maps.Clone(r.Labels)
	r.Annotations = maps.Clone(r.Annotations)
	return r
}

// cloneRules copies rules deeply, so that neither side can change the
// other's.
func cloneRules(rules []PolicyRule) []PolicyRule {
	out := slices.Clone(rules)
	for i := range out {
		p := &out[i]
		p.APIGroups = slices.Clone(p.APIGroups)
		p.Resources = slices.Clone(p.Resources)
		p.ResourceNames = slices.Clone(p.ResourceNames)
		p.NonResourceURLs = slices.Clone(p.NonResourceURLs)
		p.Verbs = slices.Clone(p.Verbs)
	}
	return out
}

// Flows returns where role's grants come from and go to, read as the
// resolver reads them: the roles it depends on, and those it aggregates
// into. Access control uses it to find the roles a write of role changes.
func (r *Resolver) Flows(role Role) (deps, aggregateTo []string) {
	st := r.stateOf(role)
	return st.deps, st.aggregateTo
}

// Reached returns the sorted names of the roles, other than role, whose
// grants would take in role's were it stored as given: those it
// aggregates into and those depending on it, to a fixed point, whether
// they exist yet or not. A role being deleted grants nothing and passes
// nothing on. A write of role changes what each of them grants.
func (r *Resolver) Reached(role Role) []string {
	over := r.stateOf(role)
	r.mu.RLock()
	defer r.mu.RUnlock()
	// dependents[d] are the roles that depend on d.
	dependents := map[string][]string{}
	for name, st := range r.roles {
		if name == role.Name {
			st = over
		}
		if st.Deleting {
			continue
		}
		for _, d := range st.deps {
			dependents[d] = append(dependents[d], name)
		}
	}
	if _, known := r.roles[role.Name]; !known && !over.Deleting {
		for _, d := range over.deps {
			dependents[d] = append(dependents[d], role.Name)
		}
	}
	seen := map[string]bool{role.Name: true}
	queue := []string{role.Name}
	var out []string
	for i := 0; i < len(queue); i++ {
		n := queue[i]
		st := r.roles[n]
		if n == role.Name {
			st = over
		}
		next := dependents[n]
		if st != nil && !st.Deleting {
			next = append(slices.Clip(next), st.aggregateTo...)
		}
		for _, m := range next {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}
