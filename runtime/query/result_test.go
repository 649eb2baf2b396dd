package query

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestNewListResult(t *testing.T) {
	type flags struct {
		Page, Size                        int
		TotalPages                        int64
		First, Last, HasNext, HasPrevious bool
	}
	tests := []struct {
		name       string
		page, size int
		total      int64
		want       flags
	}{
		// Halo's ListResult cases.
		{name: "page 1 of 10", page: 1, size: 10, total: 100,
			want: flags{Page: 1, Size: 10, TotalPages: 10, First: true, Last: false, HasNext: true, HasPrevious: false}},
		{name: "page 2 of 10", page: 2, size: 10, total: 100,
			want: flags{Page: 2, Size: 10, TotalPages: 10, First: false, Last: false, HasNext: true, HasPrevious: true}},
		{name: "last page", page: 10, size: 10, total: 100,
			want: flags{Page: 10, Size: 10, TotalPages: 10, First: false, Last: true, HasNext: false, HasPrevious: true}},
		{name: "beyond the last page", page: 12, size: 10, total: 100,
			want: flags{Page: 12, Size: 10, TotalPages: 10, First: false, Last: true, HasNext: false, HasPrevious: true}},
		{name: "total 1 size 10", page: 1, size: 10, total: 1,
			want: flags{Page: 1, Size: 10, TotalPages: 1, First: true, Last: true}},
		{name: "total 9 size 10", page: 1, size: 10, total: 9,
			want: flags{Page: 1, Size: 10, TotalPages: 1, First: true, Last: true}},
		{name: "total 10 size 10", page: 1, size: 10, total: 10,
			want: flags{Page: 1, Size: 10, TotalPages: 1, First: true, Last: true}},
		{name: "total 11 size 10", page: 1, size: 10, total: 11,
			want: flags{Page: 1, Size: 10, TotalPages: 2, First: true, Last: false, HasNext: true}},
		{name: "size 0 is one page", page: 1, size: 0, total: 100,
			want: flags{Page: 1, Size: 0, TotalPages: 1, First: true, Last: true}},
		{name: "size 0 total 0 is one page", page: 1, size: 0, total: 0,
			want: flags{Page: 1, Size: 0, TotalPages: 1, First: true, Last: true}},
		{name: "total 0 size 10", page: 1, size: 10, total: 0,
			want: flags{Page: 1, Size: 10, TotalPages: 0, First: true, Last: true, HasNext: false}},
		{name: "page 0 normalised to 1", page: 0, size: 10, total: 100,
			want: flags{Page: 1, Size: 10, TotalPages: 10, First: true, Last: false, HasNext: true}},
		{name: "negative page normalised to 1", page: -5, size: 10, total: 100,
			want: flags{Page: 1, Size: 10, TotalPages: 10, First: true, HasNext: true}},
		{name: "negative size normalised to 0", page: 1, size: -1, total: 100,
			want: flags{Page: 1, Size: 0, TotalPages: 1, First: true, Last: true}},
		{name: "size 1", page: 3, size: 1, total: 5,
			want: flags{Page: 3, Size: 1, TotalPages: 5, HasNext: true, HasPrevious: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewListResult[string](tc.page, tc.size, tc.total, nil)
			got := flags{r.Page, r.Size, r.TotalPages, r.First, r.Last, r.HasNext, r.HasPrevious}
			if got != tc.want {
				t.Errorf("NewListResult(page %d, size %d, total %d):\n got %+v\nwant %+v", tc.page, tc.size, tc.total, got, tc.want)
			}
			if r.Total != tc.total {
				t.Errorf("NewListResult(page %d, size %d, total %d): got total %d", tc.page, tc.size, tc.total, r.Total)
			}
			// The docs/api.md identities hold for every input.
			if r.First != !r.HasPrevious || r.Last != !r.HasNext || r.HasNext != (int64(r.Page) < r.TotalPages) || r.HasPrevious != (r.Page > 1) {
				t.Errorf("NewListResult(page %d, size %d, total %d): inconsistent flags %+v", tc.page, tc.size, tc.total, got)
			}
		})
	}
}

func TestNewListResultItems(t *testing.T) {
	tests := []struct {
		name      string
		items     []int
		wantItems string
	}{
		{name: "nil items", items: nil, wantItems: `[]`},
		{name: "empty items", items: []int{}, wantItems: `[]`},
		{name: "items", items: []int{3, 1, 2}, wantItems: `[3,1,2]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewListResult(1, 0, int64(len(tc.items)), tc.items)
			if r.Items == nil {
				t.Fatalf("NewListResult(items %#v): got nil Items, want a non-nil slice", tc.items)
			}
			if tc.items != nil && !slices.Equal(r.Items, tc.items) {
				t.Errorf("NewListResult(items %v): got items %v, want them unchanged", tc.items, r.Items)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if want := `"items":` + tc.wantItems; !strings.Contains(string(b), want) {
				t.Errorf("JSON of NewListResult(items %#v): got %s, want it to contain %s", tc.items, b, want)
			}
		})
	}
}

func TestListResultJSONShape(t *testing.T) {
	r := NewListResult(2, 10, 25, []map[string]string{{"name": "a"}})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"page":2,"size":10,"total":25,"items":[{"name":"a"}],"first":false,"last":false,"hasNext":true,"hasPrevious":true,"totalPages":3}`
	if string(b) != want {
		t.Errorf("JSON of ListResult:\n got %s\nwant %s", b, want)
	}

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	wantKeys := []string{"first", "hasNext", "hasPrevious", "items", "last", "page", "size", "total", "totalPages"}
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("ListResult JSON keys: got %q, want exactly %q", keys, wantKeys)
	}

	// It decodes back into the same value, so Go clients can use the type.
	var back ListResult[map[string]string]
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("ListResult round trip: got %+v, %v; want %+v", back, err, r)
	}
}
