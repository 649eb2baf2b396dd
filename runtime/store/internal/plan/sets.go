package plan

import (
	"cmp"
	"context"
	"slices"

	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

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
	return &index.IDSet{Bits: make([]uint64, min(v.Objects, index.MaxBitmapID)/64+1)}
}

// ids calls fn with the id of every entry of src, without touching the
// records of index entries.
func (v view) ids(src *source, fn func(id uint32)) {
	if src.ix == index.IxName {
		v.each(context.Background(), src, nil, func(r *record.Record) bool { fn(r.ID); return true })
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
