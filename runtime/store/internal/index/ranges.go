package index

import (
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query/selector"
)

// Range terms (f<v, f<=v, f>v, f>=v) are answered from the index: keys
// are order-preserving, so the objects a range allows are the entries of
// one span of the field's tree, counted in O(log n) by rank. The range
// terms of a single-valued index are merged into one interval (spec.year>
// 1900 and spec.year<2000 are one span); on a multi-valued index each term
// is its own span, since two terms may be met by two different values.

// bound is one end of a key interval.
type bound struct {
	k    model.Key
	incl bool // k itself is in the interval
	set  bool // false: unbounded
}

// KeyRange is an interval of keys of one index, and the number of range
// terms it stands for.
type KeyRange struct {
	Ix     int
	lo, hi bound
	Terms  int
}

// Add narrows r by one range term.
func (r *KeyRange) Add(op selector.Operator, k model.Key) {
	r.Terms++
	switch op {
	case selector.GreaterThan, selector.GreaterOrEqual:
		incl := op == selector.GreaterOrEqual
		if !r.lo.set || k > r.lo.k || k == r.lo.k && !incl {
			r.lo = bound{k: k, incl: incl, set: true}
		}
	case selector.LessThan, selector.LessOrEqual:
		incl := op == selector.LessOrEqual
		if !r.hi.set || k < r.hi.k || k == r.hi.k && !incl {
			r.hi = bound{k: k, incl: incl, set: true}
		}
	}
}

// minTimeKey is below every time key: the creation tree's entries with no
// creation time sort after the pivot it makes, so no range holds them.
const minTimeKey = model.Key("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// Span returns the entries of t, the tree at r.Ix, whose keys lie in r.
func (r KeyRange) Span(t *Tree) Span {
	var sp Span
	if r.Ix == IxCreated {
		// The creation tree runs from the newest object to the oldest:
		// the upper time bound starts the span, the lower one ends it.
		// createdPivot(k) stands before the objects created at k, so
		// createdPivot(k-1ns) stands right after them.
		switch {
		case !r.hi.set:
			sp.Lo = Entry{Rec: before}
		case r.hi.incl:
			sp.Lo = createdPivot(r.hi.k)
		default:
			sp.Lo = createdPivot(nanoBefore(r.hi.k))
		}
		switch {
		case !r.lo.set:
			sp.Hi = createdPivot(minTimeKey)
		case r.lo.incl:
			sp.Hi = createdPivot(nanoBefore(r.lo.k))
		default:
			sp.Hi = createdPivot(r.lo.k)
		}
	} else {
		// Objects with no value for a model's own index have one entry
		// keyed "", below every key: the span starts past them.
		sp.Lo = Entry{Key: "", Rec: after}
		if r.lo.set {
			sp.Lo = Entry{Key: string(r.lo.k), Rec: after}
			if r.lo.incl {
				sp.Lo.Rec = before
			}
		}
		if r.hi.set {
			sp.Hi = Entry{Key: string(r.hi.k), Rec: before}
			if r.hi.incl {
				sp.Hi.Rec = after
			}
		} else if last, ok := t.GetAt(t.Len() - 1); ok {
			sp.Hi = Entry{Key: last.Key, Rec: after}
		} else {
			sp.Hi = sp.Lo
		}
	}
	if Compare(sp.Lo, sp.Hi) > 0 {
		sp.Hi = sp.Lo // an empty interval, such as f>5 with f<3
	}
	return sp
}

// nanoBefore returns the time key one nanosecond before k.
func nanoBefore(k model.Key) model.Key {
	t, _ := model.KeyTime(k)
	return model.TimeKey(t.Add(-time.Nanosecond))
}
