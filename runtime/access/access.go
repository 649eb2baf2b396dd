// Package access puts access control together on a store, in one place:
// it is the wiring of the packages that each do one part of it, and the
// owner of their long-running work.
//
//   - runtime/core registers the core models (users, roles, bindings,
//     tokens, plugins), loads the built-in roles and creates the first
//     administrator;
//   - runtime/rbac resolves each user's roles into rules, kept in step with
//     the stored roles and bindings by runtime/rbac/rolesync;
//   - runtime/authn says who is calling;
//   - runtime/authz decides: the guard on every request, and the admission
//     of writes that would hand out more than the writer holds or leave no
//     super administrator;
//   - runtime/console serves the console API over all of it.
//
// New builds all of it and starts nothing. Start, run by its owner (the
// server's "access control" start-up step), follows roles and bindings
// until its context ends and, once the resolver has caught up, runs the
// controller that cleans up after deleted users; WaitReady waits for the
// catch-up.
package access

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/authz"
	"github.com/svcrun/svc/runtime/console"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/core"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/rbac/rolesync"
	"github.com/svcrun/svc/runtime/store"
)

// Options configure New.
type Options struct {
	Brand string
	// AdminPassword is the first administrator's password; empty makes a
	// random one, written once to Out.
	AdminPassword string
	Out           io.Writer
	Logger        *slog.Logger
}

// Access is access control, ready to put in front of an api.Server once
// Start has caught up (WaitReady).
type Access struct {
	Guard   *authz.Guard
	Console *console.Console
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

	core     *core.Models
	resolver *rbac.Resolver
	progress *rolesync.Progress
	cleanup  *controller.Controller
	log      *slog.Logger

	ready   chan struct{} // closed once the resolver has caught up
	failed  chan struct{} // closed when Start fails before that
	failErr error         // why, set before failed closes
	once    sync.Once     // Start runs once
}

// New registers the core models in st, loads the built-in roles, creates
// the first administrator on an empty store, and builds the resolver, the
// guard, the escalation checks and the console API on them. It starts no
// goroutine: the resolver learns the stored roles and bindings once Start
// runs.
func New(ctx context.Context, st *store.Store, opts Options) (*Access, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := core.Register(ctx, st, core.Options{Brand: opts.Brand, AdminPassword: opts.AdminPassword, Out: opts.Out, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	a := &Access{
		Models: m.All, Routes: m.Routes, PluginModel: m.Plugins,
		core: m, resolver: rbac.NewResolver(opts.Brand), progress: rolesync.NewProgress(), log: opts.Logger,
		ready: make(chan struct{}), failed: make(chan struct{}),
	}
	rc, bc := m.RoleClient, m.BindingClient
	// Writes of roles and bindings answer once the resolver has them.
	a.Settle = func(ctx context.Context) error { return a.progress.WaitCurrent(ctx, rc, bc) }
	m.Roles.Settled, m.Bindings.Settled = a.Settle, a.Settle
	an := authn.New(m.UserClient, m.TokenClient, authn.Options{Logger: opts.Logger})
	a.Guard = &authz.Guard{Authn: an, Rules: a.resolver, Used: authn.NewTokenUse(m.TokenClient)}
	esc := &authz.Escalation{Guard: a.Guard, Roles: rc, Brand: opts.Brand}
	esc.Admit(m.Roles, m.Bindings) // after core.Register has protected the built-in roles
	supers := authz.NewLastSuper(m.UserClient, bc)
	supers.Admit(m.Users, m.Bindings) // after core's and Escalation's admission
	a.Console = &console.Console{Users: m.UserClient, Roles: rc, Bindings: bc, Tokens: m.TokenClient, Rules: a.resolver, Authn: an,
		Escalation: esc, Supers: supers, Brand: opts.Brand, Settle: a.Settle, Fail: api.Failer(opts.Logger)}
	a.cleanup = m.UserCleanup(st, opts.Logger)
	return a, nil
}

// Start follows the stored roles and bindings into the resolver until ctx
// ends and, once it has caught up, runs the user cleanup. It returns once
// both have stopped: nil when ctx ends, the error when following fails
// before catching up (WaitReady returns it too). Either failing later is
// logged and leaves the server serving with what the resolver last knew,
// as a failure after start always has.
func (a *Access) Start(ctx context.Context) error {
	err := fmt.Errorf("access: started twice")
	a.once.Do(func() { err = a.run(ctx) })
	return err
}

func (a *Access) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	errc := make(chan error, 1)
	wg.Go(func() {
		errc <- rolesync.SyncWithProgress(ctx, a.core.RoleClient, a.core.BindingClient, a.resolver, a.progress, func() { close(a.ready) })
	})
	select {
	case <-a.ready:
	case err := <-errc:
		if err == nil { // ctx ended first
			return nil
		}
		a.failErr = fmt.Errorf("access: follow roles and bindings: %w", err)
		close(a.failed)
		return a.failErr
	case <-ctx.Done():
		return nil
	}
	wg.Go(func() {
		if err := <-errc; err != nil && ctx.Err() == nil {
			a.log.Error("role sync stopped; role changes no longer take effect", "err", err)
		}
	})
	wg.Go(func() {
		if err := a.cleanup.Start(ctx); err != nil && ctx.Err() == nil {
			a.log.Error("user cleanup stopped", "err", err)
		}
	})
	return nil
}

// WaitReady returns once the resolver reflects every role and binding
// stored when Start began, or Start's error if it failed first, or when
// ctx ends.
func (a *Access) WaitReady(ctx context.Context) error {
	select {
	case <-a.ready:
		return nil
	case <-a.failed:
		return a.failErr
	case <-ctx.Done():
		return ctx.Err()
	}
}
