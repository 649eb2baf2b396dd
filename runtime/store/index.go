package store

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/record"
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
	ixCreated = 2 // a = "": entries differ only by the tie order (keySpan)
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
	// tie and id are read from rec once, so that comparing and filtering
	// entries does not touch their records (a cache miss each).
	tie uint64 // tieKey(rec.created)
	id  uint32 // rec.id
	sig uint32 // rec.sig
}

// newEntry returns rec's entry under key a.
func newEntry(a string, rec *Record) entry { return metaOf(rec).entry(a, rec) }

// tieKey packs a creation key into 64 bits that order ascending as the
// times order descending: the seconds since 1970 (34 bits, clamped) and
// the nanoseconds. Clamping keeps the order, but not strictly, so equal
// tie keys fall back to comparing the creation keys; a record with no
// creation time gets the largest key (it sorts last).
func tieKey(created model.Key) uint64 {
	if len(created) != 12 {
		return math.MaxUint64
	}
	sec := binary.BigEndian.Uint64([]byte(created[:8])) ^ (1 << 63) // as int64 bits
	ns := uint64(binary.BigEndian.Uint32([]byte(created[8:])))
	switch {
	case int64(sec) < 0:
		sec, ns = 0, 0
	case sec >= 1<<34:
		sec, ns = 1<<34-1, 1<<30-1
	}
	return ^(sec<<30 | ns&(1<<30-1))
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
	if x.tie != y.tie {
		return cmp.Compare(x.tie, y.tie)
	}
	if c := strings.Compare(string(y.rec.Creation), string(x.rec.Creation)); c != 0 {
		return c
	}
	return strings.Compare(x.rec.Name, y.rec.Name)
}

type tree = cowtree.Tree[entry]

// keyed is an item of a tree whose key string equal items share: index
// entries and label postings.
type keyed[T any] interface {
	key() string
	withKey(string) T
}

func (e entry) key() string                { return e.a }
func (e entry) withKey(a string) entry     { e.a = a; return e }
func (p posting) key() string              { return p.label }
func (p posting) withKey(l string) posting { p.label = l; return p }

// sharing makes t's inserts reuse an equal neighbour's key string, so that
// the items of one key point at one copy of it. Comparing keys would
// otherwise read each item's own copy, somewhere in its record's
// allocation: a cache miss per comparison, most of an insert's cost.
func sharing[T keyed[T]](t *cowtree.Tree[T]) *cowtree.Tree[T] {
	t.Share(func(it, nb T) (T, bool) {
		if it.key() != nb.key() {
			return it, false
		}
		return it.withKey(nb.key()), true
	})
	return t
}

// entrySig summarises entries by their label signatures, so that a list
// with label terms passes over whole nodes of entries that cannot match.
func entrySig(e entry) uint32 { return e.sig }

// view is what a reader sees of a table: a consistent, immutable state.
type view struct {
	db    *memdb.MemDB // snapshot; objects by name
	trees []*tree      // by index position; nil at ixName and where not in has
	posts *postings    // label postings (postings.go); nil unless has postsBit
	seq   uint64       // the last batch it holds
	has   uint64       // the trees and postings copied (see treeBit)
}

// A view copies only the trees that readers use (the table's hot set):
// once a tree is copied, the next writes copy every node of it they
// touch, which for a tree no query reads is pure cost. Every tree starts
// hot; one that no reader asked for over a cooling period is dropped, and
// the next reader that needs it adds it back and waits for the next view
// (at most two fsyncs). Sets of trees are masks: bit treeBit(ix) for the
// tree at index position ix, postsBit for the postings.
const postsBit = 1 << 63

// cooling is how long a tree stays hot without a reader (Options.cooling).
const cooling = 10 * time.Second

// treeBit is ix's bit; positions past 62 (a model with that many indexes)
// share one.
func treeBit(ix int) uint64 { return 1 << min(ix, 62) }

// copyView returns an immutable copy of st's applied state as of batch
// seq, with the trees in the hot set. Called with st.mu held.
func (st *tableState) copyView(seq uint64) *view {
	if now := time.Now(); now.Sub(st.cooled) >= st.cooling {
		// Keep what readers asked for since the last cooling.
		st.hot.Store(st.asked.Swap(0))
		st.cooled = now
	}
	hot := st.hot.Load()
	v := &view{db: st.db.Snapshot(), trees: make([]*tree, len(st.work)), seq: seq, has: hot}
	for ix, t := range st.work {
		if t != nil && hot&treeBit(ix) != 0 {
			v.trees[ix] = t.Copy()
		}
	}
	if st.posts != nil && hot&postsBit != 0 {
		v.posts = st.posts.Copy()
	}
	return v
}

// setWork makes trees the committer's indexes, with the postings of their
// labels index. Called with st.mu held (or before st is shared).
func (st *tableState) setWork(trees []*tree) {
	st.work, st.posts = trees, buildPostings(trees[ixLabels])
}

// record returns the version of e's object that v holds. e may point at
// an older version (see Record.base): then the base's newest version is
// it if v holds that, else v's own table says (a reader of an old view
// racing an update, rare).
func (v *view) record(e entry) *Record {
	r := e.rec
	l := r.Latest.Load()
	if l == nil {
		return r
	}
	if l.Seq <= v.seq {
		return l
	}
	if raw, err := v.db.Txn(false).First(tableObjects, indexID, r.Name); err == nil && raw != nil {
		return raw.(*Record)
	}
	return r // unreachable: v's trees and objects agree
}

// span is a range of keys: [lo, hi) in entry order.
type span struct{ lo, hi entry }

// exact spans the entries whose key is k.
func exact(k string) span { return span{entry{a: k, rec: before}, entry{a: k, rec: after}} }

// keySpan spans the entries of index position ix whose key is k. The
// creation tree keys every entry "" and orders it by creation time (the
// tie order), so there the span runs from the first entry created at k to
// the first created one nanosecond earlier.
func keySpan(ix int, k model.Key) span {
	t, ok := model.KeyTime(k)
	if ix != ixCreated || !ok {
		return exact(string(k))
	}
	return span{createdPivot(k), createdPivot(model.TimeKey(t.Add(-time.Nanosecond)))}
}

// createdPivot stands before every creation-tree entry created at k: it
// ties with them on the creation time and has the smallest name.
func createdPivot(k model.Key) entry {
	return entry{rec: &Record{Creation: k}, tie: tieKey(k)}
}

// prefixSpan spans the entries whose key starts with p (p's last byte is
// below 0xff, as for the label prefixes it serves).
func prefixSpan(p string) span {
	hi := []byte(p)
	hi[len(hi)-1]++
	return span{entry{a: p, rec: before}, entry{a: string(hi), rec: before}}
}

// current returns a view of every durable write, with at least the trees
// in need: at least every write acknowledged before the call, and none
// that is not yet durable.
func (st *tableState) current(need uint64) *view {
	for {
		wake := st.published.wait()
		v := st.view.Load()
		if st.asked.Load()&need != need {
			st.asked.Or(need)
		}
		if v.seq >= st.durable.Load() && v.has&need == need {
			return v
		}
		if st.hot.Load()&need != need {
			st.hot.Or(need) // from now on views copy them
		}
		// The committer holds mu while it has a batch open on the table.
		if st.mu.TryLock() {
			if st.applied == st.durable.Load() {
				// Nothing beyond the log is applied: copy the state as it is.
				v = st.copyView(st.applied)
				st.mu.Unlock()
				st.offerView(v)
				// Readers that found mu taken by this one wait for a
				// signal; on an idle table no write would ever send it.
				st.published.broadcast()
				if v.has&need == need { // else hot cooled just now
					return v
				}
				continue
			}
			st.mu.Unlock()
		}
		// The committer is ahead of the log; it copies what it applied
		// when it hands its open (or next) batch to the syncer, which
		// publishes it once that is durable. Waiting costs at most two
		// fsyncs.
		st.wantView.Store(true)
		<-wake
	}
}

// offerView makes v the table's view unless a newer one is there, or one
// as new with every tree v has.
func (st *tableState) offerView(v *view) {
	for {
		cur := st.view.Load()
		if cur.seq > v.seq || cur.seq == v.seq && v.has&^cur.has == 0 {
			return
		}
		if st.view.CompareAndSwap(cur, v) {
			return
		}
	}
}

// rebuildTrees indexes the records of db afresh: after a failed batch the
// committer's trees hold writes that never became durable.
func rebuildTrees(m *model.Model, db *memdb.MemDB) ([]*tree, error) {
	recs, err := allRecords(db)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		record.Own(r)
	}
	trees := make([]*tree, numDefaultIndexes+len(m.Indexes))
	order, metas := defaultOrder(recs), metasOf(recs)
	sc := new(scratch)
	for ix := 1; ix < len(trees); ix++ {
		if trees[ix], err = buildTree(m, recs, order, metas, ix, sc); err != nil {
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
	var buf [8]string
	for _, k := range entryKeys(rec, ix, buf[:0]) {
		dst = append(dst, newEntry(k, rec))
	}
	return dst
}

// entryKeys appends the keys of rec's entries for index position ix.
func entryKeys(rec *Record, ix int, dst []string) []string {
	switch ix {
	case ixName:
		return dst
	case ixLabels:
		return append(dst, rec.Labels...)
	case ixCreated:
		return append(dst, "")
	case ixDeleted:
		if rec.Deletion != "" {
			dst = append(dst, string(rec.Deletion))
		}
		return dst
	}
	ks := rec.Keys[ix-numDefaultIndexes]
	if len(ks) == 0 {
		return append(dst, "")
	}
	for _, k := range ks {
		dst = append(dst, string(k))
	}
	return dst
}

// reindex moves rec into st's trees in place of old (nil for a create;
// rec nil removes old): the unique trees if unique is set, else the
// others. It walks the old and new keys of each index together (both
// sorted) and touches only the keys that changed: an update of one field
// of an object with 100,000 tag keys costs its few changed keys, not a
// write of every entry. The entries of kept keys go on pointing at
// rec.base when put set one; otherwise (labels changed: every entry
// carries their signature) they are replaced in place to point at rec.
func (st *tableState) reindex(old, rec *Record, unique bool) {
	if old != nil && rec != nil && (old.Name != rec.Name || old.Creation != rec.Creation) {
		// Another object's entries: not one key is shared.
		st.reindex(old, nil, unique)
		st.reindex(nil, rec, unique)
		return
	}
	ptr, rewrite := rec, true
	if rec != nil && rec.Base != nil {
		ptr, rewrite = rec.Base, false
	}
	var obuf, nbuf [8]string
	for ix := 1; ix < len(st.work); ix++ {
		if st.uniqueAt(ix) != unique {
			continue
		}
		t := st.work[ix]
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
				st.entryWrites++
				was = was[1:]
			case len(was) == 0 || is[0] < was[0]:
				t.Set(newEntry(is[0], ptr))
				st.entryWrites++
				is = is[1:]
			default: // kept
				if rewrite {
					t.Set(newEntry(is[0], ptr)) // replaces the entry in place
					st.entryWrites++
				}
				was, is = was[1:], is[1:]
			}
		}
	}
}

// sortedSet returns ks sorted without duplicates, in place. Keys come
// sorted (labels, multi-valued indexes) or one per object, so this only
// checks, but the walk in reindex depends on it.
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
func (st *tableState) uniqueAt(ix int) bool {
	return ix >= numDefaultIndexes && st.model.Indexes[ix-numDefaultIndexes].Unique
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
// comparison per entry. Entries in nodes skip rejects (nil: none) are
// passed over unseen.
func (s span) ascendCounted(t *tree, skip func(sig uint32) bool, fn func(entry) bool) bool {
	return s.walkCounted(t, skip, false, fn)
}

// descendCounted is ascendCounted walking s from its end down.
func (s span) descendCounted(t *tree, skip func(sig uint32) bool, fn func(entry) bool) bool {
	return s.walkCounted(t, skip, true, fn)
}

func (s span) walkCounted(t *tree, skip func(sig uint32) bool, down bool, fn func(entry) bool) bool {
	n, more := s.count(t), true
	if n == 0 {
		return true
	}
	var f *cowtree.Filter[entry]
	if skip != nil {
		// A node passed over may reach beyond the span: then nothing is
		// left to see.
		f = &cowtree.Filter[entry]{Skip: skip, Passed: func(k int) bool {
			n -= k
			return n > 0
		}}
	}
	visit := func(e entry) bool {
		more = fn(e)
		n--
		return more && n > 0
	}
	if down {
		// No entry equals a pivot: the walk starts below s.hi.
		t.DescendFiltered(s.hi, f, visit)
	} else {
		t.AscendFiltered(s.lo, f, visit)
	}
	return more
}
