package index

import (
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Set is a table's writable indexes, the committer's: one tree per index
// position (nil at IxName) and the label postings.
type Set struct {
	Trees  []*Tree
	Posts  *Postings
	Writes uint64 // index entries written (set or deleted), for tests
}

// Replace makes trees s's, with postings built from their labels index;
// Writes goes on counting.
func (s *Set) Replace(trees []*Tree) { s.Trees, s.Posts = trees, BuildPostings(trees[IxLabels]) }

// View returns an immutable copy of s's trees in has (and of its
// postings if has holds PostsBit), with db, a memdb snapshot, as of batch
// seq.
func (s *Set) View(db *memdb.MemDB, seq, has uint64) *View {
	v := &View{db: db, trees: make([]*Tree, len(s.Trees)), Seq: seq, Has: has, Objects: s.Trees[IxCreated].Len()}
	for ix, t := range s.Trees {
		if t != nil && has&TreeBit(ix) != 0 {
			v.trees[ix] = t.Copy()
		}
	}
	if s.Posts != nil && has&PostsBit != 0 {
		v.posts = s.Posts.Copy()
	}
	return v
}

// Post moves rec's id in the label postings from old's labels to rec's
// (see postRecord).
func (s *Set) Post(old, rec *record.Record) { postRecord(s.Posts, old, rec) }

// Reindex moves rec into s's trees in place of old (nil for a create;
// rec nil removes old): the unique trees if unique is set, else the
// others. It walks the old and new keys of each index together (both
// sorted) and touches only the keys that changed: an update of one field
// of an object with 100,000 tag keys costs its few changed keys, not a
// write of every entry. The entries of kept keys go on pointing at
// rec.Base when the store set one; otherwise (labels changed: every entry
// carries their signature) they are replaced in place to point at rec.
func (s *Set) Reindex(m *model.Model, old, rec *record.Record, unique bool) {
	if old != nil && rec != nil && (old.Name != rec.Name || record.Creation(old) != record.Creation(rec)) {
		// Another object's entries: not one key is shared.
		s.Reindex(m, old, nil, unique)
		s.Reindex(m, nil, rec, unique)
		return
	}
	ptr, rewrite := rec, true
	if rec != nil && rec.Base != nil {
		ptr, rewrite = rec.Base, false
	}
	var obuf, nbuf [8]string
	for ix := 1; ix < len(s.Trees); ix++ {
		if uniqueAt(m, ix) != unique {
			continue
		}
		t := s.Trees[ix]
		var was, is []string
		if old != nil {
			was = sortedSet(entryKeys(old, ix, obuf[:0]))
		}
		if rec != nil {
			is = sortedSet(entryKeys(rec, ix, nbuf[:0]))
		}
		for len(was) > 0 || len(is) > 0 {
			switch {
			case len(is) == 0 || len(was) > 0 && was[0] < is[0]:
				t.Delete(newEntry(was[0], old)) // entries compare by key and object, not version
				s.Writes++
				was = was[1:]
			case len(was) == 0 || is[0] < was[0]:
				k := is[0]
				if ptr != rec {
					k = strings.Clone(k) // a piece of rec, not of rec.Base: see sharing
				}
				t.Set(newEntry(k, ptr))
				s.Writes++
				is = is[1:]
			default: // kept
				if rewrite {
					t.Set(newEntry(is[0], ptr)) // replaces the entry in place
					s.Writes++
				}
				was, is = was[1:], is[1:]
			}
		}
	}
}

// sortedSet returns ks sorted without duplicates, in place. Keys come
// sorted (labels, multi-valued indexes) or one per object, so this only
// checks, but the walk in Reindex depends on it.
func sortedSet(ks []string) []string {
	if len(ks) < 2 {
		return ks
	}
	if !slices.IsSorted(ks) {
		slices.Sort(ks)
	}
	return slices.Compact(ks)
}

// uniqueAt reports whether the tree at index position ix is a unique
// index's (names are unique through memdb, which has no tree).
func uniqueAt(m *model.Model, ix int) bool {
	return ix >= NumDefault && m.Indexes[ix-NumDefault].Unique
}

// entryKeys appends the keys of rec's entries for index position ix.
func entryKeys(rec *record.Record, ix int, dst []string) []string {
	switch ix {
	case IxName:
		return dst
	case IxLabels:
		return record.AppendLabels(rec, dst)
	case IxCreated:
		return append(dst, "")
	case IxDeleted:
		if d := record.Deletion(rec); d != "" {
			dst = append(dst, string(d))
		}
		return dst
	}
	n := len(dst)
	if dst = record.AppendKeys(rec, ix-NumDefault, dst); len(dst) == n {
		return append(dst, "")
	}
	return dst
}

// Entries returns how many index entries rec has (what entryKeys gives
// over every index), counting up to just past limit.
func Entries(rec *record.Record, limit int) int {
	n := record.NumLabels(rec) + 1 // the creation entry
	if rec.Deleting() {
		n++
	}
	for i := range record.NumIndexes(rec) {
		if n > limit {
			break
		}
		n += max(record.NumKeys(rec, i), 1) // an object without a value has the "" entry
	}
	return n
}

// Rebuild indexes the records of db afresh: after a failed batch the
// committer's trees hold writes that never became durable.
func Rebuild(m *model.Model, db *memdb.MemDB) ([]*Tree, error) {
	recs, err := AllRecords(db)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		record.Own(r)
	}
	trees := make([]*Tree, NumDefault+len(m.Indexes))
	order, metas := DefaultOrder(recs), MetasOf(recs)
	sc := new(Scratch)
	for ix := 1; ix < len(trees); ix++ {
		if trees[ix], err = BuildTree(m, recs, order, metas, ix, sc); err != nil {
			return nil, err
		}
	}
	return trees, nil
}
