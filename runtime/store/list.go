package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/query/selector"
	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Query is the list request the store executes.
type Query = query.Query

// List returns one page of the objects matching q, in q's order, with the
// total number of matches.
//
// Strategy. Every plan needs the total, so the choice is between
//   - collect: take the candidates of the most selective indexed term
//     (label or field equality / set / label exists, or a field range:
//     ranges.go), filter them by every term, sort, slice the page. Cost ~
//     candidates.
//   - stream: walk the first sort key's index in order, test each object
//     against the terms, skip the offset, take the page, and stop. Cost ~
//     (offset+size) / selectivity; when the sort key's own field has a
//     range term, the walk covers only that range. It is chosen when it
//     is cheaper and the total is known without visiting the matches: no
//     terms (object count), one label term (the counts table) or only
//     range terms on one field (the range's count), else the total is the
//     size of the intersection of the terms' candidate id sets when every
//     term has one (label terms AND their postings, postings.go), or
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
func (s *Store) List(ctx context.Context, m *model.Model, q Query) (query.ListResult[*Record], error) {
	_, st, err := s.ready(m)
	if err != nil {
		return query.ListResult[*Record]{}, err
	}
	p, err := compile(m, q)
	if err != nil {
		return query.ListResult[*Record]{}, err
	}
	page, size := max(q.Page, 1), q.Size
	items, total, err := p.run(ctx, view{st.current(p.need())}, page, size)
	if err != nil {
		return query.ListResult[*Record]{}, fmt.Errorf("store: list %s: %w", m.Plural, err)
	}
	return query.NewListResult(page, size, total, items), nil
}

type fieldTerm struct {
	ix   int
	op   selector.Operator
	keys []model.Key // sorted
}

type sortKey struct {
	ix   int // position in m.AllIndexes()
	desc bool
}

type plan struct {
	m      *model.Model
	labels selector.Selector
	fields []fieldTerm
	// ranges are the intervals of the range terms on indexes that have a
	// tree (not metadata.name): one per single-valued index, one per term
	// on a multi-valued one.
	ranges []index.KeyRange
	sorts  []sortKey // complete: ends with the name
	multi  []bool    // per index position: may hold several keys
	// sigs holds, per equality or set label term, the signature bits of
	// its values: a record whose labelSig shares none cannot match.
	sigs []uint32
}

// need returns the trees (and postings) run reads: the creation index
// (its size is the object count), and those of the terms and sort keys.
func (p *plan) need() uint64 {
	n := index.TreeBit(index.IxCreated)
	if len(p.labels) > 0 {
		n |= index.TreeBit(index.IxLabels)
	}
	// Only an intersection of several terms reads the postings (a single
	// term's total is known from its index).
	if len(p.labels) > 0 && len(p.labels)+len(p.fields) > 1 {
		n |= index.PostsBit
	}
	for _, f := range p.fields {
		n |= index.TreeBit(f.ix)
	}
	for _, sk := range p.sorts {
		if sk.ix != index.IxName {
			n |= index.TreeBit(sk.ix)
		}
	}
	return n
}

// CheckQuery reports what List would refuse in q for m: unindexed sort
// and field names, unparsable field values, range terms on unordered
// indexes (query.Errors when several).
func CheckQuery(m *model.Model, q Query) error {
	_, err := compile(m, q)
	return err
}

// compile resolves sort and field names to indexes and field values to
// keys; unindexed names and unparsable values are *query.ParamError (400),
// every one of them (query.Errors).
func compile(m *model.Model, q Query) (*plan, error) {
	p := &plan{m: m, labels: q.Labels, multi: make([]bool, m.NumIndexes())}
	for _, r := range q.Labels {
		if r.Op == selector.Equals || r.Op == selector.In {
			var bits uint32
			for _, val := range r.Values {
				bits |= record.LabelBit(string(model.LabelKey(r.Key, val)))
			}
			p.sigs = append(p.sigs, bits)
		}
	}
	for i := range p.multi {
		p.multi[i] = m.IndexAt(i).Multi
	}
	var errs []error // every bad term, not only the first
	var rangeOf []int
fields:
	for _, r := range q.Fields {
		i, ok := m.IndexPos(r.Key)
		if !ok || i == index.IxLabels {
			errs = append(errs, &query.ParamError{Param: "fieldSelector", Value: r.String(), Reason: fmt.Sprintf("field %s is not indexed", r.Key)})
			continue
		}
		typ := m.IndexAt(i).Type
		if r.Op.IsRange() && !ordered(typ) {
			errs = append(errs, &query.ParamError{Param: "fieldSelector", Value: r.String(),
				Reason: fmt.Sprintf("field %s is a %s index; range terms need a number, string or date-time index", r.Key, typ)})
			continue
		}
		ft := fieldTerm{ix: i, op: r.Op}
		for _, v := range r.Values {
			k, err := model.ParseKey(typ, v)
			if err != nil {
				errs = append(errs, &query.ParamError{Param: "fieldSelector", Value: r.String(), Reason: fmt.Sprintf("field %s: %v", r.Key, err)})
				continue fields
			}
			ft.keys = append(ft.keys, k)
		}
		// Equal instants written differently give one key: a set must
		// not count or visit them twice.
		slices.Sort(ft.keys)
		ft.keys = slices.Compact(ft.keys)
		p.fields = append(p.fields, ft)
		if r.Op.IsRange() && i != index.IxName {
			if rangeOf == nil {
				rangeOf = make([]int, len(p.multi))
			}
			p.addRange(rangeOf, i, r.Op, ft.keys[0])
		}
	}
	seen := map[int]bool{}
	add := func(sk sortKey) {
		if !seen[sk.ix] {
			seen[sk.ix] = true
			p.sorts = append(p.sorts, sk)
		}
	}
	for _, srt := range q.Sorts {
		i, ok := m.IndexPos(srt.Index)
		if !ok || i == index.IxLabels {
			errs = append(errs, &query.ParamError{Param: "sort", Value: srt.String(), Reason: fmt.Sprintf("field %s is not indexed", srt.Index)})
			continue
		}
		add(sortKey{ix: i, desc: srt.Desc})
	}
	if err := query.Join(errs...); err != nil {
		return nil, err
	}
	add(sortKey{ix: index.IxCreated, desc: true})
	add(sortKey{ix: index.IxName})
	// Names are unique: later keys can never break a tie.
	for i, sk := range p.sorts {
		if sk.ix == index.IxName {
			p.sorts = p.sorts[:i+1]
			break
		}
	}
	return p, nil
}

// ordered reports whether range terms may compare values of type t.
func ordered(t model.KeyType) bool {
	switch t {
	case model.String, model.Int, model.Float, model.Time:
		return true
	}
	return false
}

// addRange adds a range term on index position ix to the plan's
// intervals: to the one of ix unless ix is multi-valued. rangeOf holds,
// per index position, the place plus one of its interval, so that many
// terms cost one lookup each.
func (p *plan) addRange(rangeOf []int, ix int, op selector.Operator, k model.Key) {
	if i := rangeOf[ix]; i > 0 {
		p.ranges[i-1].Add(op, k)
		return
	}
	r := index.KeyRange{Ix: ix}
	r.Add(op, k)
	p.ranges = append(p.ranges, r)
	if !p.multi[ix] {
		rangeOf[ix] = len(p.ranges)
	}
}

// sigMiss reports whether a record with label signature sig surely fails
// the label terms; false means it may match.
func (p *plan) sigMiss(sig uint32) bool {
	for _, bits := range p.sigs {
		if sig&bits == 0 {
			return true
		}
	}
	return false
}

func (p *plan) matches(r *Record) bool {
	if p.sigMiss(r.Sig) || !p.labels.Matches(r) {
		return false
	}
	for _, f := range p.fields {
		ks := index.Keys(r, f.ix)
		if f.op.IsRange() {
			// Some value in the range (keys order as the values do);
			// no value, no match.
			if !slices.ContainsFunc(ks, func(k model.Key) bool { return f.op.Holds(strings.Compare(string(k), string(f.keys[0]))) }) {
				return false
			}
			continue
		}
		hit := false
		for _, k := range ks {
			if _, found := slices.BinarySearch(f.keys, k); found {
				hit = true
				break
			}
		}
		switch f.op {
		case selector.Equals, selector.In:
			if !hit {
				return false
			}
		default: // NotEquals, NotIn: objects with no value are excluded
			if hit || len(ks) == 0 {
				return false
			}
		}
	}
	return true
}

// compare orders two records by the plan's sort keys. An absent value
// sorts first ascending and last descending.
func (p *plan) compare(a, b *Record) int { return compareBy(p.sorts, a, b) }

func compareBy(sorts []sortKey, a, b *Record) int {
	for _, sk := range sorts {
		if sk.ix == index.IxName {
			c := strings.Compare(a.Name, b.Name)
			if sk.desc {
				c = -c
			}
			return c
		}
		ka, oka := index.SortKey(a, sk.ix, sk.desc)
		kb, okb := index.SortKey(b, sk.ix, sk.desc)
		c := 0
		switch {
		case !oka && !okb:
		case !oka:
			c = -1
		case !okb:
			c = 1
		default:
			c = bytes.Compare([]byte(ka), []byte(kb))
		}
		if sk.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// source is a set of candidates: the entries of some values of one index,
// or (ix == ixName) some names.
type source struct {
	ix    int
	spans []index.Span // or names (as keys), for ixName
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

func (p *plan) run(ctx context.Context, v view, page, size int) ([]*Record, int64, error) {
	all := int64(v.Tree(index.IxCreated).Len()) // one entry per object
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
		if best != nil && c.covered == len(p.labels)+len(p.fields) && intersectCost(srcs) <= intersectRatio*best.count {
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
func (p *plan) candidates(v view) candidates {
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
		switch r.Op {
		case selector.Equals, selector.In:
			src := &source{ix: index.IxLabels}
			for _, val := range r.Values {
				src.spans = append(src.spans, index.Exact(string(model.LabelKey(r.Key, val))))
			}
			consider(src)
		case selector.Exists:
			src := &source{ix: index.IxLabels, spans: []index.Span{index.PrefixSpan(string(model.LabelKeyPrefix(r.Key)))}}
			consider(src)
		}
	}
	for _, f := range p.fields {
		if f.op != selector.Equals && f.op != selector.In {
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
func (p *plan) total(v view, all int64, best *source) (int64, bool) {
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
func (v view) each(ctx context.Context, src *source, skip func(sig uint32) bool, fn func(*Record) bool) error {
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

func (p *plan) collect(ctx context.Context, v view, src *source, offset int64, size int) ([]*Record, int64, error) {
	var hits []*Record
	if src != nil {
		hits = make([]*Record, 0, min(src.count, 1<<16))
	}
	err := v.each(ctx, src, p.sigMiss, func(r *Record) bool {
		if p.matches(r) {
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

// sort sorts recs in the plan's order. Each record's first sort key
// (its first eight bytes, as an integer) and tie key are read once up
// front: reaching them through the records costs several pointer hops per
// comparison. The sort moves int32 positions over pointer-free keys, so
// it costs no write barriers while the collector runs.
func (p *plan) sort(recs []*Record) {
	first, rest := p.sorts[0], p.sorts[1:]
	if first.ix == index.IxName || len(recs) < 2 {
		slices.SortFunc(recs, p.compare)
		return
	}
	type keyed struct {
		pre, tie uint64
		n        int // key length; -1: no value
	}
	ks := make([]keyed, len(recs))
	order := make([]int32, len(recs))
	for i, r := range recs {
		k, has := index.SortKey(r, first.ix, first.desc)
		var buf [8]byte
		copy(buf[:], k)
		ks[i] = keyed{pre: binary.BigEndian.Uint64(buf[:]), tie: index.TieKey(r.Creation), n: len(k)}
		if !has {
			ks[i].n = -1
		}
		order[i] = int32(i)
	}
	// The tie key orders as the creation desc that usually comes next.
	tieNext := len(rest) > 0 && rest[0] == sortKey{ix: index.IxCreated, desc: true}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &ks[i], &ks[j]
		c := 0
		switch {
		case a.n >= 0 && b.n >= 0:
			if c = cmp.Compare(a.pre, b.pre); c == 0 {
				if a.n <= 8 && b.n <= 8 {
					c = cmp.Compare(a.n, b.n) // zero padding hid the length
				} else {
					ka, _ := index.SortKey(recs[i], first.ix, first.desc)
					kb, _ := index.SortKey(recs[j], first.ix, first.desc)
					c = strings.Compare(string(ka), string(kb))
				}
			}
		case a.n >= 0:
			c = 1
		case b.n >= 0:
			c = -1
		}
		if first.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		if tieNext && a.tie != b.tie {
			return cmp.Compare(a.tie, b.tie)
		}
		return compareBy(rest, recs[i], recs[j])
	})
	sorted := make([]*Record, len(recs))
	for i, o := range order {
		sorted[i] = recs[o]
	}
	copy(recs, sorted)
}

func (p *plan) countMatches(ctx context.Context, v view, src *source) (int64, error) {
	var n int64
	err := v.each(ctx, src, p.sigMiss, func(r *Record) bool {
		if p.matches(r) {
			n++
		}
		return true
	})
	return n, err
}

// stream walks the first sort key's index in order, tests every object
// against the terms, skips the offset and stops when the page is full.
//
// Walking a tree forward yields ties in the default tail order (creation
// desc, name asc). A descending walk with the default tail therefore goes
// backwards over the groups of equal keys but forwards inside each group;
// any other tail gathers each group of ties and sorts it. Each of the four
// walks is one method of walk.
//
// matched, when not nil, holds exactly the ids of the matches. within,
// when not nil, is the span of the first sort key's tree that a range
// term allows: the walk covers only it.
func (p *plan) stream(ctx context.Context, v view, best *source, matched *index.IDSet, within *index.Span, all, offset int64, size int, expect, budget int64) ([]*Record, error) {
	first := p.sorts[0]
	rest := p.sorts[1:]
	w := walk{p: p, ctx: ctx, v: v, best: best, matched: matched, within: within,
		offset: offset, size: size, budget: budget, out: make([]*Record, 0, size)}
	// The creation tree holds no value: its forward order is newest first.
	reverse := first.desc != (first.ix == index.IxCreated)
	defaultTail := len(rest) == 0 ||
		first.ix == index.IxCreated && len(rest) == 1 && rest[0] == sortKey{ix: index.IxName} ||
		len(rest) == 2 && rest[0] == sortKey{ix: index.IxCreated, desc: true} && rest[1] == sortKey{ix: index.IxName}
	// Testing a record that does not match costs a cache miss or more;
	// the label signatures spare most of them, but not when the terms are
	// fields or the sort key and the terms correlate. Once the misses
	// exceed the walk's whole estimate, or an eighth of the best candidate
	// set (a bitmap entry costs a fraction of a record test), that set is
	// turned into a bitmap of ids, and entries outside it are passed over
	// without touching their records.
	w.set = matched
	w.setAfter = int64(math.MaxInt64)
	if best != nil && best.count < all {
		w.setAfter = max(min(expect, best.count/8), 256)
		// With no label terms no signature spares a record test, so the
		// walk is expected to miss expect-(offset+size) times: when that
		// reaches the threshold anyway, the misses before it are waste.
		if w.set == nil && len(p.sigs) == 0 && expect-(offset+int64(size)) >= w.setAfter {
			w.set = v.idSet(best)
		}
	}
	// Label terms pass over whole index nodes whose entries' signatures
	// rule out a match: a stream through a long run of other labels costs
	// one test per node, not per entry.
	// (skip and filter stay locals, passed down: kept in walk, the
	// method value would move to the heap, two allocations per list.)
	var skip func(sig uint32) bool
	var filter *cowtree.Filter[index.Entry]
	if len(p.sigs) > 0 {
		skip = p.sigMiss
		filter = &cowtree.Filter[index.Entry]{Skip: skip}
	}
	var err error
	switch {
	case first.ix == index.IxName: // names are unique: no ties
		err = w.byName(reverse)
	case !reverse && defaultTail:
		w.forward(v.Tree(first.ix), skip, filter)
	case reverse && defaultTail && first.ix != index.IxCreated:
		w.backwardByGroup(v.Tree(first.ix), skip, filter)
	default:
		w.sortingGroups(v.Tree(first.ix), first, reverse, skip, filter)
	}
	if err != nil {
		return nil, err
	}
	if w.over {
		return nil, errOverBudget
	}
	return w.out, ctx.Err()
}

// walk is one stream's state: the page gathered so far, the entries
// visited against the budget, the misses that decide when the best
// candidate set becomes a bitmap (set).
type walk struct {
	p        *plan
	ctx      context.Context
	v        view
	best     *source
	matched  *index.IDSet
	within   *index.Span
	offset   int64
	size     int
	budget   int64
	out      []*Record
	visited  int64
	misses   int64
	over     bool
	set      *index.IDSet
	setAfter int64
}

// visit counts one entry walked; false stops the walk (cancelled, or over
// budget).
func (w *walk) visit() bool {
	if w.visited++; w.visited%4096 == 0 && w.ctx.Err() != nil {
		return false
	}
	if w.visited > w.budget {
		w.over = true
		return false
	}
	return true
}

// take tests r and adds it to the page past the offset; false stops the
// walk. With matched, a record's id answers what testing its fields would.
func (w *walk) take(r *Record) bool {
	if !w.visit() {
		return false
	}
	var ok bool
	if w.matched != nil {
		ok = w.matched.Has(r.ID)
	} else {
		ok = w.p.matches(r)
	}
	if !ok {
		w.misses++
		return true
	}
	if w.offset > 0 {
		w.offset--
		return true
	}
	w.out = append(w.out, r)
	return len(w.out) < w.size
}

// outside reports whether e is known not to match: not in the best
// candidate set, once enough misses made that set a bitmap.
func (w *walk) outside(e index.Entry) bool {
	if w.set == nil {
		if w.misses < w.setAfter {
			return false
		}
		w.set = w.v.idSet(w.best)
	}
	return !w.set.Has(e.ID)
}

// takeEntry is take for an index entry, passing over entries that cannot
// match without touching their records.
func (w *walk) takeEntry(e index.Entry) bool {
	if w.p.sigMiss(e.Sig) || w.outside(e) {
		return w.visit()
	}
	return w.take(w.v.Record(e))
}

// byName walks memdb's name index: names are unique, so there are no ties.
func (w *walk) byName(reverse bool) error {
	it, err := w.v.Names().Iter(reverse)
	if err != nil {
		return err
	}
	for r := it.Next(); r != nil && w.take(r); r = it.Next() {
	}
	return nil
}

// forward walks t in its own order, which is the requested one.
func (w *walk) forward(t *index.Tree, skip func(sig uint32) bool, filter *cowtree.Filter[index.Entry]) {
	if w.within != nil {
		w.within.AscendCounted(t, skip, w.takeEntry)
		return
	}
	if len(w.p.labels) == 0 && len(w.p.fields) == 0 && w.offset > 0 {
		// Every entry is a match: jump to the offset in O(log n).
		start, ok := t.GetAt(int(w.offset))
		if !ok {
			return
		}
		w.offset = 0
		t.Ascend(start, w.takeEntry)
		return
	}
	t.ScanFiltered(filter, w.takeEntry)
}

// backwardByGroup walks t's groups of equal keys from the last, each group
// forward from its start; the next group is found walking backwards from
// it, past the nodes and entries whose labels cannot match.
func (w *walk) backwardByGroup(t *index.Tree, skip func(sig uint32) bool, filter *cowtree.Filter[index.Entry]) {
	within := w.within
	var cur index.Entry
	ok := false
	next := func(e index.Entry) bool {
		if within != nil && index.Compare(e, within.Lo) < 0 {
			return false // below the range: no group left
		}
		if skip != nil && skip(e.Sig) {
			return w.visit()
		}
		cur, ok = e, true
		return false
	}
	if within != nil {
		// A range's bounds fall between keys here (not the creation
		// tree): each group of equal keys is in it or out whole.
		t.DescendFiltered(within.Hi, filter, next)
	} else {
		t.ReverseFiltered(filter, next)
	}
	for ok {
		if !index.Exact(cur.Key).AscendCounted(t, skip, w.takeEntry) {
			break
		}
		ok = false
		t.DescendFiltered(index.Exact(cur.Key).Lo, filter, next) // before the group
	}
}

// sortingGroups walks t in either direction, gathers each group of equal
// first keys and sorts it by the rest of the sort.
func (w *walk) sortingGroups(t *index.Tree, first sortKey, reverse bool, skip func(sig uint32) bool, filter *cowtree.Filter[index.Entry]) {
	var group []*Record
	var groupKey model.Key
	groupHas, more := false, true
	flush := func() {
		w.p.sort(group)
		for _, r := range group {
			if more = w.take(r); !more {
				break
			}
		}
		group = group[:0]
	}
	gather := func(e index.Entry) bool {
		if w.p.sigMiss(e.Sig) || w.outside(e) {
			return w.visit()
		}
		r := w.v.Record(e)
		k, has := index.SortKey(r, first.ix, first.desc)
		if len(group) > 0 && (k != groupKey || has != groupHas) {
			if flush(); !more {
				return false
			}
		}
		groupKey, groupHas = k, has
		group = append(group, r)
		return true
	}
	switch {
	case w.within != nil && reverse:
		w.within.DescendCounted(t, skip, gather)
	case w.within != nil:
		w.within.AscendCounted(t, skip, gather)
	case reverse:
		t.ReverseFiltered(filter, gather)
	default:
		t.ScanFiltered(filter, gather)
	}
	if more && len(group) > 0 {
		flush()
	}
}

// idSet returns the ids of src's records.
func (v view) idSet(src *source) *index.IDSet {
	s := v.newIDSet()
	if src.ix == index.IxName {
		v.ids(src, s.Add)
		return s
	}
	v.runs(src, func(run []index.Entry) {
		for i := range run {
			// The bitmap usually has room: set the bit here, not through
			// a call per entry.
			if id := run[i].ID; int(id/64) < len(s.Bits) {
				s.Bits[id/64] |= 1 << (id % 64)
			} else {
				s.Add(id)
			}
		}
	})
	return s
}

// newIDSet returns an empty set sized for the view's ids: they are dense,
// so a bitmap as long as the table is large usually holds them all, and
// is made once rather than grown as ids come.
func (v view) newIDSet() *index.IDSet {
	return &index.IDSet{Bits: make([]uint64, min(v.Tree(index.IxCreated).Len(), index.MaxBitmapID)/64+1)}
}

// ids calls fn with the id of every entry of src, without touching the
// records of index entries.
func (v view) ids(src *source, fn func(id uint32)) {
	if src.ix == index.IxName {
		v.each(context.Background(), src, nil, func(r *Record) bool { fn(r.ID); return true })
		return
	}
	v.runs(src, func(run []index.Entry) {
		for i := range run {
			fn(run[i].ID)
		}
	})
}

// runs hands fn the entries of src (not a name source) a leaf's run at a
// time: a call per leaf, not per entry. fn must not keep the slice.
func (v view) runs(src *source, fn func([]index.Entry)) {
	t := v.Tree(src.ix)
	for _, sp := range src.spans {
		left := sp.Count(t)
		if left <= 0 {
			continue
		}
		t.AscendRuns(sp.Lo, func(run []index.Entry) bool {
			run = run[:min(len(run), left)]
			fn(run)
			left -= len(run)
			return left > 0
		})
	}
}

// intersect returns the ids present in every source: the smallest
// source's ids (a label's posted words, or an index's entries), the other
// label sources' posted words ANDed, then the other sources' entries kept
// where the set so far holds them, smallest source first.
func (v view) intersect(srcs []*source) *index.IDSet {
	srcs = slices.SortedFunc(slices.Values(srcs), func(a, b *source) int { return cmp.Compare(a.count, b.count) })
	var set *index.IDSet
	var rest []*source
	for _, src := range srcs {
		switch {
		case set == nil && src.ix == index.IxLabels:
			set = v.PostedIDs(src.spans)
		case set == nil:
			// The smallest set is an index's (a range, say): its ids,
			// then the labels ANDed word by word.
			set = v.idSet(src)
		case src.ix == index.IxLabels:
			v.AndPosted(set, src.spans)
		default:
			rest = append(rest, src)
		}
	}
	for _, src := range rest {
		next := &index.IDSet{Bits: make([]uint64, len(set.Bits))} // a subset of set
		keep := func(id uint32) {
			if set.Has(id) {
				next.Add(id)
			}
		}
		if src.ix == index.IxName {
			v.ids(src, keep)
		} else {
			v.runs(src, func(run []index.Entry) {
				for i := range run {
					switch id := run[i].ID; {
					case !set.Has(id):
					case int(id/64) < len(next.Bits):
						next.Bits[id/64] |= 1 << (id % 64)
					default:
						next.Add(id) // beyond the bitmap
					}
				}
			})
		}
		set = next
	}
	return set
}
