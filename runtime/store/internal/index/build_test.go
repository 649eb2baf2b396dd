package index

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// referenceSort is the obvious stable sort sortKeys must agree with.
func referenceSort(keys []string) []int32 {
	perm := make([]int32, len(keys))
	for j := range perm {
		perm[j] = int32(j)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return strings.Compare(keys[a], keys[b]) })
	return perm
}

func TestSortKeysAgreesWithAStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"", "\x00", "a", "b", "\xff", "person-", "Person Number ", "0000000"}
	gen := map[string]func() string{
		// Few distinct values: the counting sort.
		"few": func() string { return alphabet[rng.IntN(len(alphabet))] },
		// Many values sharing a long prefix, some exactly the prefix, some
		// ending in zero bytes: the prefix sort and its ties.
		"prefixed": func() string {
			switch rng.IntN(10) {
			case 0:
				return ""
			case 1:
				return "shared-prefix/"
			case 2:
				return "shared-prefix/" + strings.Repeat("\x00", rng.IntN(12))
			}
			return fmt.Sprintf("shared-prefix/%d%s", rng.IntN(20000), strings.Repeat("x", rng.IntN(3)*5))
		},
		// Order-preserving integer keys, negatives included.
		"ints": func() string { return string(model.IntKey(rng.Int64N(1<<20) - 1<<19)) },
		"random": func() string {
			b := make([]byte, rng.IntN(20))
			for i := range b {
				b[i] = byte(rng.IntN(4)) // small alphabet: many shared prefixes
			}
			return string(b)
		},
	}
	// One scratch for every sort, as a build worker reuses it from index to
	// index: growing, shrinking and switching between the two sorts.
	sc := new(Scratch)
	for name, g := range gen {
		for _, n := range []int{0, 1, 2, 100, maxCounted * 3, 7} {
			keys := make([]string, n)
			for i := range keys {
				keys[i] = g()
			}
			if got, want := sc.sortKeys(keys), referenceSort(keys); !slices.Equal(got, want) {
				t.Fatalf("%s, %d keys: sortKeys disagrees with a stable sort", name, n)
			}
		}
	}
}

func TestDefaultOrderIsCreationDescThenName(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]*record.Record, 500)
	for i := range recs {
		r := &record.Record{Name: fmt.Sprintf("r%04d", i)}
		var c model.Key
		if i%50 != 7 { // a few have no creation time
			c = model.TimeKey(base.Add(time.Duration(rng.IntN(40)) * time.Millisecond * 500))
		}
		record.SetKeys(r, 0, nil, c, "", false, nil)
		recs[i] = r
	}
	want := make([]int32, len(recs))
	for i := range want {
		want[i] = int32(i)
	}
	slices.SortFunc(want, func(a, b int32) int {
		if c := strings.Compare(string(record.Creation(recs[b])), string(record.Creation(recs[a]))); c != 0 {
			return c
		}
		return cmp.Compare(recs[a].Name, recs[b].Name)
	})
	if got := DefaultOrder(recs); !slices.Equal(got, want) {
		t.Fatalf("defaultOrder = %v, want %v", got[:10], want[:10])
	}
	// The creation key layout defaultOrder reads: 8 bytes of seconds, 4 of
	// nanoseconds, both big-endian and order-preserving.
	k := model.TimeKey(base.Add(1500 * time.Millisecond))
	if len(k) != 12 || binary.BigEndian.Uint32([]byte(k[8:])) != 500_000_000 {
		t.Fatalf("TimeKey layout changed: %q", k)
	}
}

func FuzzSortKeys(f *testing.F) {
	f.Add([]byte("a\nb\n\nab\na\x00\nb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys := strings.Split(string(data), "\n")
		if got, want := new(Scratch).sortKeys(keys), referenceSort(keys); !slices.Equal(got, want) {
			t.Fatalf("sortKeys(%q) = %v, want %v", keys, got, want)
		}
		if got, want := new(Scratch).prefixSort(keys), referenceSort(keys); !slices.Equal(got, want) {
			t.Fatalf("prefixSort(%q) = %v, want %v", keys, got, want)
		}
	})
}

// TestTieKeyKeepsTheCreationOrder: comparing entries by their packed tie
// keys agrees with comparing their records' creation keys, for times
// inside and outside the packed range, equal ones and missing ones.
func TestTieKeyKeepsTheCreationOrder(t *testing.T) {
	times := []model.Key{""}
	for _, tm := range []time.Time{
		time.Unix(0, 0), time.Unix(-1, 999_999_999), time.Unix(-1<<40, 5),
		time.Unix(1<<34-1, 999_999_999), time.Unix(1<<34, 0), time.Unix(1<<40, 1),
		time.Date(2026, 11, 24, 1, 2, 3, 4, time.UTC), time.Date(2026, 11, 24, 1, 2, 3, 5, time.UTC),
		time.Date(2026, 11, 24, 1, 2, 4, 0, time.UTC),
	} {
		times = append(times, model.TimeKey(tm))
	}
	var recs []*record.Record
	for i, c := range times {
		for _, name := range []string{"a", "b"} {
			r := &record.Record{Name: fmt.Sprint(name, i)}
			record.SetKeys(r, 0, nil, c, "", false, nil)
			recs = append(recs, r)
		}
	}
	// The reference: creation desc (none last), then name.
	ref := func(x, y *record.Record) int {
		if c := strings.Compare(string(record.Creation(y)), string(record.Creation(x))); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	}
	for _, x := range recs {
		for _, y := range recs {
			got := Compare(newEntry("k", x), newEntry("k", y))
			if want := ref(x, y); cmp.Compare(got, 0) != cmp.Compare(want, 0) {
				t.Errorf("compare(%q %s, %q %s) = %d, want the sign of %d", record.Creation(x), x.Name, record.Creation(y), y.Name, got, want)
			}
		}
	}
}
