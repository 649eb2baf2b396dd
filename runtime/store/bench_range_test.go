package store_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
)

// Range terms on the 100k benchmark persons (spec.age is i%97).

// 7.2k matches, sorted by the range's own field: the walk covers the
// range only, and its count is the total.
func BenchmarkListPage20RangeSortedBySameField_100k(b *testing.B) {
	benchList(b, "fieldSelector=spec.age%3E%3D90&sort=spec.age,desc&size=20&page=2")
}

// 10.3k matches between two bounds (one interval), page 3 ascending.
func BenchmarkListPage20TwoSidedRange_100k(b *testing.B) {
	benchList(b, "fieldSelector=spec.age%3E%3D40&fieldSelector=spec.age%3C50&sort=spec.age,asc&size=20&page=3")
}

// 48k matches in the default order (creation desc): the stream tests
// records, the total is the range's count.
func BenchmarkListPage20UnselectiveRange_100k(b *testing.B) {
	benchList(b, "fieldSelector=spec.age%3E%3D50&size=20&page=2")
}

// 3.1k matches sorted by another field.
func BenchmarkListPage20RangeSortedByOtherField_100k(b *testing.B) {
	benchList(b, "fieldSelector=spec.age%3C3&sort=spec.name,asc&size=20")
}

// A range and a label: 720 matches, the total from the intersection.
func BenchmarkListPage20RangeAndLabel_100k(b *testing.B) {
	benchList(b, "fieldSelector=spec.age%3E%3D90&labelSelector=team%3Dt3&sort=spec.age,asc&size=20")
}

// The newest half by creation time, in the default order.
func BenchmarkListPage20CreationRange_100k(b *testing.B) {
	s, m := populated(b)
	rec, err := s.Get(context.Background(), m, "person-0050000")
	if err != nil {
		b.Fatal(err)
	}
	var obj struct {
		Metadata struct {
			CreationTimestamp string `json:"creationTimestamp"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(rec.Data, &obj); err != nil {
		b.Fatal(err)
	}
	benchList(b, "fieldSelector="+url.QueryEscape("metadata.creationTimestamp>"+obj.Metadata.CreationTimestamp)+"&size=20&page=2")
}
