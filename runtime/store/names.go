package store

import (
	"hash/maphash"
	"math/bits"
	"sync"
)

// names maps names to a table's records for point reads: a hash lookup
// costs a fraction of a memdb transaction plus radix walk. Only the
// committer writes it; readers take the read lock for one lookup.
//
// It is an open-addressing table (linear probing, deletion by backward
// shift) of record pointers plus a byte of each name's hash, not a Go
// map: the record already holds its name, so a slot needs no copy of the
// key's header. At the loads kept here that is 11–15 B per object against
// ~41 B for a map[string]*Record (see docs/performance.md).
type names struct {
	mu   sync.RWMutex
	seed maphash.Seed
	recs []*Record // nil: free
	tags []uint8   // tag(h) of recs[i]'s name; 0: free
	n    int
}

// Loads: a table is rebuilt at buildLoad when it passes maxLoad or falls
// under minLoad, so each rebuild is paid for by as many writes as it
// moves entries.
const (
	buildLoad = 0.7
	maxLoad   = 0.85
	minLoad   = 0.25
	minSlots  = 8
)

func newNames(recs []*Record) *names {
	n := &names{seed: maphash.MakeSeed()}
	n.rebuild(len(recs), func(yield func(*Record)) {
		for _, r := range recs {
			yield(r)
		}
	})
	return n
}

// tag is the byte kept beside a slot, never 0 (the free mark), so most
// probes that will not match compare no name. It is taken from the low
// bits: home draws on the high ones, so neighbours share those.
func tag(h uint64) uint8 { return max(uint8(h), 1) }

// home is where a name of hash h starts its probe in m slots.
func home(h uint64, m int) int {
	hi, _ := bits.Mul64(h, uint64(m))
	return int(hi)
}

func (n *names) hash(name string) uint64 { return maphash.String(n.seed, name) }

// find returns the slot holding name, or the free slot where it would go
// and false.
func (n *names) find(name string, h uint64) (int, bool) {
	t, m := tag(h), len(n.recs)
	for i := home(h, m); ; {
		switch n.tags[i] {
		case 0:
			return i, false
		case t:
			if n.recs[i].Name == name {
				return i, true
			}
		}
		if i++; i == m {
			i = 0
		}
	}
}

func (n *names) get(name string) (*Record, bool) {
	h := n.hash(name)
	n.mu.RLock()
	i, ok := n.find(name, h)
	var r *Record
	if ok {
		r = n.recs[i]
	}
	n.mu.RUnlock()
	return r, ok
}

// len returns the number of names held.
func (n *names) len() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.n
}

// all yields every record held, under the read lock (an iter.Seq).
func (n *names) all(yield func(*Record) bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	for _, r := range n.recs {
		if r != nil && !yield(r) {
			return
		}
	}
}

func (n *names) set(r *Record) {
	h := n.hash(r.Name)
	i, ok := n.find(r.Name, h)
	if ok {
		n.mu.Lock()
		n.recs[i] = r
		n.mu.Unlock()
		return
	}
	if float64(n.n+1) > maxLoad*float64(len(n.recs)) {
		n.grow(r)
		return
	}
	n.mu.Lock()
	n.recs[i], n.tags[i] = r, tag(h)
	n.n++
	n.mu.Unlock()
}

func (n *names) delete(name string) {
	i, ok := n.find(name, n.hash(name))
	if !ok {
		return
	}
	if float64(n.n-1) < minLoad*float64(len(n.recs)) && len(n.recs) > minSlots {
		n.shrink(name)
		return
	}
	m := len(n.recs)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.n--
	// Backward shift: move each later entry of the cluster whose probe
	// passes the hole into it, so that no probe ever meets a gap before
	// its name.
	for j := i; ; {
		if j++; j == m {
			j = 0
		}
		if n.tags[j] == 0 {
			break
		}
		hj := home(n.hash(n.recs[j].Name), m)
		if (j-hj+m)%m >= (j-i+m)%m {
			n.recs[i], n.tags[i] = n.recs[j], n.tags[j]
			i = j
		}
	}
	n.recs[i], n.tags[i] = nil, 0
}

// grow rebuilds the table with r added. The committer is the only
// writer, so it builds the new arrays from the old ones without a lock and
// holds the write lock only to swap them in.
func (n *names) grow(r *Record) {
	n.rebuild(n.n+1, func(yield func(*Record)) {
		for _, old := range n.recs {
			if old != nil {
				yield(old)
			}
		}
		yield(r)
	})
}

// shrink rebuilds the table without name.
func (n *names) shrink(name string) {
	n.rebuild(n.n-1, func(yield func(*Record)) {
		for _, old := range n.recs {
			if old != nil && old.Name != name {
				yield(old)
			}
		}
	})
}

// rebuild replaces the table with one, at buildLoad for count records,
// of the records each yields (the last of a name wins).
func (n *names) rebuild(count int, each func(yield func(*Record))) {
	m := max(minSlots, int(float64(count)/buildLoad)+1)
	fresh := names{seed: n.seed, recs: make([]*Record, m), tags: make([]uint8, m)}
	each(func(r *Record) {
		h := fresh.hash(r.Name)
		i, found := fresh.find(r.Name, h)
		if !found {
			fresh.n++
		}
		fresh.recs[i], fresh.tags[i] = r, tag(h)
	})
	n.mu.Lock()
	n.recs, n.tags, n.n = fresh.recs, fresh.tags, fresh.n
	n.mu.Unlock()
}
