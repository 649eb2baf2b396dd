package store

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
	// rev is the shared backend's revision of this version's write (its
	// etcd mod revision), the precondition of the next write; 0 on the
	// disk backend.
	rev int64
	// Data is the object's JSON (metadata.version included). Read-only.
	Data []byte

	labels   []string // model.LabelKey(key, value), sorted
	created  model.Key
	deletion model.Key // empty while the object is not being deleted
	keys     [][]model.Key
	// fp is the model.KeysFingerprint the keys were computed under (0:
	// none). A raw record restored from disk keeps its persisted keys in
	// blob until a model with the same fingerprint claims them.
	fp   uint64
	blob []byte
	// indexed: the index fields above are filled in. A raw record restored
	// with persisted keys gets them filled in place by the build that
	// claims it; only fields a snapshot writer does not read are written.
	indexed bool
	pending bool // has finalizers
	// id numbers the object densely within its table (kept across its
	// versions), so that a list can hold a candidate set as a bitmap and
	// test index entries against it without touching their records.
	id uint32
	// sig is labelSig(labels), copied into every index entry.
	sig uint32

	// An update that keeps the object's labels leaves the index entries
	// of the keys it did not change as they are, pointing at an older
	// version of the object, so that it costs the keys that changed, not
	// all of them (reindex). base is that version (nil: this one); only
	// the committer reads or writes it. On a base, latest is its newest
	// version and seq (the batch that applied a version) tells a view
	// whether it holds that version (view.record). Once a tree is built
	// from records afresh, their entries point at them again (own).
	base   *Record
	latest atomic.Pointer[Record]
	seq    uint64
}

// own makes r its own base, as the entries of a tree built from r are.
// It also drops a newest version that a failed batch left behind.
func (r *Record) own() {
	r.base = nil
	r.latest.Store(nil)
}

// labelSig folds label keys into 32 bits, one bit per label: an entry
// whose signature lacks the bit of a required label cannot match, so a
// list passes over it without touching its record. Objects carry few
// labels, so most bits stay clear and the test rejects most misses.
func labelSig(labels []string) uint32 {
	var sig uint32
	for _, l := range labels {
		sig |= labelBit(l)
	}
	return sig
}

// labelBit is the signature bit of one model.LabelKey (FNV-1a).
func labelBit(l string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(l); i++ {
		h = (h ^ uint32(l[i])) * 16777619
	}
	return 1 << (h >> 27)
}

// Created returns the object's creationTimestamp (zero if it has none),
// without decoding its JSON.
func (r *Record) Created() time.Time {
	if t := timeOf(r.created); t != nil {
		return *t
	}
	return time.Time{}
}

// Deleting reports whether the object carries a deletionTimestamp.
func (r *Record) Deleting() bool { return r.deletion != "" }

// Get implements selector.Labels over the record's labels.
func (r *Record) Get(key string) (string, bool) {
	// Objects have few labels: a linear scan beats a binary search.
	for _, l := range r.labels {
		if len(l) > len(key)+1 && l[len(key)] == 0 && l[:len(key)] == key {
			return l[len(key)+1 : len(l)-1], true
		}
	}
	return "", false
}

// newRecord extracts the index keys of obj, which must already carry its
// final metadata, and pairs them with its JSON.
func newRecord(m *model.Model, obj object.Object, data []byte) *Record {
	md := &obj.GetEnvelope().Metadata
	r := &Record{Name: md.Name, Version: md.GetVersion(), Data: data, pending: len(md.Finalizers) > 0, fp: m.KeysFingerprint(), indexed: true}
	if n := len(md.Labels); n > 0 {
		r.labels = make([]string, 0, n)
		for _, k := range sortedKeys(md.Labels) {
			r.labels = append(r.labels, string(model.LabelKey(k, md.Labels[k])))
		}
		r.sig = labelSig(r.labels)
	}
	if md.CreationTimestamp != nil {
		r.created = model.TimeKey(*md.CreationTimestamp)
	}
	if md.DeletionTimestamp != nil {
		r.deletion = model.TimeKey(*md.DeletionTimestamp)
	}
	if len(m.Indexes) > 0 {
		r.keys = make([][]model.Key, len(m.Indexes))
		for i, ix := range m.Indexes {
			ks := ix.Keys(obj, nil)
			if ix.Multi && len(ks) > 1 {
				slices.Sort(ks)
				ks = slices.Compact(ks)
			}
			r.keys[i] = ks
		}
	}
	return r
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// indexKeys returns the record's keys for index number ix of
// m.AllIndexes(): the defaults first (name, labels, creation, deletion),
// then the model's own. Labels are neither sorted nor field-selected, so
// ixLabels is never asked for.
func (r *Record) indexKeys(ix int) []model.Key {
	switch ix {
	case 0:
		return []model.Key{model.StringKey(r.Name)}
	case 2:
		if r.created == "" {
			return nil
		}
		return []model.Key{r.created}
	case 3:
		if r.deletion == "" {
			return nil
		}
		return []model.Key{r.deletion}
	}
	return r.keys[ix-numDefaultIndexes]
}

// sortKey is the key a record sorts by on index ix: its only key, or for a
// multi-valued index the smallest (ascending) or largest (descending).
func (r *Record) sortKey(ix int, desc bool) (model.Key, bool) {
	switch ix {
	case ixName:
		return model.StringKey(r.Name), true
	case ixCreated:
		return r.created, r.created != ""
	case ixDeleted:
		return r.deletion, r.deletion != ""
	}
	ks := r.indexKeys(ix)
	if len(ks) == 0 {
		return "", false
	}
	if desc {
		return ks[len(ks)-1], true
	}
	return ks[0], true
}
