package record

import (
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"
)

// TestAllocSizeIsTheAllocators: allocSize gives what the allocator takes
// for a slice of bytes, small and large, at every class's edges, as the
// heap's own count of bytes allocated says (not the append rounding that
// the classes were probed with).
func TestAllocSizeIsTheAllocators(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// Below 16 bytes the tiny allocator packs slices together; a record's
	// keys section alone is longer.
	sizes := []int{16, 17, maxSmall - 1, maxSmall, maxSmall + 1, 40_000, 100_000, 1 << 20}
	for _, c := range classes {
		if c >= 16 {
			sizes = append(sizes, c-1, c, c+1)
		}
	}
	for range 300 {
		sizes = append(sizes, 16+rand.IntN(70_000))
	}
	for _, n := range sizes {
		if got, want := allocSize(n), allocated(n); got != want {
			t.Fatalf("allocSize(%d) = %d, the allocator takes %d", n, got, want)
		}
	}
	if len(classes) < 30 {
		t.Fatalf("only %d size classes probed: %v", len(classes), classes)
	}
}

var sink []byte

// allocated returns the heap bytes one make([]byte, n) takes: the least
// of three tries, since another goroutine may allocate between the reads.
func allocated(n int) int {
	least := math.MaxInt
	var before, after runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&before)
		sink = make([]byte, n)
		runtime.ReadMemStats(&after)
		least = min(least, int(after.TotalAlloc-before.TotalAlloc))
	}
	sink = nil
	return least
}

// TestRoomTakesFewerBytes: Room shares one allocation exactly when two
// would take no fewer bytes, and gives exact lengths and capacities.
func TestRoomTakesFewerBytes(t *testing.T) {
	adjacent := func(data, sec []byte) bool {
		// In integers: a pointer past the end of an allocation is not
		// allowed (checkptr, under -race).
		return uintptr(unsafe.Pointer(unsafe.SliceData(data)))+uintptr(len(data)) == uintptr(unsafe.Pointer(unsafe.SliceData(sec)))
	}
	for _, c := range []struct {
		n, k int
		one  bool
	}{
		{3957, 147, false}, // 4,864 together, 4,096 + 160 apart
		{520, 100, true},   // 640 together, 576 + 112 apart
		{300, 0, true},
	} {
		data, sec := Room(c.n, c.k)
		if len(data) != c.n || cap(data) != c.n || len(sec) != c.k || cap(sec) != c.k {
			t.Fatalf("Room(%d, %d): len/cap %d/%d and %d/%d", c.n, c.k, len(data), cap(data), len(sec), cap(sec))
		}
		if c.k > 0 && adjacent(data, sec) != c.one {
			t.Errorf("Room(%d, %d): one allocation = %v, want %v", c.n, c.k, !c.one, c.one)
		}
	}
	for range 5000 {
		n, k := 1+rand.IntN(20_000), 1+rand.IntN(400)
		data, sec := Room(n, k)
		one := allocSize(n+k) <= allocSize(n)+allocSize(k)
		if !one && allocSize(n) == n {
			continue // two allocations that may sit side by side by chance
		}
		if adjacent(data, sec) != one {
			t.Fatalf("Room(%d, %d): one allocation = %v; together %d bytes, apart %d + %d", n, k, !one, allocSize(n+k), allocSize(n), allocSize(k))
		}
	}
}
