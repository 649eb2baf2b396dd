// Package problem writes RFC 7807 problem bodies and is the one place where
// an error becomes an HTTP status (docs/api.md). Handlers return errors;
// they never pick status codes for store or query errors themselves.
package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/query/selector"
	"github.com/svcrun/svc/runtime/store"
)

// ContentType is the media type of every error body.
const ContentType = "application/problem+json"

// Problem is an RFC 7807 body. Errors lists every field at fault.
type Problem struct {
	Type      string              `json:"type"`
	Title     string              `json:"title"`
	Status    int                 `json:"status"`
	Detail    string              `json:"detail"`
	Instance  string              `json:"instance"`
	RequestID string              `json:"requestId,omitempty"`
	Errors    []object.FieldError `json:"errors,omitempty"`

	header http.Header
}

// Error is an error that already knows its status, for handlers' own
// failures (bad body, unsupported media type, ...).
type Error struct {
	Status int
	Detail string
	Errors []object.FieldError
	Header http.Header
}

func (e *Error) Error() string { return e.Detail }

// New returns an *Error with a formatted detail.
func New(status int, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// Invalid returns a 400 *Error listing field violations.
func Invalid(detail string, errs ...object.FieldError) *Error {
	return &Error{Status: http.StatusBadRequest, Detail: detail, Errors: errs}
}

// From maps err to a problem. Unknown errors are 500: a bug.
func From(err error) *Problem {
	var (
		pe  *Error
		inv *object.InvalidError
		qe  *query.ParamError
		se  *selector.Error
		ce  *codec.Error
		ue  *store.UnavailableError
		le  *codec.LimitError
		tl  *store.TooLargeError
	)
	var qes query.Errors
	p := &Problem{Type: "about:blank"}
	switch {
	case errors.As(err, &qes):
		// Several bad list parameters: each named in one answer.
		p.Status, p.Detail = http.StatusBadRequest, qes.Error()
		for _, e := range qes {
			switch {
			case errors.As(e, &qe):
				p.Errors = append(p.Errors, object.FieldError{Field: qe.Param, Message: qe.Reason})
			case errors.As(e, &se):
				p.Errors = append(p.Errors, object.FieldError{Field: se.Param, Message: se.Reason})
			}
		}
	case errors.As(err, &pe):
		p.Status, p.Detail, p.Errors, p.header = pe.Status, pe.Detail, pe.Errors, pe.Header
	case errors.As(err, &ce):
		p.Status, p.Detail, p.Errors = http.StatusBadRequest, ce.Detail, ce.Fields
	case errors.As(err, &le):
		p.Status, p.Detail = http.StatusRequestEntityTooLarge, le.Error()
	case errors.As(err, &tl):
		p.Status, p.Detail = http.StatusRequestEntityTooLarge, tl.Error()
	case errors.As(err, &inv):
		p.Status, p.Detail, p.Errors = http.StatusBadRequest, "the object is invalid; see errors", inv.Errors
	case errors.As(err, &qe):
		p.Status, p.Detail = http.StatusBadRequest, qe.Error()
		p.Errors = []object.FieldError{{Field: qe.Param, Message: qe.Reason}}
	case errors.As(err, &se):
		p.Status, p.Detail = http.StatusBadRequest, se.Error()
		p.Errors = []object.FieldError{{Field: se.Param, Message: se.Reason}}
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrNotRegistered):
		p.Status, p.Detail = http.StatusNotFound, trim(err)
	case errors.Is(err, store.ErrConflict):
		p.Status, p.Detail = http.StatusConflict, trim(err)
		// A unique index clash is about one field, named like any other
		// field error so that a form can show it beside the field.
		var uq *store.UniqueError
		if errors.As(err, &uq) {
			p.Errors = []object.FieldError{{Field: uq.Index, Message: fmt.Sprintf("value %q is already used by %q", uq.Value, uq.Holder)}}
		}
	case errors.Is(err, store.ErrNotReady):
		p.Status, p.Detail = http.StatusServiceUnavailable, trim(err)
		p.header = http.Header{"Retry-After": {"1"}}
	case errors.As(err, &ue):
		// The write was not stored; the store resumes by itself once its
		// disk takes writes again.
		p.Status, p.Detail = http.StatusServiceUnavailable, "the server cannot store writes now (its write-ahead log failed); retry later"
		if ue.Cluster {
			p.Detail = "the server cannot store writes now: its etcd cluster is unreachable or has lost quorum; reads still work; retry later"
		}
		if ue.NoSpace {
			p.Status, p.Detail = http.StatusInsufficientStorage, "the server's disk is full: writes are refused until space is freed; retry later"
		}
		p.header = http.Header{"Retry-After": {strconv.Itoa(ue.RetryAfterSeconds())}}
	case errors.Is(err, store.ErrClosed):
		p.Status, p.Detail = http.StatusServiceUnavailable, "the server is shutting down"
		p.header = http.Header{"Retry-After": {"1"}}
	default:
		p.Status, p.Detail = http.StatusInternalServerError, "internal error; the request id identifies it in the server log"
	}
	p.Title = http.StatusText(p.Status)
	return p
}

// trim drops the "store: op model/name: " wrapping prefixes, keeping the
// innermost message that a client can act on.
func trim(err error) string {
	var (
		nf *store.NotFoundError
		ce *store.ConflictError
		ae *store.AlreadyExistsError
		ue *store.UniqueError
	)
	switch {
	case errors.As(err, &nf):
		return nf.Error()
	case errors.As(err, &ce):
		return ce.Error()
	case errors.As(err, &ae):
		return ae.Error()
	case errors.As(err, &ue):
		return ue.Error()
	}
	return err.Error()
}

// Write sends p for the request r with the given request id.
func Write(w http.ResponseWriter, r *http.Request, requestID string, p *Problem) {
	p.Instance = r.URL.RequestURI()
	p.RequestID = requestID
	// A script's request (X-Requested-With: XMLHttpRequest, as the console
	// sends) gets no Basic challenge: a browser shows its own sign-in
	// dialog for one, over the page's form.
	script := r.Header.Get("X-Requested-With") == "XMLHttpRequest"
	for k, vs := range p.header {
		if script && k == "Www-Authenticate" {
			continue
		}
		w.Header()[k] = vs
	}
	body, err := json.Marshal(p)
	if err != nil { // cannot happen: only strings and ints
		body = []byte(`{"type":"about:blank","title":"Internal Server Error","status":500}`)
	}
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	w.Write(body)
}
