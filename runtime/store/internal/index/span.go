package index

import (
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Span is a range of keys: [Lo, Hi) in entry order.
type Span struct{ Lo, Hi Entry }

// Exact spans the entries whose key is k.
func Exact(k string) Span { return Span{Entry{Key: k, Rec: before}, Entry{Key: k, Rec: after}} }

// KeySpan spans the entries of index position ix whose key is k. The
// creation tree keys every entry "" and orders it by creation time (the
// tie order), so there the span runs from the first entry created at k to
// the first created one nanosecond earlier.
func KeySpan(ix int, k model.Key) Span {
	t, ok := model.KeyTime(k)
	if ix != IxCreated || !ok {
		return Exact(string(k))
	}
	return Span{createdPivot(k), createdPivot(model.TimeKey(t.Add(-time.Nanosecond)))}
}

// createdPivot stands before every creation-tree entry created at k: it
// ties with them on the creation time and has the smallest name.
func createdPivot(k model.Key) Entry {
	r := &record.Record{}
	record.SetKeys(r, 0, nil, k, "", false, nil)
	return Entry{Rec: r, Tie: TieKey(k)}
}

// PrefixSpan spans the entries whose key starts with p (p's last byte is
// below 0xff, as for the label prefixes it serves).
func PrefixSpan(p string) Span {
	hi := []byte(p)
	hi[len(hi)-1]++
	return Span{Entry{Key: p, Rec: before}, Entry{Key: string(hi), Rec: before}}
}

// Count counts the entries in s without visiting them.
func (s Span) Count(t *Tree) int { return t.Rank(s.Hi) - t.Rank(s.Lo) }

// Ascend calls fn for the entries in s, in order, until fn returns false.
// It reports whether fn asked to go on.
func (s Span) Ascend(t *Tree, fn func(Entry) bool) bool {
	more := true
	t.Ascend(s.Lo, func(e Entry) bool {
		if Compare(e, s.Hi) >= 0 {
			return false
		}
		more = fn(e)
		return more
	})
	return more
}

// AscendCounted is Ascend for a span that will likely be walked whole:
// it counts the span first (two O(log n) descents) and then needs no
// comparison per entry. Entries in nodes skip rejects (nil: none) are
// passed over unseen.
func (s Span) AscendCounted(t *Tree, skip func(sig uint32) bool, fn func(Entry) bool) bool {
	return s.walkCounted(t, skip, false, fn)
}

// DescendCounted is AscendCounted walking s from its end down.
func (s Span) DescendCounted(t *Tree, skip func(sig uint32) bool, fn func(Entry) bool) bool {
	return s.walkCounted(t, skip, true, fn)
}

func (s Span) walkCounted(t *Tree, skip func(sig uint32) bool, down bool, fn func(Entry) bool) bool {
	n, more := s.Count(t), true
	if n == 0 {
		return true
	}
	var f *cowtree.Filter[Entry]
	if skip != nil {
		// A node passed over may reach beyond the span: then nothing is
		// left to see.
		f = &cowtree.Filter[Entry]{Skip: skip, Passed: func(k int) bool {
			n -= k
			return n > 0
		}}
	}
	visit := func(e Entry) bool {
		more = fn(e)
		n--
		return more && n > 0
	}
	if down {
		// No entry equals a pivot: the walk starts below s.Hi.
		t.DescendFiltered(s.Hi, f, visit)
	} else {
		t.AscendFiltered(s.Lo, f, visit)
	}
	return more
}
