package example

import (
	"strconv"
	"testing"
	"time"
)

// TestReadLinksAgreesWithEncodingJSON checks the reconcile's one-pass
// reader against encoding/json on stored Persons and on what it must
// leave to encoding/json.
func TestReadLinksAgreesWithEncodingJSON(t *testing.T) {
	m := PersonModel()
	friend, count := "lg-7", int64(3)
	now := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	stored := func(edit func(p *Person)) string {
		age, email := int64(42), "p42@example.com"
		p := &Person{Spec: PersonSpec{Name: "Person 42", Age: &age, Email: &email, Tags: []string{"a", "b"}}}
		p.APIVersion, p.Kind = m.APIVersion(), m.Kind
		p.Metadata.Name = "lg-42"
		p.Metadata.Labels = map[string]string{"team": "t2"}
		p.Metadata.CreationTimestamp = &now
		p.Metadata.SetVersion(7)
		edit(p)
		data, err := m.EncodeJSON(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	cases := []struct {
		name string
		doc  string
		fast bool // readLinksFast is sure of it
	}{
		{"friend and count", stored(func(p *Person) { p.Spec.Friend = &friend; p.Status = &PersonStatus{FriendCount: &count} }), true},
		{"neither", stored(func(*Person) {}), true},
		{"being deleted", stored(func(p *Person) { p.Metadata.DeletionTimestamp = &now; p.Metadata.Finalizers = []string{"f"} }), true},
		{"members skipped", `{"a":[1,{"b":null}],"metadata":{"x":{"y":[]},"name":"n"},"spec":{"tags":["friend"],"friend":"f"},"status":{"friendCount":2,"z":true}}`, true},
		{"friend null", `{"spec":{"friend":null}}`, false},
		{"count null", `{"status":{"friendCount":null}}`, false},
		{"deletion null", `{"metadata":{"deletionTimestamp":null}}`, false},
		{"status null", `{"status":null,"spec":{"friend":"f"}}`, false},
		{"a name in another case", `{"Spec":{"friend":"f"}}`, false},
		{"a nested name in another case", `{"spec":{"FRIEND":"f"}}`, false},
		{"an escaped name", `{"spec":{"fr\u0069end":"f"}}`, false},
		{"a fractional count", `{"status":{"friendCount":1.5}}`, false},
		{"not JSON", `{"spec":`, false},
		{"trailing data", `{"spec":{}} {}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, wantErr := readLinksJSON([]byte(c.doc))
			fast, ok := readLinksFast([]byte(c.doc))
			if ok != c.fast {
				t.Fatalf("readLinksFast sure = %v, want %v", ok, c.fast)
			}
			if ok && !sameLinks(fast, want) {
				t.Fatalf("readLinksFast = %s, encoding/json = %s", showLinks(fast), showLinks(want))
			}
			got, err := readLinks([]byte(c.doc))
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("readLinks error %v, encoding/json's %v", err, wantErr)
			}
			if err == nil && !sameLinks(got, want) {
				t.Fatalf("readLinks = %s, encoding/json = %s", showLinks(got), showLinks(want))
			}
		})
	}
}

func sameLinks(a, b personLinks) bool {
	return a.deleting == b.deleting &&
		(a.friend == nil) == (b.friend == nil) && (a.friend == nil || *a.friend == *b.friend) &&
		(a.count == nil) == (b.count == nil) && (a.count == nil || *a.count == *b.count)
}

func showLinks(l personLinks) string {
	s := "{deleting:"
	if l.deleting {
		s += "true"
	} else {
		s += "false"
	}
	if l.friend != nil {
		s += " friend:" + *l.friend
	}
	if l.count != nil {
		s += " count:" + strconv.FormatInt(*l.count, 10)
	}
	return s + "}"
}

// BenchmarkReadLinks is what a reconcile reads of a stored Person: the
// one-pass reader against encoding/json.
func BenchmarkReadLinks(b *testing.B) {
	m := PersonModel()
	obj, ok := fastDecode([]byte(benchBody))
	if !ok {
		b.Fatal("fast path refused the body")
	}
	data, err := m.EncodeJSON(nil, obj)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []struct {
		name string
		read func([]byte) (personLinks, error)
	}{{"fast", readLinks}, {"encoding-json", readLinksJSON}} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if l, err := r.read(data); err != nil || l.friend == nil {
					b.Fatal(err)
				}
			}
		})
	}
}
