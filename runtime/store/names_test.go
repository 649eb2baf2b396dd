package store

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// check compares n with want entry by entry and checks that every name
// can be reached from its home slot without crossing a free one.
func (n *names) check(t *testing.T, want map[string]*Record) {
	t.Helper()
	if n.len() != len(want) {
		t.Fatalf("len %d, want %d", n.len(), len(want))
	}
	for name, r := range want {
		if got, ok := n.get(name); !ok || got != r {
			t.Fatalf("get(%q) = %p, %v; want %p", name, got, ok, r)
		}
	}
	seen := 0
	for r := range n.all {
		seen++
		if want[r.Name] != r {
			t.Fatalf("all yields %q, which is not held", r.Name)
		}
	}
	if seen != len(want) {
		t.Fatalf("all yields %d records, want %d", seen, len(want))
	}
	if float64(n.n) > maxLoad*float64(len(n.recs)) {
		t.Fatalf("%d names in %d slots: over the maximum load", n.n, len(n.recs))
	}
	for i, tg := range n.tags {
		if (tg == 0) != (n.recs[i] == nil) {
			t.Fatalf("slot %d: tag %d beside record %p", i, tg, n.recs[i])
		}
	}
}

func TestNamesAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]*Record{}
	n := newNames(nil)
	// A small name space makes clusters, replacements and removals of
	// names in the middle of a cluster frequent; the counts pass through
	// several grows and shrinks.
	for round, space := range []int{50, 5000, 300, 20} {
		for i := range 20000 {
			name := fmt.Sprintf("obj-%d", rng.IntN(space))
			switch op := rng.IntN(10); {
			case op < 5 || round == 1 && op < 8:
				r := &Record{Name: name, Version: int64(i)}
				n.set(r)
				want[name] = r
			default:
				n.delete(name)
				delete(want, name)
			}
			if i%997 == 0 {
				n.check(t, want)
			}
		}
		n.check(t, want)
	}
	for name := range want {
		n.delete(name)
	}
	n.check(t, map[string]*Record{})
	if _, ok := n.get("obj-1"); ok {
		t.Fatal("a name is found in an emptied table")
	}
}

func TestNamesFromRecords(t *testing.T) {
	want := map[string]*Record{}
	var recs []*Record
	for i := range 1000 {
		r := &Record{Name: fmt.Sprintf("p-%04d", i)}
		recs = append(recs, r)
		want[r.Name] = r
	}
	again := &Record{Name: "p-0007"} // a name twice: the last wins
	recs = append(recs, again)
	want[again.Name] = again
	n := newNames(recs)
	n.check(t, want)
	if _, ok := n.get("p-1000"); ok {
		t.Fatal("a name never set is found")
	}
}

// Readers look names up while the committer sets and deletes others and
// the table grows and shrinks under them (run with -race).
func TestNamesReadersDuringWrites(t *testing.T) {
	stable := make([]*Record, 200)
	for i := range stable {
		stable[i] = &Record{Name: fmt.Sprintf("stable-%d", i)}
	}
	n := newNames(stable)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				r := stable[i%len(stable)]
				if got, ok := n.get(r.Name); !ok || got != r {
					t.Errorf("get(%q) = %p, %v during writes", r.Name, got, ok)
					return
				}
			}
		})
	}
	for round := range 5 {
		for i := range 3000 {
			n.set(&Record{Name: fmt.Sprintf("churn-%d-%d", round, i)})
		}
		for i := range 3000 {
			n.delete(fmt.Sprintf("churn-%d-%d", round, i))
		}
	}
	close(done)
	wg.Wait()
}

// The table's reason to exist beside a Go map is its size: at 100k names
// it must stay under 16 B a name (a map[string]*Record takes ~41).
func TestNamesSize(t *testing.T) {
	const count = 100_000
	recs := make([]*Record, count)
	for i := range recs {
		recs[i] = &Record{Name: fmt.Sprintf("person-%06d", i)}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := newNames(recs)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(recs)
	per := float64(after.HeapAlloc-before.HeapAlloc) / count
	if _, ok := n.get("person-004242"); !ok {
		t.Fatal("a name is missing")
	}
	t.Logf("%.1f B per name, %d slots", per, len(n.recs))
	if per > 16 {
		t.Fatalf("%.1f B per name, want at most 16", per)
	}
}
