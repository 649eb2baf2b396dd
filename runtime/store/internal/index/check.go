package index

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// CheckPostings compares the label postings of v with the labels of its
// records, and with postings built afresh from its labels index (tests).
func CheckPostings(v *View) error {
	recs, err := AllRecords(v.db)
	if err != nil {
		return err
	}
	want := map[posting]bool{}
	words := map[[2]any]uint64{}
	for _, r := range recs {
		for _, l := range record.AppendLabels(r, nil) {
			words[[2]any{l, r.ID / 64}] |= 1 << (r.ID % 64)
		}
	}
	for k, w := range words {
		want[posting{label: k[0].(string), chunk: k[1].(uint32), bits: w}] = true
	}
	var got []posting
	v.posts.Scan(func(p posting) bool { got = append(got, p); return true })
	if len(got) != len(want) {
		return fmt.Errorf("%d postings, want %d", len(got), len(want))
	}
	for _, p := range got {
		if !want[p] {
			return fmt.Errorf("posting %q chunk %d bits %#x is not what the records say", p.label, p.chunk, p.bits)
		}
	}
	var built []posting
	BuildPostings(v.trees[IxLabels]).Scan(func(p posting) bool { built = append(built, p); return true })
	if !slices.Equal(built, got) {
		return fmt.Errorf("postings built afresh differ from the kept ones")
	}
	return nil
}

// KeyCopies counts, in v, the string copies that the entries of each
// non-empty key share, by "<index position>:<key>", and those the
// postings of each label share, by "postings:<label>" (tests: see
// sharing).
func KeyCopies(v *View) map[string]int {
	copies := map[string]int{}
	seen := map[*byte]bool{}
	count := func(key, a string) {
		if p := unsafe.StringData(a); a != "" && !seen[p] {
			seen[p] = true
			copies[key]++
		}
	}
	for ix, t := range v.trees {
		if t != nil {
			t.Scan(func(e Entry) bool { count(fmt.Sprint(ix, ":", e.Key), e.Key); return true })
		}
	}
	v.posts.Scan(func(p posting) bool { count("postings:"+p.label, p.label); return true })
	return copies
}

// Shapes returns the shape of each of s's trees, by index position (the
// zero Shape at IxName), and of its postings last.
func Shapes(s *Set) []cowtree.Shape {
	out := make([]cowtree.Shape, len(s.Trees)+1)
	for ix, t := range s.Trees {
		if t != nil {
			out[ix] = t.Shape()
		}
	}
	if s.Posts != nil {
		out[len(s.Trees)] = s.Posts.Shape()
	}
	return out
}
