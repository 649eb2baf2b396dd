package object

import (
	"fmt"
	"slices"
	"strings"
)

// FieldError is one violation, located by a dotted field path such as
// "spec.age" or "metadata.labels[app]".
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// FieldErrors collects every violation of one object.
type FieldErrors []FieldError

// Add appends a violation.
func (e *FieldErrors) Add(field, format string, args ...any) {
	*e = append(*e, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Merge appends the violations of extra whose field is neither reported
// already nor inside one that is: a later check of the same input (the
// metadata rules after the schema, say) adds what the first one missed
// without naming a field twice.
func (e *FieldErrors) Merge(extra FieldErrors) {
	have := *e
	for _, x := range extra {
		if !slices.ContainsFunc(have, func(h FieldError) bool { return covers(h.Field, x.Field) }) {
			*e = append(*e, x)
		}
	}
}

// covers reports whether field is path itself or inside it; "(root)" is
// the whole document.
func covers(path, field string) bool {
	if path == "(root)" || path == field {
		return true
	}
	rest, ok := strings.CutPrefix(field, path)
	return ok && (rest[0] == '.' || rest[0] == '[')
}

// Err returns nil for no violations and an *InvalidError otherwise.
func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return &InvalidError{Errors: e}
}

// InvalidError reports an object that breaks field rules. It lists every
// violation at once so a client can fix them all in one go.
type InvalidError struct {
	Errors FieldErrors
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	b.WriteString("invalid object: ")
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(fe.Field)
		b.WriteString(": ")
		b.WriteString(fe.Message)
	}
	return b.String()
}
