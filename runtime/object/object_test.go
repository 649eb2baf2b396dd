package object

import (
	"slices"
	"testing"
	"time"
)

func TestNormalizeFinalizers(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{name: "nil", in: nil, want: nil},
		{name: "empty becomes nil", in: []string{}, want: nil},
		{name: "one", in: []string{"a"}, want: []string{"a"}},
		{name: "already a sorted set", in: []string{"a", "b", "c"}, want: []string{"a", "b", "c"}},
		{name: "unsorted", in: []string{"c", "a", "b"}, want: []string{"a", "b", "c"}},
		{name: "duplicates", in: []string{"b", "a", "b", "a"}, want: []string{"a", "b"}},
		{name: "all the same", in: []string{"x", "x", "x"}, want: []string{"x"}},
		{name: "sorted with adjacent duplicate", in: []string{"a", "a", "b"}, want: []string{"a", "b"}},
		{name: "prefixed", in: []string{"svc.run/b", "example.com/a", "svc.run/b"}, want: []string{"example.com/a", "svc.run/b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := slices.Clone(tc.in)
			m := Metadata{Finalizers: tc.in}
			m.NormalizeFinalizers()
			if !slices.Equal(m.Finalizers, tc.want) || (tc.want == nil) != (m.Finalizers == nil) {
				t.Errorf("NormalizeFinalizers(%#v): got %#v, want %#v", orig, m.Finalizers, tc.want)
			}
			// The caller's slice (perhaps shared with another object) is
			// left as it was.
			if !slices.Equal(tc.in, orig) {
				t.Errorf("NormalizeFinalizers(%#v) modified the original slice: now %#v", orig, tc.in)
			}
			// Normalising twice changes nothing.
			again := slices.Clone(m.Finalizers)
			m.NormalizeFinalizers()
			if !slices.Equal(m.Finalizers, again) {
				t.Errorf("NormalizeFinalizers twice: got %#v, want %#v", m.Finalizers, again)
			}
		})
	}
}

func TestNormalizeFinalizersCopiedMetadata(t *testing.T) {
	// A shallow copy of Metadata shares the finalizer array; normalising
	// the copy must not corrupt the original.
	orig := Metadata{Name: "a", Finalizers: []string{"b", "a", "a"}}
	cp := orig
	cp.NormalizeFinalizers()
	if want := []string{"b", "a", "a"}; !slices.Equal(orig.Finalizers, want) {
		t.Errorf("original finalizers after normalising a copy: got %#v, want %#v", orig.Finalizers, want)
	}
	if want := []string{"a", "b"}; !slices.Equal(cp.Finalizers, want) {
		t.Errorf("copy finalizers: got %#v, want %#v", cp.Finalizers, want)
	}
}

func TestHasFinalizer(t *testing.T) {
	m := Metadata{Finalizers: []string{"example.com/a", "b"}}
	tests := []struct {
		f    string
		want bool
	}{{"example.com/a", true}, {"b", true}, {"a", false}, {"", false}, {"B", false}}
	for _, tc := range tests {
		t.Run(tc.f, func(t *testing.T) {
			if got := m.HasFinalizer(tc.f); got != tc.want {
				t.Errorf("HasFinalizer(%q) on %q: got %v, want %v", tc.f, m.Finalizers, got, tc.want)
			}
		})
	}
	if (&Metadata{}).HasFinalizer("") {
		t.Errorf("HasFinalizer(\"\") with no finalizers: got true, want false")
	}
}

func TestVersion(t *testing.T) {
	tests := []struct {
		name string
		set  *int64
		want int64
	}{
		{name: "absent", set: nil, want: -1},
		{name: "zero", set: ptr(int64(0)), want: 0},
		{name: "positive", set: ptr(int64(42)), want: 42},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Metadata{Version: tc.set}
			if got := m.GetVersion(); got != tc.want {
				t.Errorf("GetVersion() with Version %v: got %d, want %d", tc.set, got, tc.want)
			}
		})
	}
	t.Run("SetVersion", func(t *testing.T) {
		var m Metadata
		m.SetVersion(7)
		v := m.Version
		m.SetVersion(8)
		if got := m.GetVersion(); got != 8 {
			t.Errorf("GetVersion after SetVersion(8): got %d, want 8", got)
		}
		if *v != 7 {
			t.Errorf("SetVersion(8) wrote through the pointer of an earlier SetVersion(7): got %d", *v)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestTimestamp(t *testing.T) {
	local := time.Date(2024, 3, 4, 5, 6, 7, 8, time.FixedZone("plus2", 2*3600))
	ts := Timestamp(local)
	if ts.Location() != time.UTC {
		t.Errorf("Timestamp(%s): got location %s, want UTC", local, ts.Location())
	}
	if !ts.Equal(local) {
		t.Errorf("Timestamp(%s): got %s, want the same instant", local, ts)
	}
	if got, want := ts.Format(time.RFC3339Nano), "2024-03-04T03:06:07.000000008Z"; got != want {
		t.Errorf("Timestamp(%s) as RFC 3339: got %s, want %s", local, got, want)
	}
	// No monotonic reading: == on two stored timestamps means equal wall time.
	now := time.Now()
	if got := *Timestamp(now); got != now.Round(0).UTC() {
		t.Errorf("Timestamp(now) kept a monotonic reading: %v", got)
	}
}

func TestGetEnvelope(t *testing.T) {
	type typed struct {
		Envelope
		Spec string `json:"spec"`
	}
	var o Object = &typed{Envelope: Envelope{Kind: "Typed"}}
	o.GetEnvelope().Metadata.Name = "x"
	if got := o.(*typed).Metadata.Name; got != "x" {
		t.Errorf("writing through GetEnvelope(): got name %q, want %q", got, "x")
	}
}
