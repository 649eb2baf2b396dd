package plan

import (
	"context"
	"errors"
	"slices"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query/selector"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// source is a set of candidates: the entries of some values of one index,
// or (ix == index.IxName) some names.
type source struct {
	ix    int
	spans []index.Span // or names (as keys), for index.IxName
	count int64
	terms int // the terms it answers exactly: it holds their matches
	// dedupe: an object may appear under several values (a set term on
	// a multi-valued index). A label has one value, so label sources never
	// repeat an object.
	dedupe bool
}

// collectLimit: below this many candidates collecting is always cheap.
const collectLimit = 1024

// intersectRatio: walking an index entry costs a small fraction of testing
// a record, so intersecting candidate sets pays while they cost at most
// this many times the entries of the smallest one.
const intersectRatio = 32

// intersectCost estimates the entries intersect reads: a label's posted
// word holds up to 64 ids, so a label costs at most one eighth of its
// count unless it is very sparse.
func intersectCost(srcs []*source) int64 {
	var n int64
	for _, src := range srcs {
		if src.ix == index.IxLabels {
			n += src.count/8 + 1
		} else {
			n += src.count
		}
	}
	return n
}

func (p *Plan) run(ctx context.Context, v view, page, size int) ([]*record.Record, int64, error) {
	all := int64(v.Objects)
	c := p.candidates(v)
	best, srcs, within := c.best, c.srcs, c.within

	total, known := p.total(v, all, best)
	if size > 0 && int64(size) > all {
		// A page larger than the table holds what a page of the table's
		// size holds (all of it, or nothing past page 1); that size keeps
		// the buffers and offsets below in range for any requested size.
		size = int(max(all, 1))
	}
	first := p.sorts[0]
	streamable := size > 0 && first.ix != index.IxDeleted && !p.multi[first.ix]
	// Past the last object every page is empty; capping there also keeps
	// (page-1)*size from overflowing for a huge page.
	offset := int64(0)
	if size > 0 {
		offset = all
		if int64(page-1) < all/int64(size)+1 {
			offset = min(int64(page-1)*int64(size), all)
		}
	}
	collect := !streamable
	budget := all + 1 // visits the stream may make before it gives up
	expect := all     // visits the stream is expected to make
	if best != nil && !collect {
		matches := best.count
		if known {
			matches = total
		}
		// A stream restricted to a range walks only its entries.
		scope := all
		if within != nil {
			scope = within.count
		}
		streamCost := (offset + int64(size)) * scope / max(matches, 1)
		expect = streamCost
		collect = best.count <= collectLimit || best.count*3 <= streamCost
		// The estimate assumes the terms are independent of the sort
		// key. When they are not (all matches at the far end), stop
		// streaming once it costs clearly more than collecting would.
		budget = max(4*streamCost, 3*best.count, 4096)
	}
	if collect {
		return p.collect(ctx, v, best, offset, size)
	}
	var matched *index.IDSet
	if !known {
		// The page is cheap to find by streaming but the total is not
		// known. When every term is a candidate set, the matches are their
		// intersection, computed from postings and index entries alone.
		// Otherwise count the matches over the smallest candidate set,
		// testing records.
		if p.intersects(c) {
			matched = v.intersect(srcs)
			total = matched.Len()
		} else {
			var err error
			if total, err = p.countMatches(ctx, v, best); err != nil {
				return nil, 0, err
			}
		}
	}
	var span *index.Span
	if within != nil {
		span = &within.spans[0]
	}
	items, err := p.stream(ctx, v, best, matched, span, all, offset, size, expect, budget)
	if errors.Is(err, errOverBudget) {
		return p.collect(ctx, v, best, offset, size)
	}
	return items, total, err
}

// Count returns the number of matches on v, as Run's total, reading only
// the trees CountNeed names: no page means no order, so a count leaves
// the sort keys' trees (the creation tree by default) out of the views it
// asks for, and the committer can write them in place (see index.View).
func (p *Plan) Count(ctx context.Context, iv *index.View) (int64, error) {
	v := view{iv}
	all := int64(v.Objects)
	c := p.candidates(v)
	if total, ok := p.total(v, all, c.best); ok {
		return total, nil
	}
	if p.intersects(c) {
		return v.intersect(c.srcs).Len(), nil
	}
	return p.countMatches(ctx, v, c.best)
}

// intersects reports whether the matches are best found as the
// intersection of the candidate sets: every term has one, and they cost
// little more to read than the smallest.
func (p *Plan) intersects(c candidates) bool {
	return c.best != nil && c.covered == len(p.labels)+len(p.fields) && intersectCost(c.srcs) <= intersectRatio*c.best.count
}

// Run returns page page (from 1) of size matches (0: all) on v, in the
// plan's order, and the number of matches.
func (p *Plan) Run(ctx context.Context, v *index.View, page, size int) ([]*record.Record, int64, error) {
	return p.run(ctx, view{v}, page, size)
}

// Shape is how Run would start on a view, for tests
// (store.ListPlanForTest).
type Shape struct {
	Driver      int   // the index position of the smallest candidate set; -1 none
	DriverCount int64 // its entries, counted from the index
	Within      int64 // entries of the sort key's range that bound a stream; -1 none
	Covered     int   // terms the candidate sets answer exactly
	Total       int64 // the total when the index counts give it; -1 not
}

// Shape returns the candidate sets Run would weigh on v.
func (p *Plan) Shape(iv *index.View) Shape {
	v := view{iv}
	c := p.candidates(v)
	out := Shape{Driver: -1, Within: -1, Covered: c.covered, Total: -1}
	if c.best != nil {
		out.Driver, out.DriverCount = c.best.ix, c.best.count
	}
	if c.within != nil {
		out.Within = c.within.count
	}
	if n, ok := p.total(v, int64(v.Objects), c.best); ok {
		out.Total = n
	}
	return out
}

// view is the index view a plan runs over, with the planner's own
// methods on candidate sets.
type view struct{ *index.View }

// candidates are the candidate sets of a plan's terms in one view.
type candidates struct {
	srcs    []*source
	best    *source // the smallest; nil: no term has a candidate set
	covered int     // the terms the sources answer exactly
	within  *source // the range of the first sort key's field, if any
}

// candidates returns the candidate set of every label equality, set or
// exists term, every field equality or set term and every range
// interval, each counted from its index.
func (p *Plan) candidates(v view) candidates {
	var c candidates
	consider := func(src *source) {
		src.terms = max(src.terms, 1)
		c.covered += src.terms
		src.count = v.count(src)
		c.srcs = append(c.srcs, src)
		if c.best == nil || src.count < c.best.count {
			c.best = src
		}
	}
	for _, r := range p.labels {
		if !labelSource(r.Op) {
			continue
		}
		src := &source{ix: index.IxLabels}
		if r.Op == selector.Exists {
			src.spans = []index.Span{index.PrefixSpan(string(model.LabelKeyPrefix(r.Key)))}
		} else { // Equals, In
			for _, val := range r.Values {
				src.spans = append(src.spans, index.Exact(string(model.LabelKey(r.Key, val))))
			}
		}
		consider(src)
	}
	for _, f := range p.fields {
		if !fieldSource(f.op) {
			continue
		}
		src := &source{ix: f.ix, dedupe: p.multi[f.ix] && len(f.keys) > 1}
		for _, k := range f.keys {
			src.spans = append(src.spans, index.KeySpan(f.ix, k))
		}
		consider(src)
	}
	for _, r := range p.ranges {
		src := &source{ix: r.Ix, spans: []index.Span{r.Span(v.Tree(r.Ix))}, dedupe: p.multi[r.Ix], terms: r.Terms}
		consider(src)
		if r.Ix == p.sorts[0].ix {
			c.within = src // single-valued: a multi-valued index is never streamed
		}
	}
	return c
}

var errOverBudget = errors.New("stream visited more entries than collecting costs")

// total returns the number of matches when the index counts give it
// without visiting them: no terms, or one term.
func (p *Plan) total(v view, all int64, best *source) (int64, bool) {
	switch {
	case len(p.labels) == 0 && len(p.fields) == 0:
		return all, true
	case len(p.labels) == 1 && len(p.fields) == 0:
		r := p.labels[0]
		var n int64
		for _, val := range r.Values {
			n += int64(index.Exact(string(model.LabelKey(r.Key, val))).Count(v.Tree(index.IxLabels)))
		}
		keyed := func() int64 {
			return int64(index.PrefixSpan(string(model.LabelKeyPrefix(r.Key))).Count(v.Tree(index.IxLabels)))
		}
		switch r.Op {
		case selector.Equals, selector.In:
			return n, true
		case selector.NotEquals, selector.NotIn:
			return all - n, true // objects without the label match too
		case selector.Exists:
			return keyed(), true
		default: // DoesNotExist
			return all - keyed(), true
		}
	case len(p.labels) == 0 && len(p.ranges) == 1 && p.ranges[0].Terms == len(p.fields) && !p.multi[p.ranges[0].Ix]:
		// Only range terms, all on one single-valued index: its interval
		// (best, the one source) holds exactly the matches.
		return best.count, true
	case len(p.labels) == 0 && len(p.fields) == 1:
		f := p.fields[0]
		if f.ix == index.IxName || p.multi[f.ix] || f.ix < index.NumDefault {
			break
		}
		if f.op == selector.Equals || f.op == selector.In {
			return best.count, true
		}
		// NotEquals, NotIn on a single-valued index: objects that have a
		// value, less those with one of the keys.
		t := v.Tree(f.ix)
		n := int64(t.Len() - index.Exact("").Count(t))
		for _, k := range f.keys {
			n -= int64(index.Exact(string(k)).Count(t))
		}
		return n, true
	}
	return 0, false
}

// count returns how many entries src names (objects, for a name source).
func (v view) count(src *source) int64 {
	var n int64
	if src.ix == index.IxName {
		names := v.Names()
		for _, sp := range src.spans {
			if names.Get(sp.Lo.Key) != nil {
				n++
			}
		}
		return n
	}
	for _, sp := range src.spans {
		n += int64(sp.Count(v.Tree(src.ix)))
	}
	return n
}

// each calls fn for every distinct record of src (every object when src
// is nil) whose entry skip (nil: none) does not reject, stopping early
// when fn returns false. skip sees the entry only, so a rejected record is
// not touched.
func (v view) each(ctx context.Context, src *source, skip func(sig uint32) bool, fn func(*record.Record) bool) error {
	visited := 0
	cancelled := func() bool {
		visited++
		return visited%4096 == 0 && ctx.Err() != nil
	}
	if src == nil {
		v.Tree(index.IxCreated).Scan(func(e index.Entry) bool { return !cancelled() && (skip != nil && skip(e.Sig) || fn(v.Record(e))) })
		return ctx.Err()
	}
	if src.ix == index.IxName {
		names := v.Names()
		for _, sp := range src.spans {
			if r := names.Get(sp.Lo.Key); r != nil && !fn(r) {
				break
			}
		}
		return nil
	}
	var seen map[string]struct{}
	if src.dedupe {
		seen = map[string]struct{}{}
	}
	for _, sp := range src.spans {
		more := sp.AscendCounted(v.Tree(src.ix), skip, func(e index.Entry) bool {
			if cancelled() {
				return false
			}
			if skip != nil && skip(e.Sig) {
				return true
			}
			if seen != nil {
				if _, dup := seen[e.Rec.Name]; dup {
					return true
				}
				seen[e.Rec.Name] = struct{}{}
			}
			return fn(v.Record(e))
		})
		if !more {
			break
		}
	}
	return ctx.Err()
}

func (p *Plan) collect(ctx context.Context, v view, src *source, offset int64, size int) ([]*record.Record, int64, error) {
	var hits []*record.Record
	if src != nil {
		hits = make([]*record.Record, 0, min(src.count, 1<<16))
	}
	err := v.each(ctx, src, p.sigMiss, func(r *record.Record) bool {
		if p.Matches(r) {
			hits = append(hits, r)
		}
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	p.sort(hits)
	total := int64(len(hits))
	if size == 0 {
		return hits, total, nil
	}
	if offset >= total {
		return nil, total, nil
	}
	end := min(offset+int64(size), total)
	return slices.Clip(hits[offset:end]), total, nil
}

func (p *Plan) countMatches(ctx context.Context, v view, src *source) (int64, error) {
	var n int64
	err := v.each(ctx, src, p.sigMiss, func(r *record.Record) bool {
		if p.Matches(r) {
			n++
		}
		return true
	})
	return n, err
}
