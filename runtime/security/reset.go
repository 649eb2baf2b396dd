package security

import (
	"context"
	"errors"
	"fmt"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// ResetAdmin is the way back into a locked-out server, run offline on its
// store: it makes user an enabled user with password (creating it if
// needed) and binds it to super-role through <user>-super-role-binding,
// restoring the built-in roles first. Other users and bindings are left
// as they are. It reports whether the user was created.
func ResetAdmin(ctx context.Context, st *store.Store, brand, user, password string) (created bool, err error) {
	if err := object.ValidateName(user); err != nil {
		return false, fmt.Errorf("security: user name %q: %w", user, err)
	}
	if password == "" {
		return false, errors.New("security: the password is empty")
	}
	hash, err := authn.HashPassword(password)
	if err != nil {
		return false, fmt.Errorf("security: password: %w", err)
	}
	users, roles, bindings := core.UserModel(), core.RoleModel(), core.RoleBindingModel()
	// Only these are registered: the other models' data stays raw, and is
	// kept as it is.
	for _, m := range []*model.Model{roles, bindings, users} {
		if err := st.Register(ctx, m); err != nil {
			return false, fmt.Errorf("security: register %s: %w", m.Kind, err)
		}
	}
	rc, bc, uc := core.NewRoleClient(st, roles), core.NewRoleBindingClient(st, bindings), core.NewUserClient(st, users)
	if _, err := EnsureBuiltinRoles(ctx, rc, brand); err != nil {
		return false, err
	}
	u, err := uc.Get(ctx, user)
	switch {
	case errors.Is(err, store.ErrNotFound):
		u = core.NewUser(user)
		u.Spec.DisplayName = user
		u.Spec.Password = &hash
		if _, err := uc.Create(ctx, u); err != nil {
			return false, fmt.Errorf("security: create user %s: %w", user, err)
		}
		created = true
	case err != nil:
		return false, fmt.Errorf("security: read user %s: %w", user, err)
	case u.Metadata.DeletionTimestamp != nil:
		return false, fmt.Errorf("security: user %s is being deleted; reset another user", user)
	default:
		u.Spec.Password = &hash
		u.Spec.Disabled = nil
		if _, err := uc.Update(ctx, u); err != nil {
			return false, fmt.Errorf("security: update user %s: %w", user, err)
		}
	}
	name := user + "-" + SuperRole + "-binding"
	b, err := bc.Get(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return created, bind(ctx, bc, user, SuperRole)
	case err != nil:
		return created, fmt.Errorf("security: read binding %s: %w", name, err)
	case b.Metadata.DeletionTimestamp != nil:
		return created, fmt.Errorf("security: binding %s is being deleted; try again once it is gone", name)
	}
	// The binding of that name was changed: make it what its name says.
	b.RoleRef = core.RoleBindingRoleRef{Kind: "Role", Name: SuperRole}
	b.Subjects = []core.RoleBindingSubjectsItem{{Kind: "User", Name: user}}
	if _, err := bc.Update(ctx, b); err != nil {
		return created, fmt.Errorf("security: update binding %s: %w", name, err)
	}
	return created, nil
}
