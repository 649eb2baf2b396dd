package record_test

import (
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store/internal/record"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// TestAdoptKeepsEveryKeyInItsSection: what a record answers from its keys
// section is what the model's index functions and the metadata give.
func TestAdoptKeepsEveryKeyInItsSection(t *testing.T) {
	m := storetest.PersonModel()
	p := storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann", Age: storetest.Int64(41), Tags: []string{"b", "a", "b", "c"}})
	p.Metadata.Labels = map[string]string{"team": "x", "app": "y"}
	p.Metadata.Finalizers = []string{"example.com/f"}
	created, deleted := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC)
	p.Metadata.CreationTimestamp, p.Metadata.DeletionTimestamp = object.Timestamp(created), object.Timestamp(deleted)
	r := record.New(m, p, []byte(`{}`))

	if got, want := record.AppendLabels(r, nil), []string{string(model.LabelKey("app", "y")), string(model.LabelKey("team", "x"))}; !slices.Equal(got, want) {
		t.Errorf("labels = %q, want %q", got, want)
	}
	if v, ok := r.Get("team"); !ok || v != "x" {
		t.Errorf(`Get("team") = %q, %v`, v, ok)
	}
	if _, ok := r.Get("tea"); ok {
		t.Error(`Get("tea") found a label`)
	}
	if record.Creation(r) != model.TimeKey(created) || record.Deletion(r) != model.TimeKey(deleted) || !record.Pending(r) || !r.Deleting() {
		t.Errorf("creation %q, deletion %q, pending %v", record.Creation(r), record.Deletion(r), record.Pending(r))
	}
	if record.FP(r) != m.KeysFingerprint() || !record.Indexed(r) {
		t.Errorf("FP %#x, want %#x; indexed %v", record.FP(r), m.KeysFingerprint(), record.Indexed(r))
	}
	if r.Sig != record.LabelSig(record.AppendLabels(r, nil)) || r.Sig == 0 {
		t.Errorf("Sig = %#x", r.Sig)
	}
	if record.NumIndexes(r) != len(m.Indexes) {
		t.Fatalf("%d indexes, want %d", record.NumIndexes(r), len(m.Indexes))
	}
	for i, ix := range m.Indexes {
		want := ix.Keys(p, nil)
		if ix.Multi {
			slices.Sort(want)
			want = slices.Compact(want)
		}
		got := record.AppendKeys(r, i, []model.Key(nil))
		if !slices.Equal(got, want) {
			t.Errorf("%s: keys %q, want %q", ix.Name, got, want)
		}
		if record.NumKeys(r, i) != len(want) {
			t.Errorf("%s: NumKeys %d, want %d", ix.Name, record.NumKeys(r, i), len(want))
		}
		first, ok1 := record.EdgeKey(r, i, false)
		last, ok2 := record.EdgeKey(r, i, true)
		if len(want) == 0 {
			if ok1 || ok2 {
				t.Errorf("%s: an edge key without keys", ix.Name)
			}
			continue
		}
		if first != want[0] || last != want[len(want)-1] || !ok1 || !ok2 {
			t.Errorf("%s: edge keys %q %q, want %q %q", ix.Name, first, last, want[0], want[len(want)-1])
		}
	}
}

// TestAdoptCompactsOnlyWithinAnIndex: duplicates are dropped inside a
// multi-valued index, never across two indexes that happen to share a key.
func TestAdoptCompactsOnlyWithinAnIndex(t *testing.T) {
	keys := func(vals ...string) func(object.Object, []model.Key) []model.Key {
		return func(_ object.Object, dst []model.Key) []model.Key {
			for _, v := range vals {
				dst = append(dst, model.StringKey(v))
			}
			return dst
		}
	}
	m := storetest.PersonModel()
	m.Indexes = []model.Index{
		{Name: "one", Type: model.String, Multi: true, Keys: keys("b", "a", "b")},
		{Name: "two", Type: model.String, Multi: true, Keys: keys("b", "c")},
	}
	r := record.New(m, storetest.NewPerson("ann", storetest.PersonSpec{}), []byte(`{}`))
	for i, want := range [][]model.Key{{model.StringKey("a"), model.StringKey("b")}, {model.StringKey("b"), model.StringKey("c")}} {
		if got := record.AppendKeys(r, i, []model.Key(nil)); !slices.Equal(got, want) {
			t.Errorf("index %d: %q, want %q", i, got, want)
		}
	}
}

// TestUnpackRefusesMalformedSections: a section cut short, with bytes
// left over, or with a count larger than what follows is refused and
// leaves the record unindexed; a whole one is taken.
func TestUnpackRefusesMalformedSections(t *testing.T) {
	whole := &record.Record{Name: "a"}
	record.SetKeys(whole, 7, []string{"l\x00v\x00"}, "c", "", false, [][]model.Key{{"k1", "k2"}, nil})
	sec := whole.Sec
	for n := range len(sec) {
		r := &record.Record{Sec: sec[:n]}
		if record.Unpack(r) || record.Indexed(r) {
			t.Errorf("a section cut to %d of %d bytes was taken", n, len(sec))
		}
	}
	if r := (&record.Record{Sec: sec + "x"}); record.Unpack(r) {
		t.Error("a section with a byte left over was taken")
	}
	// Labels count 2^62 with one label behind it.
	forged := sec[:8] + "\x80\x80\x80\x80\x80\x80\x80\x80\x40" + sec[9:]
	if r := (&record.Record{Sec: forged}); record.Unpack(r) {
		t.Error("a forged count was taken")
	}
	r := &record.Record{Sec: sec}
	if !record.Unpack(r) || record.NumKeys(r, 0) != 2 || record.NumKeys(r, 1) != 0 || record.Creation(r) != "c" {
		t.Errorf("the whole section: indexed %v, %+v", record.Indexed(r), r)
	}
}

// FuzzUnpack: no section, however forged, makes Unpack or the accessors
// panic, and a section built from what they read out of one Unpack takes
// reads back the same.
func FuzzUnpack(f *testing.F) {
	r := &record.Record{}
	record.SetKeys(r, 7, []string{"a\x00b\x00"}, "c", "d", true, [][]model.Key{{"k"}, nil, {"x", "y"}})
	f.Add([]byte(r.Sec))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := &record.Record{Sec: string(b)}
		if !record.Unpack(r) {
			return
		}
		var keys [][]model.Key
		for i := range record.NumIndexes(r) {
			keys = append(keys, record.AppendKeys(r, i, []model.Key(nil)))
			record.EdgeKey(r, i, true)
		}
		again := &record.Record{}
		record.SetKeys(again, record.FP(r), record.AppendLabels(r, nil), record.Creation(r), record.Deletion(r), record.Pending(r), keys)
		// Not byte for byte: a forged uvarint may carry padding bytes.
		if record.Creation(again) != record.Creation(r) || record.Pending(again) != record.Pending(r) || record.Deletion(again) != record.Deletion(r) || again.Sig != r.Sig || record.FP(again) != record.FP(r) ||
			!slices.Equal(record.AppendLabels(again, nil), record.AppendLabels(r, nil)) || record.NumIndexes(again) != len(keys) {
			t.Fatalf("rebuilt %+v, want %+v", again, r)
		}
		for i := range keys {
			if !slices.Equal(record.AppendKeys(again, i, []model.Key(nil)), keys[i]) {
				t.Fatalf("index %d rebuilt differently", i)
			}
		}
	})
}

// TestRecordSize: a Record fits the allocator's 112-byte size class; one
// field more costs 16 bytes per stored object (docs/performance.md).
func TestRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(record.Record{}); n > 112 {
		t.Errorf("a Record takes %d bytes; every stored object has one", n)
	}
	r := record.New(storetest.PersonModel(), storetest.NewPerson("bob", storetest.PersonSpec{Name: "Bob"}), []byte(`{}`))
	if r.Deleting() || record.Deletion(r) != "" {
		t.Errorf("a record without a deletionTimestamp: deleting %v, key %q", r.Deleting(), record.Deletion(r))
	}
}
