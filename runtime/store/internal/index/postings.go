package index

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Postings are a bitmap of object ids per label value, kept in a
// copy-on-write tree of 64-bit words: the word of ids 64c..64c+63 of label
// l is the posting (l, c), present while one of those ids carries l. A
// list whose total needs several label terms intersected ANDs their words
// instead of walking their index entries: a label held by 10,000 of
// 100,000 objects is at most 1,563 words, against 10,000 entries. A label
// on few objects costs a word per object, as much as its index entries.
type posting struct {
	label string // model.LabelKey
	chunk uint32 // ids 64*chunk .. 64*chunk+63
	bits  uint64
}

func comparePosting(x, y posting) int {
	return cmp.Or(strings.Compare(x.label, y.label), cmp.Compare(x.chunk, y.chunk))
}

// Postings is the tree of a table's label postings.
type Postings = cowtree.Tree[posting]

// post sets (on) or clears id's bit in label's bitmap.
func post(t *Postings, label string, id uint32, on bool) {
	p, ok := t.Get(posting{label: label, chunk: id / 64})
	if !ok {
		// A copy: label is a piece of a record the posting may outlive.
		p.label, p.chunk = strings.Clone(label), id/64
	}
	bit := uint64(1) << (id % 64)
	switch {
	case on:
		p.bits |= bit
	case p.bits&^bit == 0:
		t.Delete(p)
		return
	default:
		p.bits &^= bit
	}
	t.Set(p)
}

// postRecord moves rec's id from old's labels (old nil: none) to rec's
// (rec nil: none). An update keeps the id, so only changed labels cost.
func postRecord(t *Postings, old, rec *record.Record) {
	if t == nil {
		return // a raw table keeps no indexes
	}
	var was, is []string
	var wbuf, ibuf [8]string
	var id uint32
	if old != nil {
		was, id = record.AppendLabels(old, wbuf[:0]), old.ID
	}
	if rec != nil {
		is, id = record.AppendLabels(rec, ibuf[:0]), rec.ID
	}
	// Both lists are sorted: walk them together.
	for len(was) > 0 || len(is) > 0 {
		switch {
		case len(is) == 0 || len(was) > 0 && was[0] < is[0]:
			post(t, was[0], id, false)
			was = was[1:]
		case len(was) == 0 || is[0] < was[0]:
			post(t, is[0], id, true)
			is = is[1:]
		default: // kept
			was, is = was[1:], is[1:]
		}
	}
}

// BuildPostings builds the postings of every label from the labels index,
// whose entries are grouped by label (and ordered by creation inside each).
func BuildPostings(labels *Tree) *Postings {
	var out []posting
	var words []uint64   // scratch bitmap of one label's ids, by chunk
	var touched []uint32 // the chunks of words in use
	flush := func(label string) {
		label = strings.Clone(label) // see post
		slices.Sort(touched)
		for _, c := range touched {
			out = append(out, posting{label: label, chunk: c, bits: words[c]})
			words[c] = 0
		}
		touched = touched[:0]
	}
	cur := ""
	labels.Scan(func(e Entry) bool {
		if e.Key != cur {
			flush(cur)
			cur = e.Key
		}
		c := e.ID / 64
		if int(c) >= len(words) {
			words = append(words, make([]uint64, int(c)+1-len(words))...)
		}
		if words[c] == 0 {
			touched = append(touched, c)
		}
		words[c] |= 1 << (e.ID % 64)
		return true
	})
	flush(cur)
	return sharing(cowtree.Build(comparePosting, out))
}

// PostedIDs returns the ids of labels-index spans from the postings: each
// a span of one label (exact) or of a key's labels (prefix).
func (v *View) PostedIDs(spans []Span) *IDSet {
	s := &IDSet{}
	for _, sp := range spans {
		lo, hi := v.postRange(sp)
		if last, ok := v.posts.GetAt(hi - 1); ok && hi > lo {
			s.AddWord(last.chunk, 0) // size the bitmap once
		}
		v.postingRuns(sp, func(run []posting) {
			for i := range run {
				s.AddWord(run[i].chunk, run[i].bits)
			}
		})
	}
	return s
}

// AndPosted keeps the ids of s that the postings of spans hold.
func (v *View) AndPosted(s *IDSet, spans []Span) {
	if len(spans) > 1 || spans[0].Lo.Key != spans[0].Hi.Key || len(s.IDs) > 0 {
		s.And(v.PostedIDs(spans))
		return
	}
	// One label, one pass: AND the words it has, clear the ones between.
	next := 0 // the first word not yet ANDed
	v.postingRuns(spans[0], func(run []posting) {
		for i := range run {
			c := int(run[i].chunk)
			if c >= len(s.Bits) {
				return // beyond s (or beyond the bitmap: s has no such ids)
			}
			clear(s.Bits[next:c])
			s.Bits[c] &= run[i].bits
			next = c + 1
		}
	})
	clear(s.Bits[min(next, len(s.Bits)):])
}

// postRange returns the positions [lo, hi) of a labels-index span's
// postings.
func (v *View) postRange(sp Span) (lo, hi int) {
	end := posting{label: sp.Hi.Key} // a key's labels: up to the next key
	if sp.Lo.Key == sp.Hi.Key {
		end.chunk = math.MaxUint32 // one label: all its words
	}
	return v.posts.Rank(posting{label: sp.Lo.Key}), v.posts.Rank(end)
}

// postingRuns calls fn with the postings of a labels-index span in order,
// a leaf's worth at a time. The span's postings are counted first (two
// descents), so the walk compares no label.
func (v *View) postingRuns(sp Span, fn func([]posting)) {
	lo, hi := v.postRange(sp)
	n := hi - lo
	if n <= 0 {
		return
	}
	v.posts.AscendRuns(posting{label: sp.Lo.Key}, func(run []posting) bool {
		run = run[:min(n, len(run))]
		fn(run)
		n -= len(run)
		return n > 0
	})
}
