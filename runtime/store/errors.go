package store

import (
	"errors"
	"fmt"
)

// Sentinels for errors.Is; the typed errors below match them.
var (
	ErrNotFound      = errors.New("not found")
	ErrConflict      = errors.New("conflict")
	ErrAlreadyExists = errors.New("already exists")
	// ErrNotReady: the model's indexes are being built (HTTP 503).
	ErrNotReady = errors.New("model not ready: indexes are being built")
	// ErrNotRegistered: no model is registered under that name (HTTP 404).
	ErrNotRegistered = errors.New("model not registered")
	ErrClosed        = errors.New("store closed")
)

// NotFoundError names the missing object.
type NotFoundError struct {
	Kind string
	Name string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.Name) }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ConflictError is a failed optimistic-lock check.
type ConflictError struct {
	Kind   string
	Name   string
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Kind, e.Name, e.Reason)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// AlreadyExistsError is a create whose name is taken.
type AlreadyExistsError struct {
	Kind string
	Name string
}

func (e *AlreadyExistsError) Error() string {
	return fmt.Sprintf("%s %q already exists", e.Kind, e.Name)
}

// Is makes errors.Is(err, ErrAlreadyExists) and errors.Is(err, ErrConflict)
// true.
func (e *AlreadyExistsError) Is(target error) bool {
	return target == ErrAlreadyExists || target == ErrConflict
}

// UniqueError is a write that would give a unique index a duplicate key.
type UniqueError struct {
	Kind   string
	Index  string
	Value  string
	Holder string // the object that already has the value
}

func (e *UniqueError) Error() string {
	return fmt.Sprintf("%s: index %s value %q is already used by %q", e.Kind, e.Index, e.Value, e.Holder)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *UniqueError) Is(target error) bool { return target == ErrConflict }
