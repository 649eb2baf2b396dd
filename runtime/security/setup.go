package security

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/rbac/rolesync"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
)

// Options configure Setup.
type Options struct {
	Brand string
	// AdminPassword is the first administrator's password; empty makes a
	// random one, written once to Out.
	AdminPassword string
	Out           io.Writer
	Logger        *slog.Logger
}

// Security is access control, ready to put in front of an api.Server.
type Security struct {
	Guard   *Guard
	Console *Console
	// Models are the core models (users, roles, role bindings, personal
	// access tokens, plugins), registered in the store; serve them with
	// their Routes.
	Models []*model.Model
	Routes map[*model.Model]api.ModelRoutes
	// PluginModel is the core Plugin model (one of Models), which the
	// plugin manager follows.
	PluginModel *model.Model
	// Settle waits until access control decides with every role and
	// binding stored now (for writers outside the HTTP API, such as a
	// plugin's extension files).
	Settle func(ctx context.Context) error
}

// Setup registers the core models in st, loads the built-in roles, creates
// the first administrator on an empty store, and starts keeping the rule
// resolver in step with roles and bindings until ctx ends. It returns once
// the resolver has seen every stored role and binding.
func Setup(ctx context.Context, st *store.Store, opts Options) (*Security, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	users, roles, bindings, tokens, plugins := core.UserModel(), core.RoleModel(), core.RoleBindingModel(), core.PersonalAccessTokenModel(), core.PluginModel()
	ProtectUsers(users)
	// Tokens live in security.<brand>, as in Halo.
	if err := tokens.Rebrand(opts.Brand); err != nil {
		return nil, fmt.Errorf("security: %w", err)
	}
	s := &Security{
		Models:      []*model.Model{roles, bindings, users, tokens, plugins},
		PluginModel: plugins,
		Routes: map[*model.Model]api.ModelRoutes{
			roles: core.RegisterRoleRoutes, bindings: core.RegisterRoleBindingRoutes, users: core.RegisterUserRoutes,
			plugins: core.RegisterPluginRoutes, // tokens: the default routes, which follow the brand
		},
	}
	for _, m := range s.Models {
		if err := st.Register(ctx, m); err != nil {
			return nil, fmt.Errorf("security: register %s: %w", m.Kind, err)
		}
	}
	rc, bc, uc, tc := core.NewRoleClient(st, roles), core.NewRoleBindingClient(st, bindings), core.NewUserClient(st, users), core.NewPersonalAccessTokenClient(st, tokens)
	if err := migrateLegacyTokens(ctx, st, tc, uc, opts.Logger); err != nil {
		return nil, err
	}
	builtin, err := EnsureBuiltinRoles(ctx, rc, opts.Brand)
	if err != nil {
		return nil, err
	}
	created, err := EnsureAdmin(ctx, uc, bc, opts.AdminPassword, opts.Out)
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
	resolver := rbac.NewResolver(opts.Brand)
	// Writes of roles and bindings answer once the resolver has them.
	progress := rolesync.NewProgress()
	settle := func(ctx context.Context) error { return progress.WaitCurrent(ctx, rc, bc) }
	roles.Settled, bindings.Settled = settle, settle
	// docs/api.md: the super administrator's role cannot be edited or deleted.
	// Nor can the other built-in roles, whose rules are the service's
	// (docs/api.md): deleting anonymous would close /healthz, and widening
	// authenticated would hand every user a plugin's API.
	roles.Protected = func(name string) bool { return slices.Contains(builtin, name) }
	s.Settle = settle
	ready := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- rolesync.SyncWithProgress(ctx, rc, bc, resolver, progress, func() { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-errc:
		return nil, fmt.Errorf("security: follow roles and bindings: %w", err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	go func() {
		if err := <-errc; err != nil && ctx.Err() == nil {
			opts.Logger.Error("role sync stopped; role changes no longer take effect", "err", err)
		}
	}()
	an := authn.New(uc, tc, authn.Options{Logger: opts.Logger})
	s.Guard = &Guard{Authn: an, Rules: resolver, used: &tokenUse{tokens: tc, now: time.Now, noted: map[string]time.Time{}}}
	GuardRoles(roles, bindings, rc, s.Guard, opts.Brand)
	supers := &lastSuper{users: uc, bindings: bc}
	supers.guard(users, bindings)
	s.Console = &Console{Users: uc, Roles: rc, Bindings: bc, Tokens: tc, Rules: resolver, Authn: an, Guard: s.Guard, Brand: opts.Brand, Settle: settle, supers: supers,
		Fail: api.Failer(opts.Logger)}
	cleanup := &userCleanup{users: uc, tokens: tc, unbind: func(ctx context.Context, user string) error {
		return s.Console.replaceBindings(ctx, user, nil)
	}}
	c := controller.New(controller.Options{Name: "user-cleanup", Store: st, Model: users, Reconciler: cleanup, Logger: opts.Logger})
	go func() {
		if err := c.Start(ctx); err != nil && ctx.Err() == nil {
			opts.Logger.Error("user cleanup stopped", "err", err)
		}
	}()
	return s, nil
}
