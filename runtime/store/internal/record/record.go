// Package record holds the store's Record: an object's JSON plus the keys
// its indexes need. It sits below the store's other packages (the index,
// the planner, the commit path), which all read those keys; runtime/store
// re-exports the type as store.Record. The index fields are exported for
// those packages only: outside runtime/store they are read-only and not
// part of the store's API.
package record

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

// Record is one stored object: its JSON exactly as served, plus what the
// indexes and selectors need, extracted once at write time so that queries
// never decode JSON. A Record is shared by readers and must never be
// modified; writes build a new one.
type Record struct {
	Name    string
	Version int64
	// Data is the object's JSON (metadata.version included). Read-only.
	Data []byte

	// The fields below are the store's own (see the package comment).

	// Rev is the shared backend's revision of this version's write (its
	// etcd mod revision), the precondition of the next write; 0 on the
	// disk backend.
	Rev int64

	// Sec is the record's index keys in one string: the keys section of
	// its log frame, byte for byte (see keys.go for the layout). The
	// functions in keys.go read it in place, so a record's keys cost one
	// allocation and no slice headers (restored, they share the JSON's),
	// and a write logs them without encoding them again. Empty: the
	// record has no keys (restored from a frame without them).
	Sec string
	// keysAt is the offset in Sec of the model's own indexes, 0 until
	// Unpack checked Sec and filled in the fields drawn from it (creAt,
	// Sig: Indexed). A raw record restored with persisted keys gets them
	// filled in place by the build that claims it; only fields a snapshot
	// writer does not read are written. creAt is the offset of the
	// creation key (Creation); the deletion key and the finalizers' flag
	// are read from Sec when asked (Deletion, Pending), which keeps a
	// Record at 112 bytes (TestRecordSize).
	keysAt uint32
	creAt  uint32
	// ID numbers the object densely within its table (kept across its
	// versions), so that a list can hold a candidate set as a bitmap and
	// test index entries against it without touching their records.
	ID uint32
	// Sig is the LabelSig of its labels, copied into every index entry.
	Sig uint32

	// An update that keeps the labels of an object with many index
	// entries (store's rewriteEntries) leaves the entries of the keys it
	// did not change as they are, pointing at an older
	// version of the object, so that it costs the keys that changed, not
	// all of them (reindex). Base is that version (nil: this one); only
	// the committer reads or writes it. On a base, Latest is its newest
	// version and Seq (the batch that applied a version) tells a view
	// whether it holds that version (View.Record). Once a tree is built
	// from records afresh, their entries point at them again (Own).
	Base   *Record
	Latest atomic.Pointer[Record]
	Seq    uint64
}

// Own makes r its own base, as the entries of a tree built from r are.
// It also drops a newest version that a failed batch left behind. (A
// function, not a method: store.Record's method set stays its API.)
func Own(r *Record) {
	r.Base = nil
	r.Latest.Store(nil)
}

// LabelSig folds label keys into 32 bits, one bit per label: an entry
// whose signature lacks the bit of a required label cannot match, so a
// list passes over it without touching its record. Objects carry few
// labels, so most bits stay clear and the test rejects most misses.
func LabelSig(labels []string) uint32 {
	var sig uint32
	for _, l := range labels {
		sig |= LabelBit(l)
	}
	return sig
}

// LabelBit is the signature bit of one model.LabelKey (FNV-1a).
func LabelBit(l string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(l); i++ {
		h = (h ^ uint32(l[i])) * 16777619
	}
	return 1 << (h >> 27)
}

// Created returns the object's creationTimestamp (zero if it has none),
// without decoding its JSON.
func (r *Record) Created() time.Time {
	if t, ok := model.KeyTime(Creation(r)); ok {
		return t
	}
	return time.Time{}
}

// Deleting reports whether the object carries a deletionTimestamp.
func (r *Record) Deleting() bool { return Deletion(r) != "" }

// Get implements selector.Labels over the record's labels.
func (r *Record) Get(key string) (string, bool) {
	// Objects have few labels: a linear scan beats a binary search.
	ls := r.labels()
	for range ls.n {
		l := ls.next()
		if len(l) > len(key)+1 && l[len(key)] == 0 && l[:len(key)] == key {
			return l[len(key)+1 : len(l)-1], true
		}
	}
	return "", false
}

// New extracts the index keys of obj, which must already carry its final
// metadata, and pairs them with a copy of its JSON, data.
//
// The copy and the keys section take their room from Room, as a restored
// record's do (store.rawRecord): data may be part of
// a larger buffer (a request body, an encoder's), which the record would
// otherwise keep alive, whole, for as long as the object is stored; and
// a record written the same way as a restored one fills the holes that
// the restored records it replaces leave in the heap (a second size
// for written records left them empty: 48 MB of 196 in use under ten
// minutes of writes, docs/performance.md). The copy costs a write well
// under a microsecond.
func New(m *model.Model, obj object.Object, data []byte) *Record {
	md := &obj.GetEnvelope().Metadata
	var lbuf [8]string
	labels := lbuf[:0]
	for _, k := range sortedKeys(md.Labels) {
		labels = append(labels, string(model.LabelKey(k, md.Labels[k])))
	}
	var creation, deletion model.Key
	if md.CreationTimestamp != nil {
		creation = model.TimeKey(*md.CreationTimestamp)
	}
	if md.DeletionTimestamp != nil {
		deletion = model.TimeKey(*md.DeletionTimestamp)
	}
	var kbuf [16]model.Key
	keys := kbuf[:0]
	var nbuf [8]int
	counts := nbuf[:0]
	for _, ix := range m.Indexes {
		n := len(keys)
		keys = ix.Keys(obj, keys)
		if ix.Multi && len(keys)-n > 1 {
			slices.Sort(keys[n:])
			keys = keys[:n+len(slices.Compact(keys[n:]))]
		}
		counts = append(counts, len(keys)-n)
	}
	own, sec := Room(len(data), sectionSize(labels, creation, deletion, counts, keys))
	copy(own, data)
	sec = appendSection(sec[:0], m.KeysFingerprint(), labels, creation, deletion, len(md.Finalizers) > 0, counts, keys)
	r := &Record{Name: md.Name, Version: md.GetVersion(), Data: own, Sec: Section(sec)}
	if !Unpack(r) {
		panic("record: a section just built does not parse")
	}
	return r
}

func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
