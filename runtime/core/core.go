// Package core gives the service's core models their place in the store
// and their behaviour: User, Role, RoleBinding, PersonalAccessToken and
// Plugin, generated into generated/core from schemas/core.yaml as
// runtime/content and runtime/kinds do for theirs (docs/api.md).
//
//   - core.go registers the five models with their routes (Register).
//   - bootstrap.go loads the built-in roles (extensions/roles.yaml), which
//     the API refuses to change, and creates the first administrator on an
//     empty store.
//   - users.go keeps password hashes inside the generic users API.
//   - bindings.go writes the bindings that give a user roles (Bind,
//     SetRoles); who may ask for that is runtime/authz's question.
//   - legacytokens.go moves tokens an earlier svc stored elsewhere.
//   - cleanup.go is the controller that removes a deleted user's bindings
//     and tokens.
//   - reset.go is the offline "admin reset" of a locked-out server.
//
// Who may read and write these objects is decided elsewhere: runtime/authz
// (the guard and the escalation checks), over runtime/rbac; runtime/access
// wires the two together.
package core

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"

	gen "github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
)

// Options configure Register.
type Options struct {
	Brand string
	// AdminPassword is the first administrator's password; empty makes a
	// random one, written once to Out.
	AdminPassword string
	Out           io.Writer
	Logger        *slog.Logger
}

// Models are the core models as registered in a store, with a client of
// each.
type Models struct {
	Users, Roles, Bindings, Tokens, Plugins *model.Model
	// All are the five, in the order they are registered.
	All []*model.Model
	// Routes serve them; tokens have the default routes, which follow the
	// brand.
	Routes map[*model.Model]api.ModelRoutes

	UserClient    *gen.UserClient
	RoleClient    *gen.RoleClient
	BindingClient *gen.RoleBindingClient
	TokenClient   *gen.PersonalAccessTokenClient

	// Builtin names the built-in roles.
	Builtin []string
}

// Register registers the core models in st, moves personal access tokens
// an earlier version stored elsewhere, loads the built-in roles (which the
// API then refuses to change or delete) and creates the first
// administrator on a store without users. It starts nothing.
func Register(ctx context.Context, st *store.Store, opts Options) (*Models, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	users, roles, bindings, tokens, plugins := gen.UserModel(), gen.RoleModel(), gen.RoleBindingModel(), gen.PersonalAccessTokenModel(), gen.PluginModel()
	ProtectUsers(users)
	// Tokens live in security.<brand>, as in Halo.
	if err := tokens.Rebrand(opts.Brand); err != nil {
		return nil, fmt.Errorf("core: %w", err)
	}
	m := &Models{
		Users: users, Roles: roles, Bindings: bindings, Tokens: tokens, Plugins: plugins,
		All: []*model.Model{roles, bindings, users, tokens, plugins},
		Routes: map[*model.Model]api.ModelRoutes{
			roles: gen.RegisterRoleRoutes, bindings: gen.RegisterRoleBindingRoutes, users: gen.RegisterUserRoutes,
			plugins: gen.RegisterPluginRoutes, // tokens: the default routes, which follow the brand
		},
	}
	for _, x := range m.All {
		if err := st.Register(ctx, x); err != nil {
			return nil, fmt.Errorf("core: register %s: %w", x.Kind, err)
		}
	}
	m.RoleClient, m.BindingClient = gen.NewRoleClient(st, roles), gen.NewRoleBindingClient(st, bindings)
	m.UserClient, m.TokenClient = gen.NewUserClient(st, users), gen.NewPersonalAccessTokenClient(st, tokens)
	if err := migrateLegacyTokens(ctx, st, m.TokenClient, m.UserClient, opts.Logger); err != nil {
		return nil, err
	}
	builtin, err := EnsureBuiltinRoles(ctx, m.RoleClient, opts.Brand)
	if err != nil {
		return nil, err
	}
	m.Builtin = builtin
	created, err := EnsureAdmin(ctx, m.UserClient, m.BindingClient, opts.AdminPassword, opts.Out)
	if err != nil {
		return nil, err
	}
	if !created && opts.AdminPassword != "" {
		// The variable only seeds an empty store; an operator who set it on
		// a later start would otherwise wonder why it does not sign in.
		opts.Logger.Warn("SVC_ADMIN_PASSWORD is set but the store already has users, so it was not applied; " +
			"change a password with PUT /apis/api.console." + opts.Brand + "/v1alpha1/users/{name}/password, " +
			"or stop the server and run its \"admin reset\" command (docs/operations.md)")
	}
	// docs/api.md: the super administrator's role cannot be edited or deleted.
	// Nor can the other built-in roles, whose rules are the service's
	// (docs/api.md): deleting anonymous would close /healthz, and widening
	// authenticated would hand every user a plugin's API.
	roles.Protected = func(name string) bool { return slices.Contains(builtin, name) }
	return m, nil
}
