package store_test

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/query/selector"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// TestRangeTermsPlan: a range term's candidates are counted from its
// index, exactly, so it drives a list when it is the most selective term;
// the range terms of one field make one interval; a range on the sort
// key's field bounds the walk; ranges on names are filters only.
func TestRangeTermsPlan(t *testing.T) {
	m := storetest.PersonModel()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	for i := range 2000 {
		clock.t = clock.t.Add(time.Millisecond)
		p := storetest.NewPerson(fmt.Sprintf("p%05d", i), Spec{Name: "x", Age: storetest.Int64(int64(i % 100)), Tags: []string{"a", fmt.Sprint("t", i%10)}})
		p.Metadata.Labels = map[string]string{"team": fmt.Sprint("t", i%4)}
		if i%10 == 0 {
			p.Spec.Age = nil // no value: in no range
		}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	// Object i was created at 00:00:00 plus i+1 ms.
	at := func(i int) string {
		return time.Date(2026, 1, 1, 0, 0, 0, (i+1)*1e6, time.UTC).Format(time.RFC3339Nano)
	}
	tests := []struct {
		q      string
		want   store.PlanForTest
		listed int64 // what List counts
	}{
		{"fieldSelector=spec.age%3E%3D90", store.PlanForTest{Driver: "spec.age", DriverCount: 180, Within: -1, Covered: 1, Total: 180}, 180},
		{"fieldSelector=spec.age%3E%3D90&sort=spec.age,desc", store.PlanForTest{Driver: "spec.age", DriverCount: 180, Within: 180, Covered: 1, Total: 180}, 180},
		{"fieldSelector=spec.age%3E10&fieldSelector=spec.age%3C%3D12", store.PlanForTest{Driver: "spec.age", DriverCount: 40, Within: -1, Covered: 2, Total: 40}, 40},
		{"fieldSelector=spec.age%3C5", store.PlanForTest{Driver: "spec.age", DriverCount: 80, Within: -1, Covered: 1, Total: 80}, 80}, // not the 200 with no age
		{"fieldSelector=spec.age%3E5&fieldSelector=spec.age%3C3", store.PlanForTest{Driver: "spec.age", DriverCount: 0, Within: -1, Covered: 2, Total: 0}, 0},
		{"fieldSelector=spec.age%3E%3D90&labelSelector=team%3Dt1", store.PlanForTest{Driver: "spec.age", DriverCount: 180, Within: -1, Covered: 2, Total: -1}, 40},
		{"fieldSelector=spec.age%3E%3D5&labelSelector=team%3Dt1", store.PlanForTest{Driver: "metadata.labels", DriverCount: 500, Within: -1, Covered: 2, Total: -1}, 480},
		{"fieldSelector=spec.age%3E%3D5&fieldSelector=spec.age!%3D51", store.PlanForTest{Driver: "spec.age", DriverCount: 1720, Within: -1, Covered: 1, Total: -1}, 1700},
		// The default order walks the creation tree.
		{"fieldSelector=metadata.creationTimestamp%3E" + at(1899), store.PlanForTest{Driver: "metadata.creationTimestamp", DriverCount: 100, Within: 100, Covered: 1, Total: 100}, 100},
		{"fieldSelector=metadata.creationTimestamp%3C%3D" + at(99) + "&sort=metadata.creationTimestamp,asc", store.PlanForTest{Driver: "metadata.creationTimestamp", DriverCount: 100, Within: 100, Covered: 1, Total: 100}, 100},
		{"fieldSelector=metadata.creationTimestamp%3E%3D" + at(100) + "&fieldSelector=metadata.creationTimestamp%3C" + at(200) + "&sort=spec.age", store.PlanForTest{Driver: "metadata.creationTimestamp", DriverCount: 100, Within: -1, Covered: 2, Total: 100}, 100},
		// A multi-valued index counts entries, not objects: an estimate.
		{"fieldSelector=spec.tags%3E%3Da", store.PlanForTest{Driver: "spec.tags", DriverCount: 4000, Within: -1, Covered: 1, Total: -1}, 2000},
		{"fieldSelector=spec.tags%3Et8", store.PlanForTest{Driver: "spec.tags", DriverCount: 200, Within: -1, Covered: 1, Total: -1}, 200},
		// Names live in memdb, which cannot count a range: a filter.
		{"fieldSelector=name%3Ep01989", store.PlanForTest{Within: -1, Total: -1}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			q := mustQuery(t, tc.q)
			got, err := s.ListPlanForTest(m, q)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("plan = %+v, want %+v", got, tc.want)
			}
			q.Size = 20
			res, err := s.List(ctx, m, q)
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != tc.listed {
				t.Errorf("total = %d, want %d", res.Total, tc.listed)
			}
		})
	}
}

// TestRangeBoundsTheSortWalk pages through a range of the sort key's own
// field in every walk the planner has (forward, backward by groups of
// equal keys, gathered groups for other tie orders, the creation tree
// both ways), with and without a label term that lets the walk pass over
// index nodes, and checks each page against sorting all matches.
func TestRangeBoundsTheSortWalk(t *testing.T) {
	m := storetest.PersonModel()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	type row struct {
		name string
		age  int64
		team string
		i    int // creation order
	}
	var rows []row
	for i := range 6000 {
		clock.t = clock.t.Add(time.Millisecond)
		r := row{name: fmt.Sprintf("p%05d", (i*7919)%6000), age: int64(i / 100), team: "b", i: i}
		if i%100 < 30 {
			r.team = "a"
		}
		p := storetest.NewPerson(r.name, Spec{Name: "x", Age: storetest.Int64(r.age)})
		p.Metadata.Labels = map[string]string{"team": r.team}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	at := func(i int) string {
		return time.Date(2026, 1, 1, 0, 0, 0, (i+1)*1e6, time.UTC).Format(time.RFC3339Nano)
	}
	byAge := func(desc bool) func(a, b row) int {
		return func(a, b row) int {
			c := cmp.Compare(a.age, b.age)
			if desc {
				c = -c
			}
			return cmp.Or(c, cmp.Compare(b.i, a.i))
		}
	}
	for _, tc := range []struct {
		terms string
		keep  func(row) bool
		sort  string
		order func(a, b row) int
	}{
		{"fieldSelector=spec.age%3E%3D20&fieldSelector=spec.age%3C40", func(r row) bool { return r.age >= 20 && r.age < 40 }, "sort=spec.age,asc", byAge(false)},
		{"fieldSelector=spec.age%3E%3D20&fieldSelector=spec.age%3C40", func(r row) bool { return r.age >= 20 && r.age < 40 }, "sort=spec.age,desc", byAge(true)},
		{"fieldSelector=spec.age%3E20&fieldSelector=spec.age%3C%3D40", func(r row) bool { return r.age > 20 && r.age <= 40 }, "sort=spec.age,desc&sort=metadata.name,desc",
			func(a, b row) int { return cmp.Or(cmp.Compare(b.age, a.age), strings.Compare(b.name, a.name)) }},
		{"fieldSelector=spec.age%3C10", func(r row) bool { return r.age < 10 }, "sort=spec.age,asc&sort=metadata.creationTimestamp,asc",
			func(a, b row) int { return cmp.Or(cmp.Compare(a.age, b.age), cmp.Compare(a.i, b.i)) }},
		{"fieldSelector=spec.age%3E50", func(r row) bool { return r.age > 50 }, "sort=spec.age,desc", byAge(true)},
		{"fieldSelector=metadata.creationTimestamp%3E" + at(999) + "&fieldSelector=metadata.creationTimestamp%3C%3D" + at(4999),
			func(r row) bool { return r.i > 999 && r.i <= 4999 }, "", func(a, b row) int { return cmp.Compare(b.i, a.i) }},
		{"fieldSelector=metadata.creationTimestamp%3E%3D" + at(1000), func(r row) bool { return r.i >= 1000 },
			"sort=metadata.creationTimestamp,asc", func(a, b row) int { return cmp.Compare(a.i, b.i) }},
	} {
		for _, label := range []string{"", "a"} {
			var want []row
			for _, r := range rows {
				if tc.keep(r) && (label == "" || r.team == label) {
					want = append(want, r)
				}
			}
			slices.SortFunc(want, tc.order)
			pages := (len(want) + 19) / 20
			for _, page := range []int{1, 2, pages / 2, pages, pages + 1} {
				q := fmt.Sprintf("%s&%s&size=20&page=%d", tc.terms, tc.sort, page)
				if label != "" {
					q += "&labelSelector=team%3D" + label
				}
				res, err := s.List(ctx, m, mustQuery(t, q))
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				lo := min((page-1)*20, len(want))
				var want20 []string
				for _, r := range want[lo:min(lo+20, len(want))] {
					want20 = append(want20, r.name)
				}
				if got := names(res); got != strings.Join(want20, ",") || res.Total != int64(len(want)) {
					t.Fatalf("%s:\n got  %d: %s\n want %d: %s", q, res.Total, got, len(want), strings.Join(want20, ","))
				}
			}
		}
	}
}

// TestRangeTermErrors: a range on an unindexed or unordered field, or
// with a value that is not of the index's type, is a *query.ParamError of
// fieldSelector naming the field; every bad term of a list is reported.
func TestRangeTermErrors(t *testing.T) {
	m := storetest.PersonModel()
	m.Indexes = append(m.Indexes, model.Index{Name: "spec.adult", Type: model.Bool, Keys: func(o object.Object, dst []model.Key) []model.Key {
		if a := o.(*storetest.Person).Spec.Age; a != nil {
			dst = append(dst, model.BoolKey(*a >= 18))
		}
		return dst
	}})
	s := storetest.New(t, m)
	tests := []struct{ q, reason string }{
		{"fieldSelector=spec.age%3Eabc", `field spec.age: "abc" is not an integer`},
		{"fieldSelector=spec.age%3C%3D1.5", `field spec.age: "1.5" is not an integer`},
		{"fieldSelector=spec.age%3E99999999999999999999", `field spec.age: "99999999999999999999" is not an integer`},
		{"fieldSelector=metadata.creationTimestamp%3E2026-01-01", `field metadata.creationTimestamp: "2026-01-01" is not an RFC 3339 date-time`},
		{"fieldSelector=spec.gender%3EF", "field spec.gender is not indexed"},
		{"fieldSelector=metadata.labels%3Ex", "field metadata.labels is not indexed"},
		{"fieldSelector=spec.adult%3Efalse", "field spec.adult is a boolean index; range terms need a number, string or date-time index"},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			q := mustQuery(t, tc.q)
			for _, err := range []error{store.CheckQuery(m, q), func() error { _, err := s.List(ctx, m, q); return err }(),
				func() error { _, err := s.Watch(ctx, m, store.WatchOptions{Query: q}); return err }()} {
				var pe *query.ParamError
				if !errors.As(err, &pe) || pe.Param != "fieldSelector" || pe.Reason != tc.reason || pe.Value != q.Fields[0].String() {
					t.Fatalf("err = %#v, want a fieldSelector *query.ParamError with reason %q", err, tc.reason)
				}
			}
		})
	}
	err := store.CheckQuery(m, mustQuery(t, "fieldSelector=spec.age%3Ex&fieldSelector=spec.adult%3C%3Dtrue&fieldSelector=spec.age%3E1"))
	var errs query.Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("err = %v, want the two bad terms", err)
	}
}

// TestWatchRangeTerms: a watch with range terms sees an object as it
// enters the range (ADDED), changes in it (MODIFIED) and leaves it
// (DELETED); the initial events are the current matches.
func TestWatchRangeTerms(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	for _, p := range []struct {
		name string
		age  *int64
	}{{"kid", storetest.Int64(9)}, {"adult", storetest.Int64(40)}, {"old", storetest.Int64(70)}, {"ageless", nil}} {
		if _, err := s.Create(ctx, m, storetest.NewPerson(p.name, Spec{Name: "x", Age: p.age})); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := s.Watch(ctx, m, store.WatchOptions{Query: mustQuery(t, "fieldSelector=spec.age%3E%3D18&fieldSelector=spec.age%3C65"), SendInitial: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	setAge := func(name string, age *int64) {
		t.Helper()
		rec, err := s.Get(ctx, m, name)
		if err != nil {
			t.Fatal(err)
		}
		p := decode(t, rec)
		p.Spec.Age = age
		if _, err := s.Update(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	setAge("kid", storetest.Int64(17))   // still out
	setAge("kid", storetest.Int64(18))   // in: >= is inclusive
	setAge("kid", storetest.Int64(19))   // in
	setAge("adult", storetest.Int64(65)) // out: < is strict
	setAge("ageless", storetest.Int64(30))
	setAge("kid", nil) // no value: out
	if _, err := s.Delete(ctx, m, "ageless"); err != nil {
		t.Fatal(err)
	}
	const want = "ADDED adult, ADDED kid, MODIFIED kid, DELETED adult, ADDED ageless, DELETED kid, DELETED ageless"
	var got []string
	for range len(splitEvents(want)) {
		ev := next(t, sub)
		got = append(got, fmt.Sprintf("%s %s", ev.Type, ev.Object.Name))
	}
	if strings.Join(got, ", ") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, ", "), want)
	}
}

// TestManyRangeTermsMerge: however many range terms a single-valued field
// gets, they make one interval, found with one lookup per term.
func TestManyRangeTermsMerge(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	for i := range 10 {
		if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprint("p", i), Spec{Name: "x", Age: storetest.Int64(int64(i))})); err != nil {
			t.Fatal(err)
		}
	}
	v := url.Values{}
	for i := range 5000 {
		v.Add("fieldSelector", fmt.Sprintf("spec.age>=%d", -i))
		v.Add("fieldSelector", fmt.Sprintf("spec.age<%d", 5000+i))
	}
	v.Add("fieldSelector", "spec.age<=4")
	q, err := query.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := s.ListPlanForTest(m, q)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.PlanForTest{Driver: "spec.age", DriverCount: 5, Within: -1, Covered: 10001, Total: 5}); plan != want {
		t.Fatalf("plan = %+v, want %+v", plan, want)
	}
	res, err := s.List(ctx, m, q)
	if err != nil || res.Total != 5 {
		t.Fatalf("List = %d matches, %v; want 5", res.Total, err)
	}
}

// rangeFuzzRow is an object of FuzzRangeTerm's store.
type rangeFuzzRow struct {
	name, sname string
	age         *int64
	tags        []string
	created     time.Time
}

var (
	rangeFuzzOnce  sync.Once
	rangeFuzzStore *store.Store
	rangeFuzzModel *model.Model
	rangeFuzzRows  []rangeFuzzRow
)

// FuzzRangeTerm lists with one random range term (any field, any value)
// and a random sort: no panic; a term that does not parse, or whose
// value is not of the index's type, is a 400 error; otherwise the matches
// are exactly the objects with a key in the range, compared key by key.
func FuzzRangeTerm(f *testing.F) {
	for _, s := range []struct {
		field, op uint8
		value     string
	}{
		{0, 3, "3"}, {0, 0, "-9223372036854775808"}, {0, 2, "9223372036854775807"}, {0, 1, "abc"}, {0, 2, "(1,2)"},
		{1, 2, "x"}, {1, 0, "person name 010"}, {1, 3, ""}, {2, 2, "g2"}, {2, 0, "\x00"}, {3, 3, "p05"},
		{4, 2, "2026-01-01T00:00:00.1Z"}, {4, 0, "0000-01-01T00:00:00Z"}, {4, 3, "9999-12-31T23:59:59.999999999Z"},
		{4, 1, "2026-01-01T01:00:00.05+01:00"}, {4, 2, "yesterday"}, {5, 2, "2000-01-01T00:00:00Z"},
	} {
		f.Add(s.field, s.op, s.value, uint8(0), uint8(0))
	}
	rangeFuzzOnce.Do(func() {
		m := storetest.PersonModel()
		m.Validate = nil
		clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		s, err := store.Open(store.Options{Now: clock.now})
		if err == nil {
			err = s.Register(ctx, m)
		}
		if err != nil {
			f.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(26, 1))
		// Enough objects that a range of more than collectLimit streams.
		for i := range 2000 {
			clock.t = clock.t.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			r := rangeFuzzRow{name: fmt.Sprintf("p%04d", i), sname: []string{"x", "xy", fmt.Sprintf("person name %03d", rng.IntN(30))}[rng.IntN(3)], created: clock.t}
			if rng.IntN(5) > 0 {
				r.age = storetest.Int64(int64(rng.IntN(40) - 5))
			}
			for range rng.IntN(3) {
				r.tags = append(r.tags, fmt.Sprint("g", rng.IntN(5)))
			}
			if _, err := s.Create(ctx, m, storetest.NewPerson(r.name, Spec{Name: r.sname, Age: r.age, Tags: r.tags})); err != nil {
				f.Fatal(err)
			}
			rangeFuzzRows = append(rangeFuzzRows, r)
		}
		rangeFuzzStore, rangeFuzzModel = s, m
	})
	m := rangeFuzzModel
	fields := []string{"spec.age", "spec.name", "spec.tags", "metadata.name", "metadata.creationTimestamp", "metadata.deletionTimestamp"}
	types := []model.KeyType{model.Int, model.String, model.String, model.String, model.Time, model.Time}
	ops := []string{"<", "<=", ">", ">="}
	sorts := []string{"", "spec.age,asc", "spec.age,desc", "metadata.creationTimestamp,asc", "spec.name,desc", "name,asc"}
	// size 0 lists every match at once (collecting); other sizes page
	// through them, which may stream.
	f.Fuzz(func(t *testing.T, field, op uint8, value string, sortBy, size uint8) {
		fi := int(field) % len(fields)
		term := fields[fi] + ops[op%4] + value
		v := url.Values{"fieldSelector": {term}}
		if srt := sorts[int(sortBy)%len(sorts)]; srt != "" {
			v.Set("sort", srt)
		}
		q, err := query.Parse(v)
		if err != nil {
			var se *selector.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %T %v, want a *selector.Error", term, err, err)
			}
			return
		}
		req := q.Fields[0]
		bound, kerr := model.ParseKey(types[fi], req.Values[0])
		res, err := rangeFuzzStore.List(ctx, m, q)
		if kerr != nil {
			var pe *query.ParamError
			if !errors.As(err, &pe) || pe.Param != "fieldSelector" || !strings.Contains(pe.Reason, fields[fi]) {
				t.Fatalf("List(%q) = %v, want a fieldSelector error naming the field (%v)", term, err, kerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("List(%q): %v", term, err)
		}
		var want []string
		for _, r := range rangeFuzzRows {
			var keys []model.Key
			switch fi {
			case 0:
				if r.age != nil {
					keys = append(keys, model.IntKey(*r.age))
				}
			case 1:
				keys = append(keys, model.StringKey(r.sname))
			case 2:
				for _, tag := range r.tags {
					keys = append(keys, model.StringKey(tag))
				}
			case 3:
				keys = append(keys, model.StringKey(r.name))
			case 4:
				keys = append(keys, model.TimeKey(r.created))
			}
			if slices.ContainsFunc(keys, func(k model.Key) bool { return req.Op.Holds(strings.Compare(string(k), string(bound))) }) {
				want = append(want, r.name)
			}
		}
		var got []string
		for _, r := range res.Items {
			got = append(got, r.Name)
		}
		if size > 0 {
			got = got[:0]
			per := max(int(size), len(want)/16+1) // at most 17 pages
			for page := 1; ; page++ {
				q.Page, q.Size = page, per
				more, err := rangeFuzzStore.List(ctx, m, q)
				if err != nil || more.Total != res.Total {
					t.Fatalf("List(%s) page %d size %d: total %d, %v; want %d", v.Encode(), page, size, more.Total, err, res.Total)
				}
				for _, r := range more.Items {
					got = append(got, r.Name)
				}
				if len(more.Items) < per {
					break
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) || res.Total != int64(len(want)) {
			t.Fatalf("List(%s) size %d: %d %v, want %d %v", v.Encode(), size, res.Total, got, len(want), want)
		}
	})
}
