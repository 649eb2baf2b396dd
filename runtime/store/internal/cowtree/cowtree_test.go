package cowtree

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// kv items compare by k only, so that Set's replacing shows in v.
type kv struct{ k, v int }

func byK(a, b kv) int { return cmp.Compare(a.k, b.k) }

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
	tr.Reverse(func(e kv) bool { got = append(got, e); return true })
	slices.Reverse(got)
	if !slices.Equal(got, m) {
		t.Fatalf("Reverse disagrees")
	}
	if mx, ok := tr.Max(); ok != (len(m) > 0) || ok && mx != m[len(m)-1] {
		t.Fatalf("Max = %v %v", mx, ok)
	}
	if tr.root != nil {
		if d := invariants(t, tr, tr.root, true); d < 0 {
			t.Fatal("uneven depth")
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
		var down []kv
		tr.Descend(p, func(e kv) bool { down = append(down, e); return len(down) < limit })
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
			tr := Build(byK, m)
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
		tr := New(byK)
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
	tr := New(cmp.Compare[int])
	for _, v := range []int{5, 1, 4} {
		tr.Set(v)
	}
	snap := tr.Copy()
	tr.Delete(4)
	r := tr.Rank(5)
	fmt.Println(tr.Len(), snap.Len(), r)
	// Output: 2 3 1
}
