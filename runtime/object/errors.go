package object

import (
	"fmt"
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
