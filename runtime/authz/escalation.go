package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/rbac/rolesync"
	"github.com/svcrun/svc/runtime/store"
)

// Escalation lets no one hand out a permission they lack, as Kubernetes'
// RBAC does: no one creates or changes a role, binds one, grants one
// through the console or limits a token to one that would give more than
// the caller holds (Guard.HeldRules).
type Escalation struct {
	Guard *Guard
	Roles *core.RoleClient
	Brand string
}

// Granted is what holding role name grants: its stored rules and its
// dependencies' (read now, so a role created a moment ago counts), and
// what the resolver aggregates into it. A missing role is
// store.ErrNotFound.
func (e *Escalation) Granted(ctx context.Context, name string) ([]rbac.PolicyRule, error) {
	rules, err := roleRules(ctx, e.Roles, e.Brand, name, map[string]bool{})
	if err != nil {
		return nil, err
	}
	return append(rules, e.Guard.Rules.RulesFor([]string{name})...), nil
}

// Admit makes the generic roles and rolebindings APIs refuse privilege
// escalation: a caller may create or change a Role only if it already
// holds every rule the role (with its dependencies and the roles
// aggregated into it) would grant, and a RoleBinding only if it holds
// every rule of the role it binds. A role write that changes what other
// roles grant is also an edit of each of them (mayReach). Writes from
// inside the server are not checked. Set roles.Protected (the built-in
// roles) first.
func (e *Escalation) Admit(roles, bindings *model.Model) {
	g := e.Guard
	depsKey := "rbac.authorization." + e.Brand + "/dependencies"
	granted := e.Granted
	builtin := roles.Protected
	roles.Admit = func(ctx context.Context, old, obj object.Object) error {
		id, ok := identityFrom(ctx)
		if !ok {
			return nil
		}
		r := obj.(*core.Role)
		var prev *core.Role
		if old != nil {
			prev = old.(*core.Role)
		}
		if err := g.mayReach(id, prev, r, builtin); err != nil {
			return err
		}
		// What holding the role would grant once written, roles aggregated
		// into it included: otherwise a writer could create or label a role
		// that roles labelled aggregate-to it fill with rules the writer
		// does not hold, and then hold it.
		want := g.Rules.RulesWith(rolesync.ToRole(r))
		var deps []string
		if raw := r.Metadata.Annotations[depsKey]; raw != "" {
			_ = json.Unmarshal([]byte(raw), &deps) // a malformed list grants nothing extra
		}
		for _, d := range deps {
			more, err := granted(ctx, d)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			want = append(want, more...)
		}
		if !rbac.RulesCover(g.HeldRules(id), want) {
			return problem.New(http.StatusForbidden, "user %q may not write role %q: it grants more than the user holds", id.User, r.Metadata.Name)
		}
		return nil
	}
	bindings.Admit = func(ctx context.Context, _, obj object.Object) error {
		id, ok := identityFrom(ctx)
		if !ok {
			return nil
		}
		b := obj.(*core.RoleBinding)
		name := b.RoleRef.Name
		want, err := granted(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return problem.Invalid("the binding names a role that does not exist",
				object.FieldError{Field: "roleRef.name", Message: "role " + name + " does not exist"})
		}
		if err != nil {
			return err
		}
		if !rbac.RulesCover(g.HeldRules(id), want) {
			return problem.New(http.StatusForbidden, "user %q may not bind role %q: it grants more than the user holds", id.User, name)
		}
		return nil
	}
}

// mayReach refuses a role write that changes what other roles grant
// unless the caller could edit each of them: a role labelled
// aggregate-to-X, or one X depends on, is part of X, so writing it is an
// edit of X (update on roles/X), and of a built-in role (anonymous,
// authenticated: everyone) only for a holder of super-role. A write that
// leaves the role's grants and their flow as they were (display name,
// other labels) is not an edit of any other role.
func (g *Guard) mayReach(id authn.Identity, old, r *core.Role, builtin func(string) bool) error {
	if old != nil && sameGrants(g.Rules, old, r) {
		return nil
	}
	var super *bool
	for _, x := range g.Rules.Reached(rolesync.ToRole(r)) {
		if builtin != nil && builtin(x) {
			if super == nil {
				s := rbac.RulesCover(g.HeldRules(id), superRules)
				super = &s
			}
			if !*super {
				return problem.New(http.StatusForbidden, "user %q may not write role %q: it would change built-in role %q, which only a holder of %s may do", id.User, r.Metadata.Name, x, rbac.SuperRole)
			}
			continue
		}
		info := rbac.RequestInfo{IsResourceRequest: true, Verb: "update", APIPrefix: "api", APIVersion: "v1alpha1", Resource: "roles", Name: x}
		if !g.allows(id, &info) {
			return problem.New(http.StatusForbidden, "user %q may not write role %q: it would change role %q, which the user may not update", id.User, r.Metadata.Name, x)
		}
	}
	return nil
}

// superRules are what super-role grants: everything. Fixed here rather
// than read from the resolver, where a missing role would grant nothing
// and so be held by anyone.
var superRules = []rbac.PolicyRule{
	{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
	{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
}

// sameGrants reports whether b grants and passes on what a does: the
// same rules, dependencies and aggregation targets.
func sameGrants(res *rbac.Resolver, a, b *core.Role) bool {
	ad, aa := res.Flows(rolesync.ToRole(a))
	bd, ba := res.Flows(rolesync.ToRole(b))
	return slices.Equal(ad, bd) && slices.Equal(aa, ba) && reflect.DeepEqual(toPolicyRules(a.Rules), toPolicyRules(b.Rules))
}

// roleRules collects a role's stored rules and, transitively, its
// dependencies'. A missing dependency adds nothing; a missing role is
// store.ErrNotFound.
func roleRules(ctx context.Context, roles *core.RoleClient, brand, name string, seen map[string]bool) ([]rbac.PolicyRule, error) {
	if seen[name] {
		return nil, nil
	}
	seen[name] = true
	r, err := roles.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	out := toPolicyRules(r.Rules)
	var deps []string
	if raw := r.Metadata.Annotations["rbac.authorization."+brand+"/dependencies"]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &deps) // a malformed list grants nothing extra
	}
	for _, d := range deps {
		more, err := roleRules(ctx, roles, brand, d, seen)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// MayGrant refuses roles that do not exist and roles whose rules (with
// their dependencies and aggregates) the caller does not hold: the
// console's grants and user creation ask it before binding.
func (e *Escalation) MayGrant(ctx context.Context, caller authn.Identity, roles []string) error {
	var errs object.FieldErrors
	for i, name := range roles {
		rules, err := e.Granted(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			errs.Add(fmt.Sprintf("roles[%d]", i), "role %q does not exist", name)
			continue
		}
		if err != nil {
			return err
		}
		if !rbac.RulesCover(e.Guard.HeldRules(caller), rules) {
			return problem.New(http.StatusForbidden, "user %q may not grant role %q: it allows more than the user holds", caller.User, name)
		}
	}
	if len(errs) > 0 {
		return problem.Invalid("the request names roles that do not exist", errs...)
	}
	return nil
}

// MayLimitTo refuses token roles that do not exist or are outside what
// the caller, issuing a token of owner (itself), holds: the owner's
// effective set
// (bound roles, their dependencies and aggregates), or, for a request
// made with a token, that token's. Limiting a token to a role the owner
// holds only through a dependency is the point of least privilege.
func (e *Escalation) MayLimitTo(ctx context.Context, caller authn.Identity, owner string, roles []string) error {
	res := e.Guard.Rules
	held := res.EffectiveRoles(owner)
	if caller.Roles != nil {
		held = res.TokenRoles(owner, caller.Roles)
	}
	var errs object.FieldErrors
	for i, r := range roles {
		_, err := e.Roles.Get(ctx, r)
		switch {
		case errors.Is(err, store.ErrNotFound):
			errs.Add(fmt.Sprintf("spec.roles[%d]", i), "role %q does not exist", r)
		case err != nil:
			return err
		case !slices.Contains(held, r):
			errs.Add(fmt.Sprintf("spec.roles[%d]", i), "role %q is not in your effective roles", r)
		}
	}
	if len(errs) > 0 {
		return problem.Invalid("the token may only be limited to roles you hold; see errors", errs...)
	}
	return nil
}

func toPolicyRules(rs []core.PolicyRule) []rbac.PolicyRule {
	out := make([]rbac.PolicyRule, len(rs))
	for i, r := range rs {
		out[i] = rbac.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames, NonResourceURLs: r.NonResourceURLs, Verbs: r.Verbs}
	}
	return out
}
