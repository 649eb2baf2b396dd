package core

import (
	"context"
	"errors"
	"fmt"

	gen "github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
)

// ResetAdmin is the way back into a locked-out server, run offline on its
// store: it makes user an enabled user with password (creating it if
// needed) and binds it to super-role through <user>-super-role-binding,
// restoring the built-in roles first. Other users and bindings are left
// as they are. It reports whether the user was created.
func ResetAdmin(ctx context.Context, st *store.Store, brand, user, password string) (created bool, err error) {
	if err := object.ValidateName(user); err != nil {
		return false, fmt.Errorf("core: user name %q: %w", user, err)
	}
	if password == "" {
		return false, errors.New("core: the password is empty")
	}
	hash, err := authn.HashPassword(password)
	if err != nil {
		return false, fmt.Errorf("core: password: %w", err)
	}
	users, roles, bindings := gen.UserModel(), gen.RoleModel(), gen.RoleBindingModel()
	// Only these are registered: the other models' data stays raw, and is
	// kept as it is.
	for _, m := range []*model.Model{roles, bindings, users} {
		if err := st.Register(ctx, m); err != nil {
			return false, fmt.Errorf("core: register %s: %w", m.Kind, err)
		}
	}
	rc, bc, uc := gen.NewRoleClient(st, roles), gen.NewRoleBindingClient(st, bindings), gen.NewUserClient(st, users)
	if _, err := EnsureBuiltinRoles(ctx, rc, brand); err != nil {
		return false, err
	}
	u, err := uc.Get(ctx, user)
	switch {
	case errors.Is(err, store.ErrNotFound):
		u = gen.NewUser(user)
		u.Spec.DisplayName = user
		u.Spec.Password = &hash
		if _, err := uc.Create(ctx, u); err != nil {
			return false, fmt.Errorf("core: create user %s: %w", user, err)
		}
		created = true
	case err != nil:
		return false, fmt.Errorf("core: read user %s: %w", user, err)
	case u.Metadata.DeletionTimestamp != nil:
		return false, fmt.Errorf("core: user %s is being deleted; reset another user", user)
	default:
		u.Spec.Password = &hash
		u.Spec.Disabled = nil
		if _, err := uc.Update(ctx, u); err != nil {
			return false, fmt.Errorf("core: update user %s: %w", user, err)
		}
	}
	name := user + "-" + rbac.SuperRole + "-binding"
	b, err := bc.Get(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return created, Bind(ctx, bc, user, rbac.SuperRole)
	case err != nil:
		return created, fmt.Errorf("core: read binding %s: %w", name, err)
	case b.Metadata.DeletionTimestamp != nil:
		return created, fmt.Errorf("core: binding %s is being deleted; try again once it is gone", name)
	}
	// The binding of that name was changed: make it what its name says.
	b.RoleRef = gen.RoleBindingRoleRef{Kind: "Role", Name: rbac.SuperRole}
	b.Subjects = []gen.RoleBindingSubjectsItem{{Kind: "User", Name: user}}
	if _, err := bc.Update(ctx, b); err != nil {
		return created, fmt.Errorf("core: update binding %s: %w", name, err)
	}
	return created, nil
}
