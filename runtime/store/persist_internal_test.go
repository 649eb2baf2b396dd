package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// TestSettleKeepsEachNamesOutcome: a restore puts into memdb, of each name's
// records in the order they were written, the last one, and nothing for
// a name whose last record is a removal, whatever order the names come in.
func TestSettleKeepsEachNamesOutcome(t *testing.T) {
	tb := &table{key: "g/persons"}
	tb.state.Store(&tableState{db: index.NewDB()})
	rec := func(name string, v int64) restored {
		return restored{t: tb, name: name, rec: &Record{Name: name, Version: v}}
	}
	gone := func(name string) restored { return restored{t: tb, name: name} }
	rs := []restored{rec("m", 1), rec("b", 1), gone("m"), rec("z", 1), rec("m", 2), gone("b"), rec("a", 1), rec("z", 2), rec("z", 3), gone("q")}
	if err := settle(tb, rs); err != nil {
		t.Fatal(err)
	}
	if got, want := holding(t, tb), []string{"a@1", "m@2", "z@3"}; !slices.Equal(got, want) {
		t.Fatalf("memdb holds %q, want %q", got, want)
	}
}

// holding lists tb's memdb as name@version, in name order.
func holding(t *testing.T, tb *table) []string {
	t.Helper()
	recs, err := index.AllRecords(tb.state.Load().db)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s@%d", r.Name, r.Version))
	}
	return out
}

// TestRawRecordSharesOneBuffer: a restored record's JSON and keys share
// one allocation, and appending to the JSON cannot reach the keys.
func TestRawRecordSharesOneBuffer(t *testing.T) {
	keys := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	r := rawRecord(logEntry{name: "ann", version: 2, data: []byte(`{"a":1}`), keys: keys}, 0)
	if string(r.Data) != `{"a":1}` || r.Sec != string(keys) {
		t.Fatalf("Data %q, Sec %v", r.Data, []byte(r.Sec))
	}
	if unsafe.Pointer(unsafe.StringData(r.Sec)) != unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.Data)), len(r.Data)) {
		t.Fatal("the keys do not follow the JSON in one allocation")
	}
	if cap(r.Data) != len(r.Data) {
		t.Fatalf("cap(Data) = %d, len %d: an append would write over the keys", cap(r.Data), len(r.Data))
	}
	_ = append(r.Data, 'x')
	if r.Sec != string(keys) {
		t.Fatalf("keys after an append to Data = %v", []byte(r.Sec))
	}
	if fp := record.FP(r); fp != 0x0807060504030201 {
		t.Errorf("FP = %#x", fp)
	}
	plain := rawRecord(logEntry{name: "bob", data: []byte(`{}`)}, 7)
	if plain.Sec != "" || string(plain.Data) != `{}` || plain.Rev != 7 {
		t.Errorf("record without keys = %+v", plain)
	}
}

// TestLoaderRestoresInAnyOrder: whatever order a backend delivers records
// in, in or out of name order, with removals and names written again, the
// loader's tables end up holding each name's last record.
func TestLoaderRestoresInAnyOrder(t *testing.T) {
	put := func(table, name string, v int64) []byte {
		return encodePut(table, &Record{Name: name, Version: v, Data: []byte(`{}`)})
	}
	cases := map[string][][]byte{
		"in order":       {put("t", "a", 1), put("t", "b", 1), put("t", "c", 1)},
		"out of order":   {put("t", "c", 1), put("t", "a", 1), put("t", "b", 1)},
		"removed first":  {encodeRemove("t", "d"), put("t", "a", 1), put("t", "b", 1), put("t", "c", 1), put("t", "d", 2), encodeRemove("t", "d")},
		"removed, again": {put("t", "a", 1), put("t", "c", 1), encodeRemove("t", "b"), put("t", "b", 1), encodeRemove("t", "c"), put("t", "c", 2)},
		"written again":  {put("t", "b", 1), put("t", "c", 9), put("t", "a", 5), put("t", "c", 2), put("t", "a", 1), put("t", "b", 1), put("u", "x", 1)},
	}
	want := map[string][]string{
		"in order":       {"t/a@1", "t/b@1", "t/c@1"},
		"out of order":   {"t/a@1", "t/b@1", "t/c@1"},
		"removed first":  {"t/a@1", "t/b@1", "t/c@1"},
		"removed, again": {"t/a@1", "t/b@1", "t/c@2"},
		"written again":  {"t/a@1", "t/b@1", "t/c@2", "u/x@1"},
	}
	for name, payloads := range cases {
		t.Run(name, func(t *testing.T) {
			s := &Store{}
			empty := map[string]*table{}
			s.tables.Store(&empty)
			l := newLoader(s)
			for _, p := range payloads {
				if err := l.apply(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.finish(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, key := range []string{"t", "u"} {
				if tb, ok := (*s.tables.Load())[key]; ok {
					for _, h := range holding(t, tb) {
						got = append(got, key+"/"+h)
					}
				}
			}
			if !slices.Equal(got, want[name]) {
				t.Fatalf("restored %q, want %q", got, want[name])
			}
		})
	}
}

// TestClaimCopiesJSONFromStaleKeys: a restored record whose keys were
// computed under another fingerprint is decoded again; the new record's
// JSON is its own, not the raw record's, whose allocation holds the stale
// keys too.
func TestClaimCopiesJSONFromStaleKeys(t *testing.T) {
	m := &model.Model{Group: "g.example.com", Version: "v1", Kind: "Thing", Plural: "things",
		New: func() object.Object { return &spliced{} }}
	fp := m.KeysFingerprint()
	stale := binary.LittleEndian.AppendUint64(nil, fp+1)
	data := []byte(`{"apiVersion":"g.example.com/v1","kind":"Thing","metadata":{"name":"a","version":1},"spec":{"note":"x"}}`)
	raw := rawRecord(logEntry{name: "a", version: 1, data: data, keys: stale}, 0)
	rec, err := claim(m, fp, raw)
	if err != nil {
		t.Fatal(err)
	}
	if rec == raw || record.FP(rec) != fp || !bytes.Equal(rec.Data, data) {
		t.Fatalf("claim = %+v, want a record decoded again under %#x", rec, fp)
	}
	if &rec.Data[0] == &raw.Data[0] {
		t.Error("the claimed record's JSON shares the raw record's allocation, stale keys and all")
	}
}
