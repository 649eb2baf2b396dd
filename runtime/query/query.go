package query

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/svcrun/svc/runtime/query/selector"
)

// Sort orders a list by one index.
type Sort struct {
	Index string
	Desc  bool
}

// String returns the "index,asc|desc" form.
func (s Sort) String() string {
	if s.Desc {
		return s.Index + ",desc"
	}
	return s.Index + ",asc"
}

// Query is a parsed list request. The zero Query lists everything in the
// default order.
type Query struct {
	Labels selector.Selector
	Fields selector.Selector
	// Sorts are the requested orders; the default tail
	// (metadata.creationTimestamp desc, metadata.name asc) is implied.
	Sorts []Sort
	// Page is 1-based; Size 0 means every object on one page.
	Page int
	Size int
}

// ParamError is a bad list parameter; the HTTP layer answers 400 with it.
type ParamError struct {
	Param  string
	Value  string
	Reason string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Param, e.Value, e.Reason)
}

// Errors is every bad list parameter of one request, each a *ParamError
// or a *selector.Error, so that one 400 names them all.
type Errors []error

func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap gives errors.Is and errors.As each error.
func (e Errors) Unwrap() []error { return e }

// Join returns the non-nil errors as one: nil for none, the error itself
// for one, else Errors (flattened).
func Join(errs ...error) error {
	var out Errors
	for _, err := range errs {
		if many, ok := err.(Errors); ok {
			out = append(out, many...)
		} else if err != nil {
			out = append(out, err)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

// MaxParams is the most query parameters a request may have. The API
// reads a handful (page, size, sort, labelSelector, fieldSelector, watch,
// sendInitialEvents; selectors and sorts may repeat); a query with more
// is refused whole rather than read in part (docs/operations.md).
const MaxParams = 64

// ParseRaw parses a raw query string whole, or not at all: a parameter
// that does not decode (a bad %-escape, or a ';', which url.ParseQuery
// refuses) or more than MaxParams parameters is a *ParamError. It is the
// one parse of a request's query: net/http's URL.Query drops what it
// cannot decode, and everything past its own cap, without a word, so a
// selector could vanish and a delete-collection reach more than was
// asked. An empty query is nil.
func ParseRaw(raw string) (url.Values, error) {
	if raw == "" {
		return nil, nil
	}
	// Counted before anything is decoded, empty parameters too.
	if n := strings.Count(raw, "&") + 1; n > MaxParams {
		return nil, &ParamError{"query", strconv.Itoa(n) + " parameters",
			fmt.Sprintf("at most %d parameters are accepted (limit MaxParams)", MaxParams)}
	}
	v := make(url.Values)
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		key, value, _ := strings.Cut(part, "=")
		name, kerr := url.QueryUnescape(key)
		if kerr != nil {
			name = key
		}
		if strings.Contains(part, ";") {
			return nil, &ParamError{name, value, "must not contain ';' (use '&' between parameters, %3B in a value)"}
		}
		if part == "" {
			continue
		}
		val, err := url.QueryUnescape(value)
		if kerr != nil || err != nil {
			return nil, &ParamError{name, value, "is not URL-encoded properly (a '%' must start an escape such as %25)"}
		}
		v[name] = append(v[name], val)
	}
	return v, nil
}

// Parse reads page, size, sort, labelSelector and fieldSelector from a
// query string. A page below 1 becomes 1; an absent size means 0 (all).
// Selector and sort parameters may repeat; every term is ANDed. Every bad
// parameter is reported (Errors when more than one), and the query holds
// the parts that parsed, so that their other checks can be reported too.
func Parse(v url.Values) (Query, error) {
	q := Query{Page: 1}
	var errs []error // every bad parameter, not only the first
	if s := v.Get("page"); s != "" {
		if n, err := strconv.Atoi(s); err != nil {
			errs = append(errs, &ParamError{"page", s, "must be an integer"})
		} else {
			q.Page = max(n, 1)
		}
	}
	if s := v.Get("size"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			errs = append(errs, &ParamError{"size", s, "must be an integer"})
		case n < 0:
			// No upper bound: size=0 already asks for everything, and a
			// page larger than the list is the whole list.
			errs = append(errs, &ParamError{"size", s, "must not be negative (0 or no size means all objects)"})
		default:
			q.Size = n
		}
	}
	for _, s := range v["sort"] {
		if s == "" {
			continue
		}
		if srt, err := ParseSort(s); err != nil {
			errs = append(errs, err)
		} else {
			q.Sorts = append(q.Sorts, srt)
		}
	}
	// One term per value: parsed one by one, so each bad term is named.
	for _, t := range v["labelSelector"] {
		sel, err := selector.ParseLabels([]string{t})
		if err != nil {
			errs = append(errs, err)
		}
		q.Labels = append(q.Labels, sel...)
	}
	for _, t := range v["fieldSelector"] {
		sel, err := selector.ParseFields([]string{t})
		if err != nil {
			errs = append(errs, err)
		}
		q.Fields = append(q.Fields, sel...)
	}
	return q, Join(errs...)
}

// ParseSort reads "<index>[,asc|desc]"; the direction is case-insensitive
// and defaults to ascending. "name" means metadata.name.
func ParseSort(s string) (Sort, error) {
	field, dir, _ := strings.Cut(s, ",")
	field = strings.TrimSpace(field)
	if field == "" {
		return Sort{}, &ParamError{"sort", s, "expected <field>[,asc|desc]"}
	}
	if field == "name" {
		field = "metadata.name"
	}
	switch strings.ToLower(strings.TrimSpace(dir)) {
	case "", "asc":
		return Sort{Index: field}, nil
	case "desc":
		return Sort{Index: field, Desc: true}, nil
	}
	return Sort{}, &ParamError{"sort", s, "direction must be asc or desc"}
}
