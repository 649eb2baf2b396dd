package authz

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
)

// LastSuper refuses writes that would leave no enabled user bound to
// super-role: with none, no one can administer the server, and a restart
// does not bring one back (core.EnsureAdmin only acts on an empty store).
// Such writes are a 409; the offline `admin reset` command is the way back
// for a server locked out some other way (a forgotten password).
type LastSuper struct {
	// mu is the users' and bindings' models' WriteLock, and is held by the
	// console while it changes bindings, so that two writes cannot each
	// remove one of the last two super administrators.
	mu       sync.Mutex
	users    *core.UserClient
	bindings *core.RoleBindingClient
}

// change is a write about to be made: objects by name as written (nil:
// deleted), and a user about to leave every binding of super-role.
type change struct {
	bindings map[string]*core.RoleBinding
	users    map[string]*core.User
	unbound  string
}

// NewLastSuper returns a LastSuper counting through users and bindings.
func NewLastSuper(users *core.UserClient, bindings *core.RoleBindingClient) *LastSuper {
	return &LastSuper{users: users, bindings: bindings}
}

// Lock holds off writes of users and bindings through the generic API
// (their models' WriteLock, set by Admit); a writer outside it that
// changes bindings holds it across CheckUnbind and its writes.
func (s *LastSuper) Lock() { s.mu.Lock() }

// Unlock ends Lock.
func (s *LastSuper) Unlock() { s.mu.Unlock() }

// CheckUnbind refuses to take user out of every binding of super-role if
// that leaves no enabled super administrator. Call it under Lock.
func (s *LastSuper) CheckUnbind(ctx context.Context, user string) error {
	return s.check(ctx, change{unbound: user})
}

// Admit installs the checks on the generic users and bindings APIs, after
// any admission they already have.
func (s *LastSuper) Admit(users, bindings *model.Model) {
	users.WriteLock, bindings.WriteLock = &s.mu, &s.mu
	admitUser := users.Admit
	users.Admit = func(ctx context.Context, old, obj object.Object) error {
		if admitUser != nil {
			if err := admitUser(ctx, old, obj); err != nil {
				return err
			}
		}
		u := obj.(*core.User)
		if old == nil || enabled(u) {
			return nil
		}
		return s.check(ctx, change{users: map[string]*core.User{u.Metadata.Name: u}})
	}
	users.AdmitDelete = func(ctx context.Context, olds []object.Object) error {
		c := change{users: map[string]*core.User{}}
		for _, o := range olds {
			c.users[o.GetEnvelope().Metadata.Name] = nil
		}
		return s.check(ctx, c)
	}
	admitBinding := bindings.Admit
	bindings.Admit = func(ctx context.Context, old, obj object.Object) error {
		if admitBinding != nil {
			if err := admitBinding(ctx, old, obj); err != nil {
				return err
			}
		}
		if old == nil || old.(*core.RoleBinding).RoleRef.Name != rbac.SuperRole {
			return nil
		}
		b := obj.(*core.RoleBinding)
		return s.check(ctx, change{bindings: map[string]*core.RoleBinding{b.Metadata.Name: b}})
	}
	bindings.AdmitDelete = func(ctx context.Context, olds []object.Object) error {
		c := change{bindings: map[string]*core.RoleBinding{}}
		for _, o := range olds {
			if b := o.(*core.RoleBinding); b.RoleRef.Name == rbac.SuperRole {
				c.bindings[b.Metadata.Name] = nil
			}
		}
		if len(c.bindings) == 0 {
			return nil
		}
		return s.check(ctx, c)
	}
}

// enabled reports a user who can sign in: not disabled, not being deleted.
func enabled(u *core.User) bool {
	return u != nil && u.Metadata.DeletionTimestamp == nil && (u.Spec.Disabled == nil || !*u.Spec.Disabled)
}

// check refuses c if it takes the number of enabled super administrators
// from some to none. A store that has none already (made offline) is not
// made worse by c, and is left to `admin reset`.
func (s *LastSuper) check(ctx context.Context, c change) error {
	before, after, err := s.count(ctx, c)
	if err != nil {
		return err
	}
	if before > 0 && after == 0 {
		return problem.New(http.StatusConflict, "this would leave no enabled user bound to %s, and no one able to administer the server: bind another user to %s first", rbac.SuperRole, rbac.SuperRole)
	}
	return nil
}

// count returns the enabled users bound to super-role now and once c is
// written.
func (s *LastSuper) count(ctx context.Context, c change) (before, after int, err error) {
	list, err := s.bindings.List(ctx, client.ListOptions{FieldSelector: []string{core.RoleBindingIndexRoleRefName + "=" + rbac.SuperRole}})
	if err != nil {
		return 0, 0, fmt.Errorf("authz: bindings of %s: %w", rbac.SuperRole, err)
	}
	now, next := map[string]bool{}, map[string]bool{}
	addSubjects := func(set map[string]bool, b *core.RoleBinding) {
		if b == nil || b.RoleRef.Name != rbac.SuperRole || b.Metadata.DeletionTimestamp != nil {
			return
		}
		for _, sub := range b.Subjects {
			if sub.Kind == "User" {
				set[sub.Name] = true
			}
		}
	}
	for _, b := range list.Items {
		addSubjects(now, b)
		if nb, ok := c.bindings[b.Metadata.Name]; ok {
			b = nb
		}
		addSubjects(next, b)
	}
	for name, b := range c.bindings {
		if b != nil && !slices.ContainsFunc(list.Items, func(x *core.RoleBinding) bool { return x.Metadata.Name == name }) {
			addSubjects(next, b)
		}
	}
	delete(next, c.unbound)
	names := maps.Clone(now)
	maps.Copy(names, next)
	for name := range names {
		u, err := s.users.Get(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			u = nil
		} else if err != nil {
			return 0, 0, fmt.Errorf("authz: read user %s: %w", name, err)
		}
		if now[name] && enabled(u) {
			before++
		}
		if nu, ok := c.users[name]; ok {
			u = nu
		}
		if next[name] && enabled(u) {
			after++
		}
	}
	return before, after, nil
}
