package plan

import (
	"context"
	"math"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

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
func (p *Plan) stream(ctx context.Context, v view, best *source, matched *index.IDSet, within *index.Span, all, offset int64, size int, expect, budget int64) ([]*record.Record, error) {
	first := p.sorts[0]
	rest := p.sorts[1:]
	w := walk{p: p, ctx: ctx, v: v, best: best, matched: matched, within: within,
		offset: offset, size: size, budget: budget, out: make([]*record.Record, 0, size)}
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
	p        *Plan
	ctx      context.Context
	v        view
	best     *source
	matched  *index.IDSet
	within   *index.Span
	offset   int64
	size     int
	budget   int64
	out      []*record.Record
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
func (w *walk) take(r *record.Record) bool {
	if !w.visit() {
		return false
	}
	var ok bool
	if w.matched != nil {
		ok = w.matched.Has(r.ID)
	} else {
		ok = w.p.Matches(r)
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
	var group []*record.Record
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
