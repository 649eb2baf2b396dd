package cowtree

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// kv items compare by k only, so that Set's replacing shows in v.
type kv struct{ k, v int }

func byK(a, b kv) int { return cmp.Compare(a.k, b.k) }

// sumKV summarises an item by its value, which a Set of the same key
// changes: replacements must keep the summaries right.
func sumKV(e kv) uint32 { return 1 << (uint(e.v) % 32) }

func buildKV(m model) *Tree[kv] {
	tr := BuildSummarized(byK, sumKV, len(m), func(i int) kv { return m[i] })
	tr.Detach(detachKV)
	return tr
}

// detachKV marks a separator that outlived its item (no item has v
// detachedV), so that the invariants can tell it from a stale copy.
func detachKV(e kv) kv { e.v = detachedV; return e }

const detachedV = math.MinInt

// model is the reference: a sorted slice.
type model []kv

func (m model) find(k int) (int, bool) {
	return slices.BinarySearchFunc(m, k, func(e kv, k int) int { return cmp.Compare(e.k, k) })
}

func (m *model) set(it kv) {
	i, ok := m.find(it.k)
	if ok {
		(*m)[i] = it
		return
	}
	*m = slices.Insert(*m, i, it)
}

func (m *model) del(k int) bool {
	i, ok := m.find(k)
	if ok {
		*m = slices.Delete(*m, i, i+1)
	}
	return ok
}

// check compares every read of t with m and checks t's invariants.
func check(t *testing.T, tr *Tree[kv], m model) {
	t.Helper()
	if tr.Len() != len(m) {
		t.Fatalf("Len = %d, want %d", tr.Len(), len(m))
	}
	var got []kv
	tr.Scan(func(e kv) bool { got = append(got, e); return true })
	if !slices.Equal(got, m) {
		t.Fatalf("Scan = %v, want %v", got, m)
	}
	got = got[:0]
	tr.ReverseFiltered(nil, func(e kv) bool { got = append(got, e); return true })
	slices.Reverse(got)
	if !slices.Equal(got, m) {
		t.Fatalf("Reverse disagrees")
	}
	if e, ok := tr.GetAt(tr.Len() - 1); len(m) > 0 && (!ok || e != m[len(m)-1]) {
		t.Fatalf("GetAt(Len-1) = %v %v, want %v", e, ok, m[len(m)-1])
	}
	if tr.root != nil {
		if d := invariants(t, tr, tr.root, true); d < 0 {
			t.Fatal("uneven depth")
		}
	}
	if tr.summary != nil {
		checkFiltered(t, tr, m)
	}
}

// checkFiltered walks tr with filters for a few sets of summary bits: the
// items seen must be exactly the wanted ones, in order, and the items
// passed over must account for the rest.
func checkFiltered(t *testing.T, tr *Tree[kv], m model) {
	t.Helper()
	for _, mask := range []uint32{1, 1<<3 | 1<<17, 0xff00ff00} {
		var want model
		for _, e := range m {
			if sumKV(e)&mask != 0 {
				want = append(want, e)
			}
		}
		seen, passed := 0, 0
		f := &Filter[kv]{
			Skip:   func(sum uint32) bool { return sum&mask == 0 },
			Passed: func(n int) bool { passed += n; return true },
		}
		var got model
		tr.ScanFiltered(f, func(e kv) bool {
			seen++
			if sumKV(e)&mask != 0 {
				got = append(got, e)
			}
			return true
		})
		if !slices.Equal(got, want) || seen+passed != len(m) {
			t.Fatalf("ScanFiltered(%#x): %d wanted of %d seen, %d passed over; want %d of %d", mask, len(got), seen, passed, len(want), len(m))
		}
		got, seen, passed = got[:0], 0, 0
		tr.ReverseFiltered(f, func(e kv) bool {
			seen++
			if sumKV(e)&mask != 0 {
				got = append(got, e)
			}
			return true
		})
		slices.Reverse(got)
		if !slices.Equal(got, want) || seen+passed != len(m) {
			t.Fatalf("ReverseFiltered(%#x) disagrees", mask)
		}
	}
}

// invariants checks n's subtree and returns its depth (-1: uneven).
func invariants(t *testing.T, tr *Tree[kv], n *node[kv], root bool) int {
	t.Helper()
	if !root && n.count == 0 {
		t.Fatal("an empty node that is not the root")
	}
	if n.size() > maxItems {
		t.Fatalf("node of size %d", n.size())
	}
	if n.leaf() {
		if n.count != len(n.items) {
			t.Fatalf("leaf count %d, items %d", n.count, len(n.items))
		}
		if !slices.IsSortedFunc(n.items, byK) {
			t.Fatal("leaf out of order")
		}
		if tr.summary != nil {
			var want uint32
			for _, e := range n.items {
				want |= sumKV(e)
			}
			if n.sum != want {
				t.Fatalf("leaf sum %#x, items OR to %#x", n.sum, want)
			}
		}
		return 0
	}
	if len(n.seps) != len(n.kids)-1 {
		t.Fatalf("%d seps for %d kids", len(n.seps), len(n.kids))
	}
	sum, depth := 0, -2
	for i, k := range n.kids {
		sum += k.count
		d := invariants(t, tr, k, false)
		if depth != -2 && d != depth {
			return -1
		}
		depth = d
		var lo, hi *kv
		if i > 0 {
			lo = &n.seps[i-1]
		}
		if i < len(n.seps) {
			hi = &n.seps[i]
		}
		// With Detach, a separator is the first item after it, or a
		// detached copy of an item deleted since: never a stale copy.
		if lo != nil && tr.detach != nil && *lo != first(k) && lo.v != detachedV {
			t.Fatalf("separator %v, first item after it %v: a stale copy", *lo, first(k))
		}
		tr2 := &Tree[kv]{cmp: byK, root: k}
		tr2.Scan(func(e kv) bool {
			if lo != nil && e.k < lo.k || hi != nil && e.k >= hi.k {
				t.Fatalf("item %d outside its separators", e.k)
			}
			return true
		})
	}
	if sum != n.count {
		t.Fatalf("inner count %d, kids sum %d", n.count, sum)
	}
	if tr.summary != nil {
		for _, k := range n.kids {
			if k.sum&^n.sum != 0 {
				t.Fatalf("inner sum %#x does not cover a kid's %#x", n.sum, k.sum)
			}
		}
	}
	return depth + 1
}

// checkPoints compares the point and range reads at a few pivots.
func checkPoints(t *testing.T, tr *Tree[kv], m model, rng *rand.Rand, span int) {
	t.Helper()
	for range 8 {
		p := kv{k: rng.IntN(span+2) - 1}
		r, _ := m.find(p.k)
		if got := tr.Rank(p); got != r {
			t.Fatalf("Rank(%d) = %d, want %d", p.k, got, r)
		}
		if got, ok := tr.Get(p); ok != (r < len(m) && m[r].k == p.k) || ok && got != m[r] {
			t.Fatalf("Get(%d) = %v %v", p.k, got, ok)
		}
		if i := rng.IntN(len(m) + 2); true {
			e, ok := tr.GetAt(i - 1)
			if want := i-1 >= 0 && i-1 < len(m); ok != want || ok && e != m[i-1] {
				t.Fatalf("GetAt(%d) = %v %v", i-1, e, ok)
			}
		}
		limit := rng.IntN(5) + 1
		var up, want []kv
		tr.Ascend(p, func(e kv) bool { up = append(up, e); return len(up) < limit })
		want = m[r:min(r+limit, len(m))]
		if !slices.Equal(up, want) {
			t.Fatalf("Ascend(%d) = %v, want %v", p.k, up, want)
		}
		if tr.summary != nil {
			// From p on, only items with bit 0 or 5; stop at the limit-th
			// such item or once the walk, counting the items of nodes
			// passed over, reaches position stopAt.
			mask := uint32(1 | 1<<5)
			stopAt := min(len(m), r+rng.IntN(len(m)/4+1))
			var fwant []kv
			for _, e := range m[r:stopAt] {
				if len(fwant) == limit {
					break
				}
				if sumKV(e)&mask != 0 {
					fwant = append(fwant, e)
				}
			}
			var fgot []kv
			pos := r
			tr.AscendFiltered(p, &Filter[kv]{
				Skip:   func(sum uint32) bool { return sum&mask == 0 },
				Passed: func(n int) bool { pos += n; return pos < stopAt },
			}, func(e kv) bool {
				if pos >= stopAt {
					return false
				}
				pos++
				if sumKV(e)&mask != 0 {
					fgot = append(fgot, e)
				}
				return len(fgot) < limit
			})
			if !slices.Equal(fgot, fwant) {
				t.Fatalf("AscendFiltered(%d) = %v, want %v", p.k, fgot, fwant)
			}
		}
		if tr.summary != nil {
			// Down from p, only items with bit 0 or 5, at most limit.
			mask := uint32(1 | 1<<5)
			end := r
			if _, ok := m.find(p.k); ok {
				end++
			}
			var fwant []kv
			for i := end - 1; i >= 0 && len(fwant) < limit; i-- {
				if sumKV(m[i])&mask != 0 {
					fwant = append(fwant, m[i])
				}
			}
			var fgot []kv
			tr.DescendFiltered(p, &Filter[kv]{Skip: func(sum uint32) bool { return sum&mask == 0 }}, func(e kv) bool {
				if sumKV(e)&mask != 0 {
					fgot = append(fgot, e)
				}
				return len(fgot) < limit
			})
			if !slices.Equal(fgot, fwant) {
				t.Fatalf("DescendFiltered(%d) = %v, want %v", p.k, fgot, fwant)
			}
		}
		var fromRuns []kv
		tr.AscendRuns(p, func(run []kv) bool {
			fromRuns = append(fromRuns, run...)
			return len(fromRuns) < limit
		})
		if want := m[r:min(r+limit, len(m))]; !slices.Equal(fromRuns[:min(limit, len(fromRuns))], want) {
			t.Fatalf("AscendRuns(%d) = %v, want %v", p.k, fromRuns, want)
		}
		var down []kv
		tr.DescendFiltered(p, nil, func(e kv) bool { down = append(down, e); return len(down) < limit })
		end := r
		if _, ok := m.find(p.k); ok {
			end++
		}
		want = slices.Clone(m[max(end-limit, 0):end])
		slices.Reverse(want)
		if !slices.Equal(down, want) {
			t.Fatalf("Descend(%d) = %v, want %v", p.k, down, want)
		}
	}
}

func TestAgainstASortedSlice(t *testing.T) {
	for _, tc := range []struct {
		name          string
		span, ops     int
		build         int
		deleteBias    int // in 10ths
		copyEvery     int
		verifyEveryOp int
	}{
		{"small", 50, 3000, 0, 5, 7, 1},
		{"grow", 100000, 20000, 0, 2, 500, 1000},
		{"built then churned", 20000, 30000, 15000, 5, 300, 1000},
		{"built then emptied", 5000, 20000, 5000, 9, 200, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.span), uint64(tc.ops)))
			var m model
			for _, k := range rng.Perm(tc.span)[:tc.build] {
				m.set(kv{k, 0})
			}
			tr := buildKV(m)
			check(t, tr, m)
			type snap struct {
				tr *Tree[kv]
				m  model
			}
			var snaps []snap
			for op := 1; op <= tc.ops; op++ {
				k := rng.IntN(tc.span)
				if rng.IntN(10) < tc.deleteBias {
					if got, want := tr.Delete(kv{k: k}), m.del(k); got != want {
						t.Fatalf("Delete(%d) = %v, want %v", k, got, want)
					}
				} else {
					tr.Set(kv{k, op})
					m.set(kv{k, op})
				}
				if op%tc.copyEvery == 0 {
					// Keep a copy; alternate which side goes on writing.
					c := tr.Copy()
					if len(snaps)%2 == 0 {
						snaps = append(snaps, snap{c, slices.Clone(m)})
					} else {
						snaps = append(snaps, snap{tr, slices.Clone(m)})
						tr = c
					}
				}
				if op%tc.verifyEveryOp == 0 {
					check(t, tr, m)
					checkPoints(t, tr, m, rng, tc.span)
				}
			}
			check(t, tr, m)
			for i, s := range snaps {
				if i%7 == 0 || i == len(snaps)-1 {
					check(t, s.tr, s.m) // copies are untouched by later writes
				}
			}
		})
	}
}

func TestBuildShapes(t *testing.T) {
	for _, n := range []int{0, 1, maxItems, maxItems + 1, 2*buildFill - 1, 2 * buildFill, 5000, 200000} {
		m := make(model, n)
		for i := range m {
			m[i] = kv{2 * i, i}
		}
		tr := Build(byK, m)
		check(t, tr, m)
		checkPoints(t, tr, m, rand.New(rand.NewPCG(1, uint64(n))), 2*n)
		// A built tree takes writes in every part of it.
		tr.Set(kv{-1, 0})
		tr.Set(kv{2*n + 1, 0})
		tr.Set(kv{n | 1, 0})
		m.set(kv{-1, 0})
		m.set(kv{2*n + 1, 0})
		m.set(kv{n | 1, 0})
		check(t, tr, m)
	}
}

// A built leaf is allocated full; its first insert gives it a node's
// capacity once, and the inserts up to a split then fit in place.
func TestABuiltLeafGrowsOnceToANodesCapacity(t *testing.T) {
	m := make(model, buildFill)
	for i := range m {
		m[i] = kv{2 * i, i}
	}
	tr := Build(byK, m)
	if got := cap(tr.root.items); got != buildFill {
		t.Fatalf("built leaf has capacity %d, want %d (full)", got, buildFill)
	}
	tr.Set(kv{1, 0})
	grown := &tr.root.items[0]
	if got := cap(tr.root.items); got != maxItems+1 {
		t.Fatalf("after an insert the leaf has capacity %d, want %d", got, maxItems+1)
	}
	for k := 3; tr.Len() < maxItems; k += 2 {
		tr.Set(kv{k, 0})
	}
	if &tr.root.items[0] != grown {
		t.Fatal("inserts up to a node's capacity reallocated the leaf")
	}
}

// A write after a copy copies the nodes on its path with room for that
// write only (a batch's writes after each view's copy take one each), not
// at a node's capacity; a second insert into the copy grows it once.
func TestACopiedNodeHasRoomForOneInsert(t *testing.T) {
	m := make(model, 20*buildFill)
	for i := range m {
		m[i] = kv{2 * i, i}
	}
	tr := Build(byK, m)
	snap := tr.Copy()
	tr.Set(kv{1, 0}) // into the first leaf, which the copy shares
	n := tr.root
	for !n.leaf() {
		if cap(n.kids) != len(n.kids)+1 || cap(n.seps) != len(n.seps)+1 {
			t.Fatalf("a copied inner node of %d kids has room for %d kids, %d separators", len(n.kids), cap(n.kids), cap(n.seps))
		}
		n = n.kids[0]
	}
	if cap(n.items) != len(n.items) {
		t.Fatalf("the copied leaf holds %d items in %d slots; want exactly full after the one insert", len(n.items), cap(n.items))
	}
	if snap.Len() != len(m) || tr.Len() != len(m)+1 {
		t.Fatalf("lengths %d and %d after the write, want %d and %d", snap.Len(), tr.Len(), len(m), len(m)+1)
	}
	tr.Set(kv{3, 0})
	if got := cap(tr.root.kids[0].items); got != maxItems+1 {
		t.Fatalf("after a second insert the leaf has capacity %d, want %d", got, maxItems+1)
	}
}

func TestBuildKeepsNoReference(t *testing.T) {
	items := []kv{{1, 1}, {2, 2}, {3, 3}}
	tr := Build(byK, items)
	items[0] = kv{9, 9}
	if e, _ := tr.GetAt(0); e != (kv{1, 1}) {
		t.Fatalf("tree changed with its input: %v", e)
	}
}

func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 200, 1, 130, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		tr := New(byK, sumKV)
		tr.Detach(detachKV)
		var m model
		var snaps []*Tree[kv]
		var snapModels []model
		for i, b := range ops {
			k := int(b & 0x3f)
			switch b >> 6 {
			case 0, 1:
				tr.Set(kv{k, i})
				m.set(kv{k, i})
			case 2:
				if got, want := tr.Delete(kv{k: k}), m.del(k); got != want {
					t.Fatalf("Delete(%d) = %v, want %v", k, got, want)
				}
			case 3:
				snaps = append(snaps, tr.Copy())
				snapModels = append(snapModels, slices.Clone(m))
			}
		}
		check(t, tr, m)
		for i, s := range snaps {
			check(t, s, snapModels[i])
		}
	})
}

func BenchmarkBuild1M(b *testing.B) {
	items := make([]kv, 1_000_000)
	for i := range items {
		items[i] = kv{i, i}
	}
	b.ReportAllocs()
	for b.Loop() {
		Build(byK, items)
	}
}

func BenchmarkSetRandom100k(b *testing.B) {
	items := make([]kv, 100_000)
	for i := range items {
		items[i] = kv{2 * i, i}
	}
	tr := Build(byK, items)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := 2*rng.IntN(100_000) + 1
		tr.Set(kv{k, i})
		tr.Delete(kv{k: k})
	}
}

func ExampleTree() {
	tr := New(cmp.Compare[int], nil)
	for _, v := range []int{5, 1, 4} {
		tr.Set(v)
	}
	snap := tr.Copy()
	tr.Delete(4)
	r := tr.Rank(5)
	fmt.Println(tr.Len(), snap.Len(), r)
	// Output: 2 3 1
}

// TestSummariesOfRareItems: most items share one summary bit and a few
// carry another, so inner nodes are not saturated and a summary lost on a
// split, merge or replacement shows up in the invariants and in filtered
// walks.
func TestSummariesOfRareItems(t *testing.T) {
	tr := New(byK, sumKV)
	var m model
	rare := func(k int) kv {
		if k%97 == 0 {
			return kv{k, 7}
		}
		return kv{k, 32} // bit 0
	}
	for k := range 20000 { // ascending: every split sends the new item right
		tr.Set(rare(k))
		m.set(rare(k))
	}
	check(t, tr, m)
	for k := 19999; k >= 0; k -= 3 { // descending inserts between them
		tr.Set(rare(k))
		m.set(rare(k))
		if k%5 == 0 {
			tr.Delete(kv{k: k})
			m.del(k)
		}
	}
	check(t, tr, m)
	c, before := tr.Copy(), slices.Clone(m)
	for k := 0; k < 20000; k += 2 { // replacements that change summaries
		tr.Set(kv{k, k % 31})
		m.set(kv{k, k % 31})
	}
	check(t, tr, m)
	check(t, c, before) // the copy's shared nodes kept their summaries

	// A rare item that splits a full leaf and lands in its right half
	// must reach the parent's summary.
	m = nil
	for i := range 10 * buildFill {
		m = append(m, kv{10 * i, 32})
	}
	tr = buildKV(m)
	for k := 1; k < maxItems-buildFill+1; k++ { // fill the first leaf
		tr.Set(kv{k, 32})
		m.set(kv{k, 32})
	}
	last := 10 * (buildFill - 1)
	tr.Set(kv{last + 5, 7}) // the leaf's last key: it overflows
	m.set(kv{last + 5, 7})
	check(t, tr, m)
}

// named items order by name, then n; share makes an item take an equal
// neighbour's name string.
type named struct {
	name string
	n    int
}

func byName(a, b named) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.n, b.n)) }

func shareName(it named, nb *named) (named, bool) {
	if it.name != nb.name {
		return it, false
	}
	it.name = nb.name
	return it, true
}

// copiesOf counts the distinct string copies of each name in tr.
func copiesOf(tr *Tree[named]) map[string]int {
	seen := map[*byte]bool{}
	copies := map[string]int{}
	tr.Scan(func(it named) bool {
		if p := unsafe.StringData(it.name); !seen[p] {
			seen[p] = true
			copies[it.name]++
		}
		return true
	})
	return copies
}

func TestInsertsShareEqualNeighbours(t *testing.T) {
	fresh := func(s string) string { return string([]byte(s)) } // a new copy
	for _, shared := range []bool{true, false} {
		tr := New(byName, nil)
		if shared {
			tr.Share(shareName)
		}
		// Enough items to split leaves and inner nodes; each insert lands
		// beside an item of its name, first at either end, then between.
		for i := range 5000 {
			for _, name := range []string{"alpha", "beta", "gamma"} {
				n := i
				if i%2 == 1 {
					n = -i
				}
				tr.Set(named{fresh(name), n})
			}
		}
		// A replacement shares too.
		tr.Set(named{fresh("beta"), 0})
		copies := copiesOf(tr)
		for _, name := range []string{"alpha", "beta", "gamma"} {
			want := 1
			if !shared {
				want = 5000
			}
			if copies[name] != want {
				t.Errorf("shared=%v: %d copies of %q, want %d", shared, copies[name], name, want)
			}
		}
		if got := tr.Copy().share != nil; got != shared {
			t.Errorf("shared=%v: a copy shares: %v", shared, got)
		}
	}
}

// TestFillAfterInserts checks how full inserts leave leaves, by pattern:
// where a store's indexes insert (the front of a key's run, the front of
// the tree, the end) the nodes the inserts have passed stay full, and
// scattered inserts fill them as halving splits do (about 69%).
func TestFillAfterInserts(t *testing.T) {
	const n = 100_000
	for _, tc := range []struct {
		name string
		key  func(i int) int
		min  float64
	}{
		{"scattered", func(int) int { return rand.Int() }, 0.62},
		{"front", func(i int) int { return -i }, 0.95},
		{"end", func(i int) int { return i }, 0.95},
		// 100 keys; each insert goes to the front of its key's run, as a
		// new object's entries do (ties order newest first).
		{"runs", func(i int) int { return rand.IntN(100)*1_000_000 + (n - i) }, 0.85},
	} {
		tr, m := New(byK, sumKV), model{}
		for i := range n {
			it := kv{tc.key(i), i}
			tr.Set(it)
			m.set(it)
		}
		check(t, tr, m)
		s := tr.Shape()
		if fill := float64(s.Items) / float64(s.Slots); fill < tc.min || s.Items != tr.Len() {
			t.Errorf("%s: %d items in %d leaf slots (%.0f%% full), want at least %.0f%%", tc.name, s.Items, s.Slots, 100*fill, 100*tc.min)
		}
	}
}

// held is an item that keeps an allocation alive, as an index entry keeps
// its record.
type held struct {
	k int
	p *[64]byte
}

// TestSeparatorsKeepNothingGone: once items are replaced or deleted, no
// separator copy of them keeps what they pointed at in memory (a tree
// with Detach, as the store's indexes are).
func TestSeparatorsKeepNothingGone(t *testing.T) {
	const n = 20_000
	byHeld := func(a, b held) int { return cmp.Compare(a.k, b.k) }
	items := make([]held, n)
	for i := range items {
		items[i] = held{i, new([64]byte)}
	}
	var gone atomic.Int64
	tr := Build(byHeld, items)
	tr.Detach(func(h held) held { h.p = nil; return h })
	rng := rand.New(rand.NewPCG(1, 2))
	for _, i := range rng.Perm(n) {
		runtime.AddCleanup(items[i].p, func(*atomic.Int64) { gone.Add(1) }, &gone)
		if i%2 == 0 {
			tr.Set(held{i, new([64]byte)})
		} else {
			tr.Delete(items[i])
		}
	}
	clear(items)
	for range 50 {
		runtime.GC()
		if gone.Load() == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if gone.Load() != n {
		t.Errorf("%d of %d replaced or deleted items are still reachable", n-gone.Load(), n)
	}
	runtime.KeepAlive(tr)
}

// A replace in nodes the tree owns allocates nothing, sharing or not: an
// item whose address went to share would move to the heap on every
// insert, at every level (24 allocations per HTTP create, once).
func TestReplaceInPlaceAllocatesNothing(t *testing.T) {
	items := make([]named, 10_000)
	for i := range items {
		items[i] = named{"k", i}
	}
	tr := Build(byName, items)
	tr.Share(shareName)
	tr.Set(named{"k", 1}) // the first write makes the path the tree's own
	if got := testing.AllocsPerRun(100, func() { tr.Set(named{"k", 5000}) }); got != 0 {
		t.Errorf("a replace allocates %.1f times", got)
	}
}
