package record_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"

	"github.com/svcrun/svc/runtime/store/internal/record"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// A record's Data is its own, exactly as long as the JSON: JSON handed in
// as part of a larger buffer (a request body, an encoder's) must not keep
// that buffer alive for as long as the object is stored.
func TestNewDoesNotRetainTheBuffer(t *testing.T) {
	m := storetest.PersonModel()
	p := storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann"})
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for _, at := range []int{0, 4096, len(buf) - len(js)} {
		data := buf[at : at+len(js)]
		copy(data, js)
		r := record.New(m, p, data)
		if string(r.Data) != string(js) {
			t.Fatalf("Data = %s, want %s", r.Data, js)
		}
		start, end := uintptr(unsafe.Pointer(unsafe.SliceData(buf))), uintptr(unsafe.Pointer(unsafe.SliceData(buf)))+uintptr(len(buf))
		if d := uintptr(unsafe.Pointer(unsafe.SliceData(r.Data))); d >= start && d < end {
			t.Errorf("JSON at offset %d of a 1 MiB buffer: the record's Data points into the buffer", at)
		}
		if cap(r.Data) > len(js)+len(js)/8 {
			t.Errorf("cap(Data) = %d for %d bytes of JSON", cap(r.Data), len(js))
		}
	}
}

// A written record is laid out as a restored one (store.rawRecord, both
// through record.Room): an object of this size has its JSON and its keys
// section in one allocation of exactly their size. A second layout would
// leave the holes that replaced restored records leave in the heap for no
// other allocation to fill.
func TestNewHoldsJSONAndKeysInOneAllocation(t *testing.T) {
	m := storetest.PersonModel()
	p := storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann", Tags: []string{"a", "b"}})
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	scratch := append(make([]byte, 0, 4096), js...) // room after the JSON, as an encoder's buffer has
	r := record.New(m, p, scratch)
	if cap(r.Data) != len(js) {
		t.Errorf("cap(Data) = %d, want %d", cap(r.Data), len(js))
	}
	if !sectionFollowsJSON(r) {
		t.Error("the keys section is not right after the JSON")
	}
	scratch[0] = 'x'
	if string(r.Data) != string(js) {
		t.Error("the record's JSON changed with the buffer it was made from")
	}
}

// TestNewTakesTwoAllocationsWhereTheyAreSmaller: a JSON that nearly fills
// its size class keeps it, and the keys section goes apart (record.Room).
func TestNewTakesTwoAllocationsWhereTheyAreSmaller(t *testing.T) {
	m := storetest.PersonModel()
	p := storetest.NewPerson("ann", storetest.PersonSpec{Name: "Ann", Tags: []string{"a", "b"}})
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// An annotation (no index reads it) that brings the JSON to 4,090
	// bytes: 4,096 is a size class.
	p.Metadata.Annotations = map[string]string{"pad": ""}
	if js, err = json.Marshal(p); err != nil {
		t.Fatal(err)
	}
	p.Metadata.Annotations["pad"] = strings.Repeat("x", 4090-len(js))
	if js, err = json.Marshal(p); err != nil || len(js) != 4090 {
		t.Fatalf("JSON of %d bytes, %v", len(js), err)
	}
	r := record.New(m, p, js)
	if string(r.Data) != string(js) || cap(r.Data) != len(js) {
		t.Fatalf("Data of %d bytes, cap %d, want the %d of the JSON", len(r.Data), cap(r.Data), len(js))
	}
	if sectionFollowsJSON(r) {
		t.Errorf("the keys section (%d bytes) shares the JSON's allocation: %d bytes where 4,096 + its own would do", len(r.Sec), len(js)+len(r.Sec))
	}
	if !record.Indexed(r) || record.Creation(r) == "" && p.Metadata.CreationTimestamp != nil {
		t.Error("the record's keys do not read back")
	}
}

// sectionFollowsJSON reports whether r's keys section starts where its
// JSON ends, as in one allocation. In integers: a pointer past the end of
// an allocation is not allowed (checkptr, under -race).
func sectionFollowsJSON(r *record.Record) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(r.Data)))+uintptr(len(r.Data)) == uintptr(unsafe.Pointer(unsafe.StringData(r.Sec)))
}
