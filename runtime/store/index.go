package store

import (
	"strings"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/cowtree"
)

// Secondary indexes are copy-on-write B+trees (internal/cowtree) of small
// entries that point at records. go-memdb keeps the objects and their name
// index; its radix trees cost ~450 bytes and several microseconds per
// entry, which a model with nine indexes multiplies by ten, while an entry
// here is 24 bytes in a 64-wide leaf. Copying a tree is O(1) (nodes are
// shared until written), so every commit publishes an immutable view: the
// memdb snapshot and one tree copy per index, swapped in together.

// Index positions, as in model.AllIndexes: the defaults, then the model's
// own from position numDefaultIndexes.
const (
	ixName    = 0 // memdb's id index; no tree
	ixLabels  = 1 // a = model.LabelKey(key, value)
	ixCreated = 2 // a = "": entries differ only by the tie order
	ixDeleted = 3 // a = deletion key; objects not being deleted have none
)

// entry is one index entry: a is the value's key, rec the object. Entries
// with equal keys order by creation desc, then name asc, so walking a tree
// forward yields ties in the list default order. An object with no value
// for a model's own index has one entry with a = "", which sorts before
// every key (keys are never empty).
type entry struct {
	a   string
	rec *Record
	id  uint32 // rec.id, read without dereferencing rec
}

// Pivot records stand before or after every entry with the same key.
var before, after = &Record{}, &Record{}

func pivotRank(r *Record) int {
	switch r {
	case before:
		return -1
	case after:
		return 1
	}
	return 0
}

func compareEntry(x, y entry) int {
	if c := strings.Compare(x.a, y.a); c != 0 {
		return c
	}
	if c := pivotRank(x.rec) - pivotRank(y.rec); c != 0 || x.rec == y.rec {
		return c
	}
	if c := strings.Compare(string(y.rec.created), string(x.rec.created)); c != 0 {
		return c
	}
	return strings.Compare(x.rec.Name, y.rec.Name)
}

type tree = cowtree.Tree[entry]

func newTree() *tree { return cowtree.New(compareEntry) }

// view is what a reader sees of a table: a consistent, immutable state.
type view struct {
	db    *memdb.MemDB // snapshot; objects by name
	trees []*tree      // by index position; nil at ixName
}

// span is a range of keys: [lo, hi) in entry order.
type span struct{ lo, hi entry }

// exact spans the entries whose key is k.
func exact(k string) span { return span{entry{a: k, rec: before}, entry{a: k, rec: after}} }

// prefixSpan spans the entries whose key starts with p (p's last byte is
// below 0xff, as for the label prefixes it serves).
func prefixSpan(p string) span {
	hi := []byte(p)
	hi[len(hi)-1]++
	return span{entry{a: p, rec: before}, entry{a: string(hi), rec: before}}
}

// current returns a view of everything committed so far.
func (st *tableState) current() *view {
	if !st.dirty.Load() {
		return st.view.Load()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.dirty.Load() {
		st.view.Store(&view{db: st.db.Snapshot(), trees: copyTrees(st.work)})
		st.dirty.Store(false)
	}
	return st.view.Load()
}

// rebuildTrees indexes the records of db afresh: after a failed batch the
// committer's trees hold writes that never became durable.
func rebuildTrees(m *model.Model, db *memdb.MemDB) ([]*tree, error) {
	recs, err := allRecords(db)
	if err != nil {
		return nil, err
	}
	trees := make([]*tree, numDefaultIndexes+len(m.Indexes))
	order := defaultOrder(recs)
	for ix := 1; ix < len(trees); ix++ {
		if trees[ix], err = buildTree(m, recs, order, ix); err != nil {
			return nil, err
		}
	}
	return trees, nil
}

// allRecords returns every record of db in name order.
func allRecords(db *memdb.MemDB) ([]*Record, error) {
	it, err := db.Txn(false).Get(tableObjects, indexID+"_prefix", []byte(nil))
	if err != nil {
		return nil, err
	}
	var recs []*Record
	for raw := it.Next(); raw != nil; raw = it.Next() {
		recs = append(recs, raw.(*Record))
	}
	return recs, nil
}

// entries appends rec's entries for index position ix.
func entries(rec *Record, ix int, dst []entry) []entry {
	switch ix {
	case ixName:
		return dst
	case ixLabels:
		for _, l := range rec.labels {
			dst = append(dst, entry{l, rec, rec.id})
		}
		return dst
	case ixCreated:
		return append(dst, entry{rec: rec, id: rec.id})
	case ixDeleted:
		if rec.deletion != "" {
			dst = append(dst, entry{string(rec.deletion), rec, rec.id})
		}
		return dst
	}
	ks := rec.keys[ix-numDefaultIndexes]
	if len(ks) == 0 {
		return append(dst, entry{rec: rec, id: rec.id})
	}
	for _, k := range ks {
		dst = append(dst, entry{string(k), rec, rec.id})
	}
	return dst
}

// indexRecord adds rec to every tree, replacing old (nil for a create).
func indexRecord(trees []*tree, old, rec *Record) {
	var buf [8]entry
	for ix := 1; ix < len(trees); ix++ {
		t := trees[ix]
		if old != nil {
			for _, e := range entries(old, ix, buf[:0]) {
				t.Delete(e)
			}
		}
		for _, e := range entries(rec, ix, buf[:0]) {
			t.Set(e)
		}
	}
}

// unindexRecord removes old from every tree.
func unindexRecord(trees []*tree, old *Record) {
	var buf [8]entry
	for ix := 1; ix < len(trees); ix++ {
		for _, e := range entries(old, ix, buf[:0]) {
			trees[ix].Delete(e)
		}
	}
}

// count counts the entries in s without visiting them.
func (s span) count(t *tree) int { return t.Rank(s.hi) - t.Rank(s.lo) }

// ascend calls fn for the entries in s, in order, until fn returns false.
// It reports whether fn asked to go on.
func (s span) ascend(t *tree, fn func(entry) bool) bool {
	more := true
	t.Ascend(s.lo, func(e entry) bool {
		if compareEntry(e, s.hi) >= 0 {
			return false
		}
		more = fn(e)
		return more
	})
	return more
}

// ascendCounted is ascend for a span that will likely be walked whole:
// it counts the span first (two O(log n) descents) and then needs no
// comparison per entry.
func (s span) ascendCounted(t *tree, fn func(entry) bool) bool {
	n, more := s.count(t), true
	if n == 0 {
		return true
	}
	t.Ascend(s.lo, func(e entry) bool {
		more = fn(e)
		n--
		return more && n > 0
	})
	return more
}

// copyTrees returns O(1) copies that later writes to trees do not affect.
func copyTrees(trees []*tree) []*tree {
	out := make([]*tree, len(trees))
	for i, t := range trees {
		if t != nil {
			out[i] = t.Copy()
		}
	}
	return out
}
