package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcrun/svc/runtime/controller/internal/queue"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/watch"
)

// Default backoff of a failing object.
const (
	DefaultBaseDelay = 5 * time.Millisecond
	DefaultMaxDelay  = 30 * time.Second
)

// Options configure a Controller.
type Options struct {
	// Name identifies the controller in logs; default the model's plural.
	Name string
	// Store and Model are what is watched; Model must be registered in
	// Store when the controller starts.
	Store *store.Store
	Model *model.Model
	// Reconciler is called with the name of every object that changes.
	Reconciler Reconciler
	// Workers is how many reconciles may run at once (for different
	// names); default 1.
	Workers int
	// Logger receives reconcile failures and watch trouble; default
	// discards.
	Logger *slog.Logger
	// BaseDelay is the wait before retrying an object whose reconcile
	// failed; each further failure doubles it, up to MaxDelay. A success
	// resets it. Defaults DefaultBaseDelay and DefaultMaxDelay.
	BaseDelay, MaxDelay time.Duration
}

// Controller feeds a model's changes to a Reconciler. Build it with New
// and run it with Start.
type Controller struct {
	opts Options
	log  *slog.Logger
	// queue is the current leadership term's queue (see Start).
	queue   atomic.Pointer[queue.Queue]
	started atomic.Bool
	// eventHook, when set (by tests), sees each watch event before it is
	// queued.
	eventHook func(store.Event)
}

// New returns a controller for opts with defaults filled in. It starts
// nothing; Start does.
func New(opts Options) *Controller {
	if opts.Name == "" && opts.Model != nil {
		opts.Name = opts.Model.Plural
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = DefaultBaseDelay
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = DefaultMaxDelay
	}
	opts.MaxDelay = max(opts.MaxDelay, opts.BaseDelay)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Controller{
		opts: opts,
		log:  opts.Logger.With("controller", opts.Name),
	}
	c.queue.Store(queue.New(opts.BaseDelay, opts.MaxDelay))
	return c
}

func (c *Controller) q() *queue.Queue { return c.queue.Load() }

// Enqueue queues name for reconciliation, as if the object had changed.
// It may be called before Start (the name is reconciled once started),
// from a Reconciler, or from any goroutine; after the controller stopped
// it does nothing.
func (c *Controller) Enqueue(name string) { c.q().Add(name) }

// Start watches the model and runs the workers. It blocks until ctx ends,
// then waits for the running reconciles (their ctx is cancelled) and
// returns nil. Names still queued are dropped. A controller starts once;
// a second Start, or missing options, is an error.
//
// A watch dropped for falling behind (watch.ErrSlow) is resubscribed with
// initial events, so every object is reconciled again. If the watch ends
// because the model was unregistered or the store closed, the controller
// logs it and goes idle: its workers stop and Start returns nil when ctx
// ends, as the plugin host expects of a runnable.
func (c *Controller) Start(ctx context.Context) error {
	switch {
	case c.opts.Store == nil:
		return fmt.Errorf("controller %s: no store", c.opts.Name)
	case c.opts.Model == nil:
		return fmt.Errorf("controller %s: no model", c.opts.Name)
	case c.opts.Reconciler == nil:
		return fmt.Errorf("controller %s: no reconciler", c.opts.Name)
	}
	if !c.started.CompareAndSwap(false, true) {
		return fmt.Errorf("controller %s: already started", c.opts.Name)
	}
	// Replicas of a shared store run a controller on one of them at a
	// time (store.Store.Lead); each term of leadership starts from a
	// fresh queue and a watch with initial events, so the new leader
	// reconciles every object once.
	first := true
	c.opts.Store.Lead(ctx, "controllers/"+c.opts.Name, func(ctx context.Context) {
		if !first {
			c.queue.Store(queue.New(c.opts.BaseDelay, c.opts.MaxDelay))
		}
		first = false
		c.run(ctx)
	})
	return nil
}

// run is one term: the workers and the watch, until ctx ends.
func (c *Controller) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() { c.work(ctx) })
	}
	wg.Go(func() { c.watch(ctx) })
	<-ctx.Done()
	c.q().ShutDown()
	wg.Wait()
}

// watch subscribes to the model and queues the name of every event,
// resubscribing after a slow drop.
func (c *Controller) watch(ctx context.Context) {
	delay := c.opts.BaseDelay
	for {
		sub, err := c.opts.Store.Watch(ctx, c.opts.Model, store.WatchOptions{SendInitial: true})
		switch {
		case ctx.Err() != nil:
			if sub != nil {
				sub.Close()
			}
			return
		case errors.Is(err, store.ErrNotReady):
			// Indexes are being built; they will be ready soon.
			c.log.Debug("model not ready; waiting to watch", "retryIn", delay)
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return
			}
			delay = min(2*delay, c.opts.MaxDelay)
			continue
		case err != nil:
			c.idle(fmt.Errorf("watch %s: %w", c.opts.Model.GVK(), err))
			return
		}
		delay = c.opts.BaseDelay
		err = c.consume(ctx, sub)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, watch.ErrSlow):
			c.log.Warn("watch dropped for falling behind; resubscribing to reconcile every object again")
		default:
			c.idle(fmt.Errorf("watch %s ended: %w", c.opts.Model.GVK(), err))
			return
		}
	}
}

// consume queues the names of sub's events until it closes or ctx ends.
func (c *Controller) consume(ctx context.Context, sub *store.Subscription) error {
	defer sub.Close()
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return sub.Err()
			}
			if c.eventHook != nil {
				c.eventHook(ev)
			}
			c.q().Add(ev.Object.Name)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// idle stops the workers after the watch ended for good (the model is gone
// or the store closed): reconciles could only fail from then on.
func (c *Controller) idle(err error) {
	c.log.Error("controller idle until stopped", "error", err)
	c.q().ShutDown()
}

func (c *Controller) work(ctx context.Context) {
	for {
		name, shutdown := c.q().Get()
		if shutdown {
			return
		}
		c.reconcile(ctx, name)
		c.q().Done(name)
	}
}

// reconcile runs the reconciler for name and schedules what its outcome
// asks for.
func (c *Controller) reconcile(ctx context.Context, name string) {
	res, err := c.call(ctx, name)
	switch {
	case err == nil:
		c.q().Forget(name)
		if res.RequeueAfter > 0 {
			c.q().AddAfter(name, res.RequeueAfter)
		}
	case ctx.Err() != nil:
		// Stopping: the failure is most likely the cancellation itself.
	case IsTerminal(err):
		c.q().Forget(name)
		c.log.Error("reconcile failed; not retrying", "name", name, "error", err)
	default:
		d := c.q().When(name)
		// A version conflict is the expected price of optimistic locking.
		level := slog.LevelError
		if errors.Is(err, store.ErrConflict) {
			level = slog.LevelDebug
		}
		c.log.Log(ctx, level, "reconcile failed; retrying", "name", name, "retryIn", d, "error", err)
		c.q().AddAfter(name, d)
	}
}

// call runs the reconciler, turning a panic into an error so that a bug in
// one plugin's reconciler does not bring the server down.
func (c *Controller) call(ctx context.Context, name string) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reconcile %q panicked: %v\n%s", name, r, debug.Stack())
		}
	}()
	return c.opts.Reconciler.Reconcile(ctx, Request{Name: name})
}

// runnable mirrors runtime/plugin.Runnable, which this package cannot
// import: the plugin host runs controllers.
type runnable interface {
	Start(ctx context.Context) error
}

var _ runnable = (*Controller)(nil)
