package store

import (
	"context"
	"fmt"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store/internal/plan"
)

// Query is the list request the store executes.
type Query = query.Query

// List returns one page of the objects matching q, in q's order, with the
// total number of matches.
//
// Strategy. Every plan needs the total, so the choice is between
//   - collect: take the candidates of the most selective indexed term
//     (label or field equality / set / label exists, or a field range:
//     internal/index/ranges.go), filter them by every term, sort, slice
//     the page. Cost ~ candidates.
//   - stream: walk the first sort key's index in order, test each object
//     against the terms, skip the offset, take the page, and stop. Cost ~
//     (offset+size) / selectivity; when the sort key's own field has a
//     range term, the walk covers only that range. It is chosen when it
//     is cheaper and the total is known without visiting the matches: no
//     terms (object count), one label term (the counts table) or only
//     range terms on one field (the range's count), else the total is the
//     size of the intersection of the terms' candidate id sets when every
//     term has one (label terms AND their postings, internal/index), or
//     counted over the smallest candidate set.
//
// Testing a record costs cache misses, so most tests happen on index
// entries. Every entry carries its object's label signature (one bit per
// label, hashed) and every tree node the OR of its entries' signatures: a
// stream with label terms passes over nodes and entries that lack a
// term's bit, so a run of 90,000 entries of other labels costs a few
// hundred node tests. Entries also carry dense object ids, so a stream
// that keeps missing turns its best candidate set into a bitmap.
//
// Ties within the first sort key are ordered by the remaining keys; indexes
// already deliver the default tail (creation desc, name asc) when walked
// ascending.
//
// The planner is internal/plan; this is its entry point.
func (s *Store) List(ctx context.Context, m *model.Model, q Query) (query.ListResult[*Record], error) {
	_, st, err := s.ready(m)
	if err != nil {
		return query.ListResult[*Record]{}, err
	}
	p, err := plan.Compile(m, q)
	if err != nil {
		return query.ListResult[*Record]{}, err
	}
	page, size := max(q.Page, 1), q.Size
	items, total, err := p.Run(ctx, st.current(p.Need()), page, size)
	if err != nil {
		return query.ListResult[*Record]{}, fmt.Errorf("store: list %s: %w", m.Plural, err)
	}
	return query.NewListResult(page, size, total, items), nil
}

// Count returns how many objects match q's selectors, as List's total;
// q's sort and paging are ignored. Unlike a list of one item, a count
// needs no order, so it does not keep the creation tree in the views
// (which would make every write copy that tree's nodes it touches).
func (s *Store) Count(ctx context.Context, m *model.Model, q Query) (int64, error) {
	_, st, err := s.ready(m)
	if err != nil {
		return 0, err
	}
	p, err := plan.Compile(m, q)
	if err != nil {
		return 0, err
	}
	n, err := p.Count(ctx, st.current(p.CountNeed()))
	if err != nil {
		return 0, fmt.Errorf("store: count %s: %w", m.Plural, err)
	}
	return n, nil
}

// CheckQuery reports what List would refuse in q for m: unindexed sort
// and field names, unparsable field values, range terms on unordered
// indexes (query.Errors when several).
func CheckQuery(m *model.Model, q Query) error {
	_, err := plan.Compile(m, q)
	return err
}
