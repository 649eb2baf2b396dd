package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// Runnable is a long-running part of the server. Start does its work until
// ctx ends and returns once every goroutine it started has finished; an
// error returned before ctx ends is a failure, which stops the server.
type Runnable interface {
	Start(ctx context.Context) error
}

// RunnableFunc adapts a function to Runnable.
type RunnableFunc func(ctx context.Context) error

// Start calls f.
func (f RunnableFunc) Start(ctx context.Context) error { return f(ctx) }

// untilStopped is a Runnable that waits to be stopped and then calls
// stop: for a part whose work runs on its own (the store's committer) and
// only needs closing in its turn.
func untilStopped(stop func() error) Runnable {
	return RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return stop()
	})
}

// group runs the server's runnables, as controller-runtime's manager
// does: each is started (in its own goroutine) when its start-up step
// adds it, so it runs before the parts built after it; stop ends them in
// reverse order, each only once the one started after it has returned.
// The first runnable to fail stops the whole group, and closes failed.
//
// Each runnable's context is cancelled only by stop, never by the
// caller's context, so that a signal first drains the HTTP server and
// only then stops what requests still use.
type group struct {
	log    *slog.Logger
	failed chan struct{} // closed on the first failure

	mu       sync.Mutex
	running  []*running
	stopping bool
	cause    error // the first failure

	failOnce sync.Once
	stopOnce sync.Once
	stopErr  error
}

// running is one started runnable.
type running struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Start's result, set before done closes
}

func newGroup(log *slog.Logger) *group {
	return &group{log: log, failed: make(chan struct{})}
}

// start runs r under name until stop. It refuses once the group is
// stopping (a runnable failed while later steps were still starting).
func (g *group) start(ctx context.Context, name string, r Runnable) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopping {
		return fmt.Errorf("start %s: the server is stopping: %w", name, g.cause)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ru := &running{name: name, cancel: cancel, done: make(chan struct{})}
	g.running = append(g.running, ru)
	go func() {
		defer close(ru.done)
		ru.err = r.Start(rctx)
		if ru.err != nil && rctx.Err() == nil {
			g.fail(fmt.Errorf("%s: %w", name, ru.err))
		}
	}()
	return nil
}

// fail records the first failure and stops the group in the background;
// stop, from anyone else, waits for that stop to end.
func (g *group) fail(err error) {
	g.failOnce.Do(func() {
		g.mu.Lock()
		g.cause = err
		g.mu.Unlock()
		g.log.Error("a part of the server failed; stopping the others", "err", err)
		close(g.failed)
		go g.stop()
	})
}

// stop cancels the runnables in reverse order of start, waiting for each
// to return before cancelling the one before it, and returns their
// errors. Later calls wait for the first and return its result.
func (g *group) stop() error {
	g.stopOnce.Do(func() {
		g.mu.Lock()
		g.stopping = true
		if g.cause == nil {
			g.cause = errors.New("stopped")
		}
		rs := g.running
		g.mu.Unlock()
		var errs []error
		for i := len(rs) - 1; i >= 0; i-- {
			r := rs[i]
			r.cancel()
			<-r.done
			if r.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.name, r.err))
			}
		}
		g.stopErr = errors.Join(errs...)
	})
	return g.stopErr
}
