package index

import (
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Entries counts what Reindex writes: the keys entryKeys gives over every
// index, and stops counting just past its limit.
func TestEntriesCountsWhatIsIndexed(t *testing.T) {
	a, b, c := &record.Record{Name: "a"}, &record.Record{Name: "b"}, &record.Record{Name: "c"}
	record.SetKeys(a, 1, []string{"x=1", "y=2"}, "", "", false, [][]model.Key{{"k"}, nil, {"m", "n", "o"}})
	record.SetKeys(b, 1, nil, "", "2026", false, [][]model.Key{nil})
	recs := []*record.Record{a, b, c}
	for _, r := range recs {
		want := 0
		for ix := 0; ix < NumDefault+record.NumIndexes(r); ix++ {
			want += len(entryKeys(r, ix, nil))
		}
		if got := Entries(r, 1000); got != want {
			t.Errorf("%s: Entries = %d, entryKeys give %d", r.Name, got, want)
		}
	}
	if got := Entries(recs[0], 2); got != 3 { // labels and creation: past 2, so no key is counted
		t.Errorf("limited count = %d, want just past 2", got)
	}
}
