package index

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Building an index from scratch (at registration, or after a failed batch)
// sorts its entries and bulk-loads them into a tree; at a million objects
// that is most of a start. The sort avoids comparing records: they are
// ranked once in the default list order, which is the tie order of every
// index, and each index's entries are gathered in that rank order, so they
// need only a stable sort by key. Keys with few distinct values (labels,
// enums, small numbers) take a counting sort; the others sort on the eight
// bytes after the keys' common prefix, which rarely needs the strings.

// maxCounted is the most distinct keys an index may have for a counting
// sort; past it, gathering ids costs more than sorting.
const maxCounted = 1 << 12

// DefaultOrder returns the positions of recs, which are in name order, in
// the default list order: creation desc, then name asc.
func DefaultOrder(recs []*record.Record) []int32 {
	// Ascending (hi, lo) is the wanted order: hi and lo's top half are the
	// complemented creation seconds and nanoseconds (a record with no
	// creation time sorts last), lo's bottom half the name position.
	type item struct{ hi, lo uint64 }
	items := make([]item, len(recs))
	for i, r := range recs {
		var sec, ns uint64
		if c := record.Creation(r); len(c) == 12 {
			sec = binary.BigEndian.Uint64([]byte(c[:8]))
			ns = uint64(binary.BigEndian.Uint32([]byte(c[8:])))<<1 | 1
		}
		items[i] = item{^sec, (^ns)<<32 | uint64(i)}
	}
	slices.SortFunc(items, func(x, y item) int {
		if x.hi != y.hi {
			return cmp.Compare(x.hi, y.hi)
		}
		return cmp.Compare(x.lo, y.lo)
	})
	order := make([]int32, len(items))
	for i, it := range items {
		order[i] = int32(uint32(it.lo))
	}
	return order
}

// RowMeta is what every entry of a record copies from it besides its key.
// A build reads it once per record for all indexes: reading it through the
// record costs a cache miss or two per entry, with entries in key order
// and records all over the heap.
type RowMeta struct {
	tie     uint64
	id, sig uint32
}

func metaOf(r *record.Record) RowMeta {
	return RowMeta{tie: TieKey(record.Creation(r)), id: r.ID, sig: r.Sig}
}

// entry returns the entry under key a of the record md was read from.
func (md RowMeta) entry(a string, rec *record.Record) Entry {
	return Entry{Key: a, Rec: rec, Tie: md.tie, ID: md.id, Sig: md.sig}
}

// MetasOf returns the RowMeta of each of recs.
func MetasOf(recs []*record.Record) []RowMeta {
	metas := make([]RowMeta, len(recs))
	for i, r := range recs {
		metas[i] = metaOf(r)
	}
	return metas
}

// Scratch is a build worker's temporary arrays, reused from one index to
// the next. At a million objects an index needs some 40 MB of them, and
// memory fresh from the kernel costs a page fault per 4 KiB on first
// touch: first touches were a third of a 1M build's CPU.
type Scratch struct {
	keys  []string
	owner []int32
	perm  []int32
	ids   []int32
	items []prefixItem
}

// sized returns s emptied, with room for n elements.
func sized[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, 0, n)
	}
	return s[:0]
}

// DupError is two objects under one key of a unique index; the store
// reports it as a *store.UniqueError.
type DupError struct {
	Index  int // in m.Indexes
	Key    model.Key
	Holder string // the smaller of the two names
}

func (e *DupError) Error() string {
	return fmt.Sprintf("unique index %d: key %q is held twice, by %q and another", e.Index, e.Key, e.Holder)
}

// BuildTree builds the tree of index position ix over recs (in name order,
// ranked by order, with metas), with sc's arrays; a unique index with two
// objects under one key fails.
func BuildTree(m *model.Model, recs []*record.Record, order []int32, metas []RowMeta, ix int, sc *Scratch) (*Tree, error) {
	var buf [8]string
	// Entry j has key keys[j] and belongs to recs[owner[j]]. The scratch
	// grows to the largest tree's entries once; reading every record's
	// keys twice to size it costs more.
	keys := sc.keys[:0]
	owner := sc.owner[:0]
	for _, i := range order {
		for _, k := range entryKeys(recs[i], ix, buf[:0]) {
			keys = append(keys, k)
			owner = append(owner, i)
		}
	}
	sc.keys, sc.owner = keys, owner
	defer clear(keys) // the scratch outlives this tree; its keys need not
	perm := sc.sortKeys(keys)
	if u := ix - NumDefault; u >= 0 && m.Indexes[u].Unique {
		for p := 1; p < len(perm); p++ {
			j, k := perm[p], perm[p-1]
			if keys[j] != "" && keys[j] == keys[k] && owner[j] != owner[k] {
				holder := min(recs[owner[j]].Name, recs[owner[k]].Name)
				return nil, &DupError{Index: u, Key: model.Key(keys[j]), Holder: holder}
			}
		}
	}
	t := sharing(cowtree.BuildSummarized(Compare, entrySig, len(perm), func(i int) Entry {
		j := perm[i]
		o := owner[j]
		return metas[o].entry(keys[j], recs[o])
	}))
	t.Detach(detached)
	return t, nil
}

// sortKeys returns the positions of keys in ascending key order, equal
// keys in position order, in one of sc's arrays. Keys with few distinct
// values are made to share one string per value (see sharing).
func (sc *Scratch) sortKeys(keys []string) []int32 {
	if perm, ok := sc.countingSort(keys); ok {
		return perm
	}
	return sc.prefixSort(keys)
}

// countingSort sorts keys by their distinct values, or reports false when
// there are more than maxCounted of them. Equal keys end up sharing a copy
// of their value.
func (sc *Scratch) countingSort(keys []string) ([]int32, bool) {
	ids := make(map[string]int32)
	var distinct []string
	id := sized(sc.ids, len(keys))[:len(keys)]
	sc.ids = id
	for j, k := range keys {
		d, ok := ids[k]
		if !ok {
			if len(distinct) == maxCounted {
				return nil, false
			}
			d = int32(len(distinct))
			ids[k] = d
			distinct = append(distinct, strings.Clone(k)) // not a piece of a record: see sharing
		}
		id[j] = d
	}
	count := make([]int32, len(distinct))
	for _, d := range id {
		count[d]++
	}
	ranked := make([]int32, len(distinct))
	for d := range ranked {
		ranked[d] = int32(d)
	}
	slices.SortFunc(ranked, func(a, b int32) int { return strings.Compare(distinct[a], distinct[b]) })
	next := make([]int32, len(distinct)) // where the next entry of each id goes
	at := int32(0)
	for _, d := range ranked {
		next[d] = at
		at += count[d]
	}
	perm := sized(sc.perm, len(keys))[:len(keys)]
	sc.perm = perm
	for j, d := range id {
		perm[next[d]] = int32(j)
		next[d]++
		keys[j] = distinct[d]
	}
	return perm, true
}

// prefixItem is a key's position j and the eight bytes after the keys'
// common prefix (zero-padded).
type prefixItem struct {
	p uint64
	j int32
}

// prefixSort sorts keys on the eight bytes that follow their common
// prefix, falling back to the strings only where those bytes tie; the
// result is one of sc's arrays.
func (sc *Scratch) prefixSort(keys []string) []int32 {
	lcp := -1
	var first string
	for _, k := range keys {
		switch {
		case k == "":
		case lcp < 0:
			first, lcp = k, len(k)
		default:
			l := 0
			for l < lcp && l < len(k) && k[l] == first[l] {
				l++
			}
			lcp = l
		}
	}
	lcp = max(lcp, 0)
	items := sized(sc.items, len(keys))[:len(keys)]
	sc.items = items
	for j, k := range keys {
		var b [8]byte
		if len(k) > lcp {
			copy(b[:], k[lcp:])
		}
		items[j] = prefixItem{binary.BigEndian.Uint64(b[:]), int32(j)}
	}
	long := lcp + 8
	slices.SortFunc(items, func(x, y prefixItem) int {
		if x.p != y.p {
			return cmp.Compare(x.p, y.p)
		}
		kx, ky := keys[x.j], keys[y.j]
		var c int
		if len(kx) > long || len(ky) > long {
			c = strings.Compare(kx, ky)
		} else {
			// Equal padded bytes after a shared prefix (or an empty key):
			// the shorter key is the smaller.
			c = cmp.Compare(len(kx), len(ky))
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(x.j, y.j)
	})
	perm := sized(sc.perm, len(items))[:len(items)]
	sc.perm = perm
	for i, it := range items {
		perm[i] = it.j
	}
	return perm
}
