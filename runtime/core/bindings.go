package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	gen "github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/store"
)

// SetRoles makes roles exactly the user's bound roles, as Halo's grant
// does: the user leaves other bindings (emptied ones are deleted) and
// gets a binding <user>-<role>-binding for each new role. It checks
// nothing: callers that act for someone check first (runtime/authz).
func SetRoles(ctx context.Context, bindings *gen.RoleBindingClient, user string, roles []string) error {
	want := map[string]bool{}
	for _, r := range roles {
		want[r] = true
	}
	all, err := bindings.List(ctx, client.ListOptions{})
	if err != nil {
		return err
	}
	for _, b := range all.Items {
		i := slices.IndexFunc(b.Subjects, func(s gen.RoleBindingSubjectsItem) bool { return s.Kind == "User" && s.Name == user })
		if i < 0 {
			continue
		}
		if want[b.RoleRef.Name] {
			delete(want, b.RoleRef.Name)
			continue
		}
		b.Subjects = slices.Delete(b.Subjects, i, i+1)
		if len(b.Subjects) == 0 {
			_, err = bindings.Delete(ctx, b.Metadata.Name)
		} else {
			_, err = bindings.Update(ctx, b)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("core: unbind %s from %s: %w", user, b.RoleRef.Name, err)
		}
	}
	for _, r := range slices.Sorted(func(yield func(string) bool) {
		for r := range want {
			if !yield(r) {
				return
			}
		}
	}) {
		if err := Bind(ctx, bindings, user, r); err != nil {
			return err
		}
	}
	return nil
}

// Bind gives user the role through the binding <user>-<role>-binding.
func Bind(ctx context.Context, bindings *gen.RoleBindingClient, user, role string) error {
	b := gen.NewRoleBinding(user + "-" + role + "-binding")
	b.RoleRef = gen.RoleBindingRoleRef{Kind: "Role", Name: role}
	b.Subjects = []gen.RoleBindingSubjectsItem{{Kind: "User", Name: user}}
	if _, err := bindings.Create(ctx, b); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return fmt.Errorf("core: bind %s to %s: %w", user, role, err)
	}
	return nil
}
