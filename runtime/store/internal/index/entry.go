// Package index holds the store's secondary indexes: per model, one
// copy-on-write B+tree (internal/cowtree) of small entries per index
// position, label postings (a bitmap of object ids per label value), and
// the immutable views readers get of them. It also builds them in bulk
// and keeps them current write by write (Set.Reindex). It knows models
// and records, not queries (internal/plan) or durability (runtime/store).
//
// The trees hold small entries that point at records. go-memdb keeps the
// objects and their name index (schema.go); its radix trees cost ~450
// bytes and several microseconds per entry, which a model with nine
// indexes multiplies by ten, while an entry here is 24 bytes in a 64-wide
// leaf. Copying a tree is O(1) (nodes are
// shared until written), so every commit publishes an immutable view: the
// memdb snapshot and one tree copy per index, swapped in together.
package index

import (
	"cmp"
	"encoding/binary"
	"math"
	"strings"
	"unsafe"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/cowtree"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Index positions, as in model.AllIndexes: the defaults, then the model's
// own from position NumDefault.
const (
	IxName    = 0 // memdb's id index (schema.go); no tree
	IxLabels  = 1 // Key = model.LabelKey(key, value)
	IxCreated = 2 // Key = "": entries differ only by the tie order (KeySpan)
	IxDeleted = 3 // Key = deletion key; objects not being deleted have none
)

// Entry is one index entry: Key is the value's key, Rec the object. Entries
// with equal keys order by creation desc, then name asc, so walking a tree
// forward yields ties in the list default order. An object with no value
// for a model's own index has one entry with Key "", which sorts before
// every key (keys are never empty).
type Entry struct {
	Key string
	Rec *record.Record
	// Tie, ID and Sig are read from Rec once, so that comparing and
	// filtering entries does not touch their records (a cache miss each).
	Tie uint64 // TieKey(Rec.Creation)
	ID  uint32 // Rec.ID
	Sig uint32 // Rec.Sig
}

// newEntry returns rec's entry under key a.
func newEntry(a string, rec *record.Record) Entry { return metaOf(rec).entry(a, rec) }

// TieKey packs a creation key into 64 bits that order ascending as the
// times order descending: the seconds since 1970 (34 bits, clamped) and
// the nanoseconds. Clamping keeps the order, but not strictly, so equal
// tie keys fall back to comparing the creation keys; a record with no
// creation time gets the largest key (it sorts last).
func TieKey(created model.Key) uint64 {
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
var before, after = &record.Record{}, &record.Record{}

func pivotRank(r *record.Record) int {
	switch r {
	case before:
		return -1
	case after:
		return 1
	}
	return 0
}

// Compare orders entries: by key, then in the tie order (creation desc,
// name asc); pivots stand before or after their key's entries.
func Compare(x, y Entry) int {
	if c := strings.Compare(x.Key, y.Key); c != 0 {
		return c
	}
	if c := pivotRank(x.Rec) - pivotRank(y.Rec); c != 0 || x.Rec == y.Rec {
		return c
	}
	if x.Tie != y.Tie {
		return cmp.Compare(x.Tie, y.Tie)
	}
	if c := strings.Compare(string(record.Creation(y.Rec)), string(record.Creation(x.Rec))); c != 0 {
		return c
	}
	return strings.Compare(x.Rec.Name, y.Rec.Name)
}

// Tree is one index's tree of entries.
type Tree = cowtree.Tree[Entry]

// keyed is an item of a tree whose key string equal items share: index
// entries and label postings.
type keyed[T any] interface {
	sharedKey() string
	withKey(string) T
	// ownsKey reports whether the key is a piece of the item's own
	// record (which it keeps alive anyway), not a copy of its own.
	ownsKey() bool
}

func (e Entry) sharedKey() string          { return e.Key }
func (e Entry) withKey(a string) Entry     { e.Key = a; return e }
func (p posting) sharedKey() string        { return p.label }
func (p posting) withKey(l string) posting { p.label = l; return p }

// ownsKey: an entry's key is read out of its record's keys section (see
// record.AppendKeys) until sharing gives it a copy of its own.
func (e Entry) ownsKey() bool {
	sec := unsafe.StringData(e.Rec.Sec)
	k := unsafe.StringData(e.Key)
	return uintptr(unsafe.Pointer(k))-uintptr(unsafe.Pointer(sec)) < uintptr(len(e.Rec.Sec))
}

// ownsKey: a posting's label is always a copy (post, BuildPostings).
func (posting) ownsKey() bool { return false }

// sharing makes t's inserts reuse an equal neighbour's key string, so that
// the items of one key point at one copy of it. Comparing keys would
// otherwise read each item's own copy, somewhere in its record's
// allocation: a cache miss per comparison, most of an insert's cost.
//
// The shared copy is never a piece of a record: it would keep that
// record's allocation (for a restored record, its JSON too) alive for as
// long as any entry of the key lived, long after the record was replaced
// or deleted. The first insert beside an entry still on its own key
// gives both a copy.
func sharing[T keyed[T]](t *cowtree.Tree[T]) *cowtree.Tree[T] {
	t.Share(func(it T, nb *T) (T, bool) {
		k := (*nb).sharedKey()
		if it.sharedKey() != k {
			return it, false
		}
		switch {
		case k == "":
			k = "" // an empty piece of a record still points into it
		case (*nb).ownsKey():
			k = strings.Clone(k)
			*nb = (*nb).withKey(k)
		}
		return it.withKey(k), true
	})
	return t
}

// detached returns e as a separator that outlives e's record (see
// cowtree.Detach): it orders as e, and points at a stand-in that holds
// only what Compare reads, the name and the creation key, not the
// record's JSON.
func detached(e Entry) Entry {
	if e.ownsKey() {
		e.Key = strings.Clone(e.Key)
	}
	r := &record.Record{Name: e.Rec.Name}
	record.SetKeys(r, 0, nil, record.Creation(e.Rec), "", false, nil)
	e.Rec = r
	return e
}

// entrySig summarises entries by their label signatures, so that a list
// with label terms passes over whole nodes of entries that cannot match.
func entrySig(e Entry) uint32 { return e.Sig }
