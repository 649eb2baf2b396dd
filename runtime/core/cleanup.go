package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	gen "github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/store"
)

// UserCleanup returns the controller that removes what a deleted user
// leaves behind, as Halo's user reconciler does: its role bindings and its
// personal access tokens. Otherwise a user created later under the same
// name would inherit both. It starts nothing: its owner runs its Start.
func (m *Models) UserCleanup(st *store.Store, log *slog.Logger) *controller.Controller {
	r := &userCleanup{users: m.UserClient, tokens: m.TokenClient, bindings: m.BindingClient}
	return controller.New(controller.Options{Name: "user-cleanup", Store: st, Model: m.Users, Reconciler: r, Logger: log})
}

// userCleanup is UserCleanup's reconciler.
type userCleanup struct {
	users    *gen.UserClient
	tokens   *gen.PersonalAccessTokenClient
	bindings *gen.RoleBindingClient
}

// Reconcile cleans up after req's user once it is gone or being deleted.
func (u *userCleanup) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	usr, err := u.users.Get(ctx, req.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return controller.Result{}, fmt.Errorf("core: read user %s: %w", req.Name, err)
	case usr.Metadata.DeletionTimestamp == nil:
		return controller.Result{}, nil // a live user keeps what it has
	}
	if err := SetRoles(ctx, u.bindings, req.Name, nil); err != nil {
		return controller.Result{}, err
	}
	toks, err := u.tokens.List(ctx, client.ListOptions{FieldSelector: []string{gen.PersonalAccessTokenIndexSpecUsername + "=" + req.Name}})
	if err != nil {
		return controller.Result{}, fmt.Errorf("core: tokens of %s: %w", req.Name, err)
	}
	for _, t := range toks.Items {
		if _, err := u.tokens.Delete(ctx, t.Metadata.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
			return controller.Result{}, fmt.Errorf("core: delete token %s of %s: %w", t.Metadata.Name, req.Name, err)
		}
	}
	return controller.Result{}, nil
}
