package controller

import (
	"context"
	"errors"
	"time"

	"github.com/svcrun/svc/runtime/store"
)

// Request names the object to reconcile. It carries no event: reconcilers
// are level-based and read the current state.
type Request struct {
	Name string
}

// Result tells the controller when to look at the object again.
type Result struct {
	// RequeueAfter > 0 reconciles the object again after that delay
	// (polling external state, or waiting for something to settle).
	RequeueAfter time.Duration
}

// Reconciler brings one object's world in line with its current state.
// It is called with the name of an object that was added, modified or
// deleted (a deleted object is no longer found), or that was queued with
// Controller.Enqueue. Calls for one name never overlap; calls for
// different names may, when the controller has several workers.
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// Func adapts a function to a Reconciler.
type Func func(ctx context.Context, req Request) (Result, error)

// Reconcile calls f.
func (f Func) Reconcile(ctx context.Context, req Request) (Result, error) { return f(ctx, req) }

// TerminalError marks err as one that retrying cannot fix (a malformed
// object, say): the controller logs it and does not requeue the object.
// TerminalError(nil) is nil. Detect it with IsTerminal, or with errors.Is
// against any TerminalError value.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal reports whether err, or an error it wraps, was made by
// TerminalError.
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}

type terminalError struct{ err error }

func (e *terminalError) Error() string { return "terminal error: " + e.err.Error() }

func (e *terminalError) Unwrap() error { return e.err }

// Is makes errors.Is(err, TerminalError(x)) true for every terminal err.
func (e *terminalError) Is(target error) bool {
	_, ok := target.(*terminalError)
	return ok
}

var _ Reconciler = Func(nil)

// IgnoreNotFound returns nil for store.ErrNotFound and err otherwise: a
// reconciler called for a deleted object has nothing left to do.
func IgnoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
