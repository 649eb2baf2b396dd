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

// MaxSize bounds a page so one request cannot ask for an unbounded
// allocation by mistake; size=0 (everything) is still allowed.
const MaxSize = 10000

// CheckRaw reports the first parameter of a raw query string that does
// not decode (a bad %-escape, or a ';', which url.ParseQuery refuses).
// net/http's URL.Query drops such a parameter silently, so a selector
// could vanish and a delete-collection reach more than was asked.
func CheckRaw(raw string) error {
	if !strings.ContainsAny(raw, "%;") {
		return nil // nothing that can fail to decode
	}
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		key, value, _ := strings.Cut(part, "=")
		name, kerr := url.QueryUnescape(key)
		if kerr != nil {
			name = key
		}
		if strings.Contains(part, ";") {
			return &ParamError{name, value, "must not contain ';' (use '&' between parameters, %3B in a value)"}
		}
		if _, err := url.QueryUnescape(value); kerr != nil || err != nil {
			return &ParamError{name, value, "is not URL-encoded properly (a '%' must start an escape such as %25)"}
		}
	}
	return nil
}

// Parse reads page, size, sort, labelSelector and fieldSelector from a
// query string. A page below 1 becomes 1; an absent size means 0 (all).
// Selector and sort parameters may repeat; every term is ANDed.
func Parse(v url.Values) (Query, error) {
	q := Query{Page: 1}
	if s := v.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return q, &ParamError{"page", s, "must be an integer"}
		}
		q.Page = max(n, 1)
	}
	if s := v.Get("size"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return q, &ParamError{"size", s, "must be an integer"}
		}
		if n < 0 || n > MaxSize {
			return q, &ParamError{"size", s, fmt.Sprintf("must be between 0 and %d", MaxSize)}
		}
		q.Size = n
	}
	for _, s := range v["sort"] {
		if s == "" {
			continue
		}
		srt, err := ParseSort(s)
		if err != nil {
			return q, err
		}
		q.Sorts = append(q.Sorts, srt)
	}
	var err error
	if q.Labels, err = selector.ParseLabels(v["labelSelector"]); err != nil {
		return q, err
	}
	if q.Fields, err = selector.ParseFields(v["fieldSelector"]); err != nil {
		return q, err
	}
	return q, nil
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
