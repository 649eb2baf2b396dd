package record

import (
	"slices"
	"unsafe"
)

// Room returns room for a record's JSON, n bytes, and its keys section,
// k bytes: data and sec, of exactly those lengths and capacities. They
// share one allocation, the section right after the JSON, unless two
// allocations of their own take fewer of the allocator's bytes. Go rounds
// every allocation up to a size class, and one whose JSON nearly fills a
// class overflows it with the section: a 3,957-byte JSON and its 147-byte
// section take 4,864 bytes together, 4,096 + 160 apart, 600 bytes less
// per object (docs/performance.md, "Size classes"). Written and restored
// records both take their room here, so a write lands in the size class
// of the restored record it replaces and fills the hole it leaves.
func Room(n, k int) (data, sec []byte) {
	if k == 0 || allocSize(n)+allocSize(k) >= allocSize(n+k) {
		buf := make([]byte, n+k)
		return buf[:n:n], buf[n:]
	}
	return make([]byte, n), make([]byte, k)
}

// Section returns sec, room from Room, as a record's Sec.
func Section(sec []byte) string {
	if len(sec) == 0 {
		return ""
	}
	return unsafe.String(&sec[0], len(sec)) // sec is never written again
}

// classes are the allocator's small size classes, ascending, as the
// runtime reports them (see probeClasses).
var classes = probeClasses()

// maxSmall is the largest small allocation; larger ones take whole pages.
const (
	maxSmall = 32 << 10
	pageSize = 8 << 10
)

// probeClasses asks the runtime for its size classes: append rounds a
// new slice's capacity up to the class it allocates from. A few dozen
// allocations, once.
func probeClasses() []int {
	var cs []int
	for n := 1; n <= maxSmall; {
		c := cap(append([]byte(nil), make([]byte, n)...))
		cs = append(cs, c)
		n = c + 1
	}
	return cs
}

// allocSize is how many bytes the allocator takes for an n-byte slice of
// bytes.
func allocSize(n int) int {
	if n == 0 {
		return 0
	}
	if n > maxSmall {
		return (n + pageSize - 1) / pageSize * pageSize
	}
	i, _ := slices.BinarySearch(classes, n)
	return classes[i]
}
