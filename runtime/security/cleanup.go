package security

import (
	"context"
	"errors"
	"fmt"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/store"
)

// userCleanup removes what a deleted user leaves behind, as Halo's user
// reconciler does: its role bindings and its personal access tokens.
// Otherwise a user created later under the same name would inherit both.
type userCleanup struct {
	users  *core.UserClient
	tokens *core.PersonalAccessTokenClient
	// unbind drops every binding of a user (Console.replaceBindings).
	unbind func(ctx context.Context, user string) error
}

// Reconcile cleans up after req's user once it is gone or being deleted.
func (u *userCleanup) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	usr, err := u.users.Get(ctx, req.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return controller.Result{}, fmt.Errorf("security: read user %s: %w", req.Name, err)
	case usr.Metadata.DeletionTimestamp == nil:
		return controller.Result{}, nil // a live user keeps what it has
	}
	if err := u.unbind(ctx, req.Name); err != nil {
		return controller.Result{}, err
	}
	toks, err := u.tokens.List(ctx, client.ListOptions{FieldSelector: []string{core.PersonalAccessTokenIndexSpecUsername + "=" + req.Name}})
	if err != nil {
		return controller.Result{}, fmt.Errorf("security: tokens of %s: %w", req.Name, err)
	}
	for _, t := range toks.Items {
		if _, err := u.tokens.Delete(ctx, t.Metadata.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
			return controller.Result{}, fmt.Errorf("security: delete token %s of %s: %w", t.Metadata.Name, req.Name, err)
		}
	}
	return controller.Result{}, nil
}
