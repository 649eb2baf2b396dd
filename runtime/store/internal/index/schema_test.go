package index

import (
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// TestNameKeyAllocsOnce: memdb's name key is built in one allocation,
// whether memdb indexes a record (the key it keeps for as long as the
// object is stored) or looks a name up, and it is model.StringKey.
func TestNameKeyAllocsOnce(t *testing.T) {
	r := &record.Record{Name: "ann\x00x"}
	var ix nameIndexer
	for _, tc := range []struct {
		what string
		key  func() []byte
	}{
		{"FromObject", func() []byte { _, k, _ := ix.FromObject(r); return k }},
		{"FromArgs", func() []byte { k, _ := ix.FromArgs(r.Name); return k }},
	} {
		if got := tc.key(); string(got) != string(model.StringKey(r.Name)) {
			t.Errorf("%s = %q, want StringKey", tc.what, got)
		}
		if n := testing.AllocsPerRun(100, func() { tc.key() }); n != 1 {
			t.Errorf("%s: %v allocations, want 1", tc.what, n)
		}
	}
}
