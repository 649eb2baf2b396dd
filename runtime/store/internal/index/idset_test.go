package index

import (
	"math/rand/v2"
	"testing"
)

// TestIDSet covers both representations: the bitmap for ids below
// maxBitmapID and the map beyond, as a table that has seen many more
// objects than it holds would need.
func TestIDSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	want := map[uint32]bool{}
	var s IDSet
	for range 2000 {
		id := rng.Uint32N(4096)
		if rng.IntN(4) == 0 {
			id = MaxBitmapID + rng.Uint32N(1<<20)
		}
		s.Add(id)
		want[id] = true
	}
	s.Add(0)
	s.Add(^uint32(0))
	want[0], want[^uint32(0)] = true, true
	for id := range want {
		if !s.Has(id) {
			t.Fatalf("has(%d) = false after add", id)
		}
	}
	for range 20000 {
		id := rng.Uint32()
		if rng.IntN(2) == 0 {
			id %= 8192 // also past the bitmap's last word
		}
		if s.Has(id) != want[id] {
			t.Fatalf("has(%d) = %v, want %v", id, s.Has(id), want[id])
		}
	}
	if len(s.Bits) > 4096/64 {
		t.Errorf("bitmap of %d words for ids below 4096", len(s.Bits))
	}
}
