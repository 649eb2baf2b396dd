package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	gen "github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// legacyTokenModel is where earlier versions of svc stored personal
// access tokens: the empty group, /api/v1alpha1/personalaccesstokens.
// It has no Go type; records decode as unstructured objects.
func legacyTokenModel() *model.Model {
	return &model.Model{Version: "v1alpha1", Kind: gen.PersonalAccessTokenKind, Plural: "personalaccesstokens", Singular: "personalaccesstoken"}
}

// legacyTokenSpec is the spec of a token stored by an earlier svc.
type legacyTokenSpec struct {
	Username    string     `json:"username"`
	DisplayName string     `json:"displayName"`
	Description string     `json:"description"`
	TokenHash   string     `json:"tokenHash"`
	Roles       []string   `json:"roles"`
	ExpiresAt   *time.Time `json:"expiresAt"`
	Revoked     *bool      `json:"revoked"`
}

// migrateLegacyTokens moves the tokens an earlier svc stored in the empty
// group to security.<brand>, in Halo's shape (displayName becomes name,
// each gets a tokenId), so that they keep working and show up in both
// token APIs. The hash moves unchanged: the token is never known here.
// A token whose user is gone, or was made for an earlier user of the same
// name, is dropped, since a moved token gets a new creationTimestamp and
// could no longer be told apart. Running it again finds nothing to move.
func migrateLegacyTokens(ctx context.Context, st *store.Store, tokens *gen.PersonalAccessTokenClient, users *gen.UserClient, log *slog.Logger) error {
	m := legacyTokenModel()
	if err := st.Register(ctx, m); err != nil {
		return fmt.Errorf("core: read tokens of an earlier version: %w", err)
	}
	defer st.Unregister(context.WithoutCancel(ctx), m)
	old := client.New[*object.Unstructured](st, m)
	res, err := old.List(ctx, client.ListOptions{})
	if err != nil {
		return fmt.Errorf("core: list tokens of an earlier version: %w", err)
	}
	moved, dropped := 0, 0
	for _, o := range res.Items {
		name := o.Metadata.Name
		var spec legacyTokenSpec
		if err := json.Unmarshal(o.Fields["spec"], &spec); err != nil {
			return fmt.Errorf("core: token %s of an earlier version: %w", name, err)
		}
		keep := o.Metadata.DeletionTimestamp == nil
		if keep {
			u, err := users.Get(ctx, spec.Username)
			switch {
			case errors.Is(err, store.ErrNotFound):
				keep = false
			case err != nil:
				return fmt.Errorf("core: user of token %s: %w", name, err)
			default:
				tc, uc := o.Metadata.CreationTimestamp, u.Metadata.CreationTimestamp
				keep = tc == nil || uc == nil || !tc.Before(*uc)
			}
		}
		if keep {
			id, err := authn.NewTokenID()
			if err != nil {
				return err
			}
			t := &gen.PersonalAccessToken{}
			t.Metadata.Name = name
			t.Metadata.Labels, t.Metadata.Annotations = o.Metadata.Labels, o.Metadata.Annotations
			if spec.DisplayName != "" {
				t.Spec.Name = &spec.DisplayName
			}
			if spec.Description != "" {
				t.Spec.Description = &spec.Description
			}
			t.Spec.Username, t.Spec.TokenHash, t.Spec.TokenID = spec.Username, spec.TokenHash, &id
			t.Spec.Roles = spec.Roles
			if t.Spec.Roles == nil {
				t.Spec.Roles = []string{} // a stored token never meant "all roles"
			}
			t.Spec.ExpiresAt, t.Spec.Revoked = spec.ExpiresAt, spec.Revoked
			// Already moved by a run that stopped before the delete.
			if _, err := tokens.Create(ctx, t); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
				return fmt.Errorf("core: move token %s: %w", name, err)
			}
			moved++
		} else {
			dropped++
		}
		if _, err := old.Delete(ctx, name); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("core: remove token %s of an earlier version: %w", name, err)
		}
	}
	if moved+dropped > 0 {
		log.Info("moved personal access tokens to "+tokens.Model().Group, "moved", moved, "dropped", dropped)
	}
	return nil
}
