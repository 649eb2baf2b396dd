package record

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/svcrun/svc/runtime/model"
)

// A record's keys section (Record.Sec) is what store/frame.go writes after
// the JSON of a put (kind 3), so its layout is on disk: never change it; a
// new layout needs a new frame kind. Every string is a uvarint length and
// its bytes:
//
//	fingerprint  8 bytes, little endian: the model.KeysFingerprint the
//	             keys were computed under
//	labels       a uvarint count, then each model.LabelKey, sorted
//	creation     the creationTimestamp's key
//	deletion     the deletionTimestamp's key ("" when none)
//	finalizers   one byte, 1 when the object has some
//	indexes      a uvarint count, then for each of the model's own
//	             indexes a uvarint count and its keys, sorted

// sectionSize is the length of the keys section appendSection writes.
func sectionSize(labels []string, creation, deletion model.Key, counts []int, keys []model.Key) int {
	size := 8 + uvarintLen(len(labels)) + strLen(string(creation)) + strLen(string(deletion)) + 1 + uvarintLen(len(counts))
	for _, l := range labels {
		size += strLen(l)
	}
	for _, n := range counts {
		size += uvarintLen(n)
	}
	for _, k := range keys {
		size += strLen(string(k))
	}
	return size
}

// appendSection appends a keys section to b. A record keeps it for as long
// as it is stored, so callers give b room for exactly sectionSize bytes.
func appendSection(b []byte, fp uint64, labels []string, creation, deletion model.Key, pending bool, counts []int, keys []model.Key) []byte {
	b = binary.LittleEndian.AppendUint64(b, fp)
	b = binary.AppendUvarint(b, uint64(len(labels)))
	for _, l := range labels {
		b = appendStr(b, l)
	}
	b = appendStr(b, string(creation))
	b = appendStr(b, string(deletion))
	if pending {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(counts)))
	for _, n := range counts {
		b = binary.AppendUvarint(b, uint64(n))
		for _, k := range keys[:n] {
			b = appendStr(b, string(k))
		}
		keys = keys[n:]
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func uvarintLen(n int) int { return (bits.Len64(uint64(n)|1) + 6) / 7 }

func strLen(s string) int { return uvarintLen(len(s)) + len(s) }

// SetKeys gives r a keys section built from the given keys, for records
// made by hand (tests, a span's pivot): keys holds each own index's keys
// (sorted), labels the model.LabelKeys (sorted).
func SetKeys(r *Record, fp uint64, labels []string, creation, deletion model.Key, pending bool, keys [][]model.Key) {
	var counts []int
	var all []model.Key
	for _, ks := range keys {
		counts = append(counts, len(ks))
		all = append(all, ks...)
	}
	sec := make([]byte, 0, sectionSize(labels, creation, deletion, counts, all))
	sec = appendSection(sec, fp, labels, creation, deletion, pending, counts, all)
	r.Sec = string(sec)
	if !Unpack(r) {
		panic("record: SetKeys built a section that does not parse")
	}
}

// Unpack checks r.Sec and fills in the fields drawn from it (Sig and where
// the creation key and the indexes' keys start), after which r is
// Indexed; false, with r unchanged, when the section is malformed (the
// caller decodes the JSON instead). It never writes Sec, which a snapshot
// writer may be reading.
func Unpack(r *Record) bool {
	sec := r.Sec
	if len(sec) < 8 {
		return false
	}
	p := reader{s: sec[8:], ok: true}
	var sig uint32
	for range p.count() {
		sig |= LabelBit(p.str())
	}
	cre := len(sec) - len(p.s)
	p.str() // the creation key, read in place when asked (Creation)
	p.str() // the deletion key, likewise (Deletion)
	if !p.ok || len(p.s) == 0 {
		return false
	}
	p.s = p.s[1:] // the finalizers' flag (Pending)
	at := len(sec) - len(p.s)
	for range p.count() {
		for range p.count() {
			p.str()
		}
	}
	if !p.ok || len(p.s) != 0 || at > math.MaxUint32 {
		return false
	}
	r.Sig, r.creAt, r.keysAt = sig, uint32(cre), uint32(at)
	return true
}

// The accessors below are functions, not methods, so that store.Record's
// method set stays its API.

// Indexed reports whether r's keys section has been checked and the
// fields drawn from it filled in (Unpack): a record built by New always,
// a restored one once a build claimed it.
func Indexed(r *Record) bool { return r.keysAt != 0 }

// FP returns the model.KeysFingerprint r's keys were computed under (0:
// it has none).
func FP(r *Record) uint64 {
	if len(r.Sec) < 8 {
		return 0
	}
	var fp uint64
	for i := 7; i >= 0; i-- {
		fp = fp<<8 | uint64(r.Sec[i])
	}
	return fp
}

// Creation returns the object's creationTimestamp key ("" when it has
// none).
func Creation(r *Record) model.Key {
	if r.keysAt == 0 {
		return ""
	}
	ks := keyList{s: r.Sec[r.creAt:], n: 1}
	return model.Key(ks.next())
}

// Deletion returns the object's deletionTimestamp key, "" while it is not
// being deleted.
func Deletion(r *Record) model.Key {
	if r.keysAt == 0 {
		return ""
	}
	ks := keyList{s: r.Sec[r.creAt:], n: 2}
	ks.next() // the creation key
	return model.Key(ks.next())
}

// Pending reports whether the object has finalizers: the flag is the
// byte before the indexes' keys.
func Pending(r *Record) bool { return r.keysAt != 0 && r.Sec[r.keysAt-1] == 1 }

// NumLabels returns how many labels the object carries.
func NumLabels(r *Record) int { return r.labels().n }

// AppendLabels appends the object's label keys (model.LabelKey, sorted)
// to dst.
func AppendLabels(r *Record, dst []string) []string {
	ls := r.labels()
	for range ls.n {
		dst = append(dst, ls.next())
	}
	return dst
}

// NumIndexes returns how many of a model's own indexes r holds keys for.
func NumIndexes(r *Record) int {
	if r.keysAt == 0 {
		return 0
	}
	n, _ := readLen(r.Sec[r.keysAt:])
	return n
}

// NumKeys returns how many keys r has on the model's own index i.
func NumKeys(r *Record, i int) int { return r.ownKeys(i).n }

// AppendKeys appends r's keys on the model's own index i (sorted) to dst,
// as model.Keys or as plain strings (what index entries hold).
func AppendKeys[K ~string](r *Record, i int, dst []K) []K {
	ks := r.ownKeys(i)
	for range ks.n {
		dst = append(dst, K(ks.next()))
	}
	return dst
}

// EdgeKey returns r's smallest key on the model's own index i, or its
// largest when last is set; false when it has none there.
func EdgeKey(r *Record, i int, last bool) (model.Key, bool) {
	ks := r.ownKeys(i)
	if ks.n == 0 {
		return "", false
	}
	k := ks.next()
	if last {
		for range ks.n - 1 {
			k = ks.next()
		}
	}
	return model.Key(k), true
}

// keyList walks n strings of a checked section.
type keyList struct {
	s string
	n int
}

func (k *keyList) next() string {
	n, rest := readLen(k.s)
	k.s = rest[n:]
	return rest[:n]
}

// readLen reads a length or a count off the front of a checked section.
func readLen(s string) (n int, rest string) {
	if n := int(s[0]); n < 0x80 { // under 128: most, read inline
		return n, s[1:]
	}
	x, w := uvarint(s)
	return int(x), s[w:]
}

func (r *Record) labels() keyList {
	if r.keysAt == 0 {
		return keyList{}
	}
	var ks keyList
	ks.n, ks.s = readLen(r.Sec[8:])
	return ks
}

func (r *Record) ownKeys(i int) keyList {
	if r.keysAt == 0 {
		return keyList{}
	}
	groups, s := readLen(r.Sec[r.keysAt:])
	if i < 0 || i >= groups {
		panic("record: no keys for this index")
	}
	for {
		var ks keyList
		ks.n, ks.s = readLen(s)
		if i == 0 {
			return ks
		}
		for range ks.n {
			ks.next()
		}
		s, i = ks.s, i-1
	}
}

// uvarint is binary.Uvarint over a string; w <= 0 when s holds none.
func uvarint(s string) (x uint64, w int) {
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// reader walks an unchecked section; ok turns false at the first thing
// that does not fit, after which every read returns nothing.
type reader struct {
	s  string
	ok bool
}

// count reads a count, which cannot exceed the bytes left (every item
// takes at least one), so a forged count costs no more than the section.
func (p *reader) count() int {
	n, w := uvarint(p.s)
	if !p.ok || w <= 0 || n > uint64(len(p.s)-w) {
		p.ok = false
		return 0
	}
	p.s = p.s[w:]
	return int(n)
}

func (p *reader) str() string {
	n, w := uvarint(p.s)
	if !p.ok || w <= 0 || n > uint64(len(p.s)-w) {
		p.ok = false
		return ""
	}
	s := p.s[w : w+int(n)]
	p.s = p.s[w+int(n):]
	return s
}
