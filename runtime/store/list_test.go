package store_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

func mustQuery(t testing.TB, raw string) store.Query {
	t.Helper()
	v, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	q, err := query.Parse(v)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return q
}

func names(res query.ListResult[*store.Record]) string {
	var out []string
	for _, r := range res.Items {
		out = append(out, r.Name)
	}
	return strings.Join(out, ",")
}

// fixedClock makes creation times controllable so ties can be tested.
type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time { return c.t }

func TestListExamples(t *testing.T) {
	m := storetest.PersonModel()
	m.Validate = nil // negative ages show the key order
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	people := []struct {
		name   string
		age    *int64
		labels map[string]string
		tags   []string
		tick   bool // advance the clock before creating
	}{
		{"a", storetest.Int64(9), map[string]string{"team": "x"}, []string{"go"}, true},
		{"b", storetest.Int64(10), map[string]string{"team": "y"}, nil, true},
		{"c", nil, map[string]string{"tier": "gold"}, []string{"go", "rust"}, false},
		{"d", storetest.Int64(-1), nil, nil, true},
		{"e", storetest.Int64(10), map[string]string{"team": "x", "tier": "gold"}, []string{"zig"}, false},
	}
	for _, p := range people {
		if p.tick {
			clock.t = clock.t.Add(time.Second)
		}
		obj := storetest.NewPerson(p.name, Spec{Name: strings.ToUpper(p.name), Age: p.age, Tags: p.tags})
		obj.Metadata.Labels = p.labels
		if _, err := s.Create(ctx, m, obj); err != nil {
			t.Fatal(err)
		}
	}
	// Creation order: a (t1), b (t2), c (t2), d (t3), e (t3).
	tests := []struct{ q, want string }{
		{"", "d,e,b,c,a"}, // creation desc, then name asc
		{"sort=metadata.creationTimestamp,asc", "a,b,c,d,e"},
		{"sort=name,desc", "e,d,c,b,a"},
		{"sort=spec.age,asc", "c,d,a,e,b"},  // absent first; 9 < 10; ties: creation desc
		{"sort=spec.age,desc", "e,b,a,d,c"}, // absent last
		{"sort=spec.age,desc&sort=name,desc", "e,b,a,d,c"},
		{"sort=spec.age,asc&sort=name,desc", "c,d,a,e,b"},
		{"labelSelector=team%3Dx", "e,a"},
		{"labelSelector=team!%3Dx", "d,b,c"},
		{"labelSelector=team", "e,b,a"},
		{"labelSelector=!team", "d,c"},
		{"labelSelector=team%3D(x,y)", "e,b,a"},
		{"labelSelector=team&labelSelector=tier%3Dgold", "e"},
		{"fieldSelector=spec.age%3D10", "e,b"},
		{"fieldSelector=spec.age!%3D10", "d,a"}, // c has no age: excluded
		{"fieldSelector=spec.age%3D(9,-1)", "d,a"},
		{"fieldSelector=name%3Dc", "c"},
		{"fieldSelector=spec.tags%3Dgo", "c,a"},
		{"fieldSelector=spec.tags!%3Dgo", "e"},
		{"fieldSelector=spec.name%3DB&labelSelector=team", "b"},
		{"fieldSelector=spec.age%3D(10,010)", "e,b"}, // one key twice
		{"fieldSelector=metadata.creationTimestamp%3D2026-01-01T00:00:02Z", "b,c"},
		{"fieldSelector=metadata.creationTimestamp!%3D2026-01-01T00:00:02Z", "d,e,a"},
		{"fieldSelector=metadata.creationTimestamp%3D(2026-01-01T00:00:01Z,2026-01-01T00:00:03Z)", "d,e,a"},
		{"fieldSelector=metadata.creationTimestamp%3D2026-01-01T01:00:02.000%2B01:00", "b,c"}, // the same instant
		{"fieldSelector=metadata.creationTimestamp%3D(2026-01-01T00:00:02Z,2026-01-01T01:00:02%2B01:00)", "b,c"},
		{"fieldSelector=metadata.creationTimestamp%3D2026-01-01T00:00:02.000000001Z", ""},
		{"fieldSelector=metadata.creationTimestamp%3D2026-01-01T00:00:02Z&labelSelector=team", "b"},
		{"fieldSelector=metadata.creationTimestamp%3D2026-01-01T00:00:03Z&size=1&page=2", "e"},
		{"sort=spec.tags,asc", "d,b,c,a,e"}, // smallest tag; no tags first
		{"size=2", "d,e"},
		{"size=2&page=3", "a"},
		{"size=2&page=4", ""},
		{"size=2&page=2&labelSelector=team", "a"},
		{"size=1&page=2&sort=spec.age,asc&labelSelector=!tier", "a"},
		// Ranges, in each index type's own order; no value, no match.
		{"fieldSelector=spec.age%3E9", "e,b"},
		{"fieldSelector=spec.age%3E%3D9", "e,b,a"},
		{"fieldSelector=spec.age%3C10", "d,a"}, // -1 < 9 < 10 as numbers
		{"fieldSelector=spec.age%3C%3D-1", "d"},
		{"fieldSelector=spec.age%3E-2&fieldSelector=spec.age%3C10", "d,a"},
		{"fieldSelector=spec.age%3E10", ""},
		{"fieldSelector=spec.age%3E5&fieldSelector=spec.age%3C3", ""},
		{"fieldSelector=spec.age%3E%3D10&fieldSelector=spec.age%3C%3D10", "e,b"},
		{"fieldSelector=spec.age%3E%3D0&sort=spec.age,desc", "e,b,a"},
		{"fieldSelector=spec.age%3E%3D0&sort=spec.age,asc", "a,e,b"},
		{"fieldSelector=spec.age%3E%3D-1&size=2&page=2", "b,a"},
		{"fieldSelector=spec.age%3E0&labelSelector=team", "e,b,a"},
		{"fieldSelector=spec.age%3E0&fieldSelector=spec.age!%3D10", "a"},
		{"fieldSelector=spec.age%3E0&fieldSelector=spec.age%3D(9,-1)", "a"},
		{"fieldSelector=spec.tags%3Eh", "e,c"}, // some tag in the range
		{"fieldSelector=spec.tags%3Ch", "c,a"},
		{"fieldSelector=spec.tags%3Ego&fieldSelector=spec.tags%3Cs", "c"}, // rust; each term by any tag
		{"fieldSelector=spec.name%3E%3DC", "d,e,c"},
		{"fieldSelector=name%3Ec", "d,e"},
		{"fieldSelector=name%3C%3Db&sort=name,desc", "b,a"},
		{"fieldSelector=metadata.creationTimestamp%3E2026-01-01T00:00:02Z", "d,e"},
		{"fieldSelector=metadata.creationTimestamp%3E%3D2026-01-01T00:00:02Z", "d,e,b,c"},
		{"fieldSelector=metadata.creationTimestamp%3C2026-01-01T00:00:02Z", "a"},
		{"fieldSelector=metadata.creationTimestamp%3C2026-01-01T01:00:02%2B01:00", "a"}, // the same instant
		{"fieldSelector=metadata.creationTimestamp%3C%3D2026-01-01T00:00:02Z&sort=metadata.creationTimestamp,asc", "a,b,c"},
		{"fieldSelector=metadata.creationTimestamp%3E2026-01-01T00:00:01.999999999Z", "d,e,b,c"},
		{"fieldSelector=metadata.creationTimestamp%3E2026-01-01T00:00:01Z&fieldSelector=metadata.creationTimestamp%3C2026-01-01T00:00:03Z", "b,c"},
		{"fieldSelector=metadata.deletionTimestamp%3E2000-01-01T00:00:00Z", ""},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			res, err := s.List(ctx, m, mustQuery(t, tc.q))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res); got != tc.want {
				t.Errorf("List(%s) = %s, want %s", tc.q, got, tc.want)
			}
		})
	}
}

func TestListResultNumbers(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	for i := range 5 {
		if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("p%d", i), Spec{Name: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		q                                 string
		page, size                        int
		total, pages                      int64
		first, last, hasNext, hasPrevious bool
		items                             int
	}{
		{"", 1, 0, 5, 1, true, true, false, false, 5},
		{"size=2", 1, 2, 5, 3, true, false, true, false, 2},
		{"size=2&page=2", 2, 2, 5, 3, false, false, true, true, 2},
		{"size=2&page=3", 3, 2, 5, 3, false, true, false, true, 1},
		{"size=2&page=0", 1, 2, 5, 3, true, false, true, false, 2},
		{"size=2&page=9", 9, 2, 5, 3, false, true, false, true, 0},
		{"size=10&labelSelector=none", 1, 10, 0, 0, true, true, false, false, 0},
		// (page-1)*size would overflow: still an empty page, every way.
		{"size=2&page=9223372036854775807", math.MaxInt, 2, 5, 3, false, true, false, true, 0},
		{"size=2&page=4611686018427387905&fieldSelector=spec.name=x", 4611686018427387905, 2, 5, 3, false, true, false, true, 0},
		{"size=2&page=9223372036854775807&fieldSelector=spec.name=x", math.MaxInt, 2, 5, 3, false, true, false, true, 0},
		{"size=3&page=9223372036854775807&sort=spec.age", math.MaxInt, 3, 5, 2, false, true, false, true, 0},
		{"size=10000&page=9223372036854775807&labelSelector=!none", math.MaxInt, 10000, 5, 1, false, true, false, true, 0},
		// A page larger than the table: the whole list on page 1, and the
		// requested size echoed.
		{"size=9223372036854775807", 1, math.MaxInt, 5, 1, true, true, false, false, 5},
		{"size=9223372036854775807&sort=spec.age", 1, math.MaxInt, 5, 1, true, true, false, false, 5},
		{"size=9223372036854775807&page=2", 2, math.MaxInt, 5, 1, false, true, false, true, 0},
		{"size=9223372036854775807&page=9223372036854775807&labelSelector=!none", math.MaxInt, math.MaxInt, 5, 1, false, true, false, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			r, err := s.List(ctx, m, mustQuery(t, tc.q))
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(r.Page, r.Size, r.Total, r.TotalPages, r.First, r.Last, r.HasNext, r.HasPrevious, len(r.Items), r.Items != nil)
			want := fmt.Sprint(tc.page, tc.size, tc.total, tc.pages, tc.first, tc.last, tc.hasNext, tc.hasPrevious, tc.items, true)
			if got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func TestListBadQueries(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	for _, q := range []string{"sort=spec.gender", "fieldSelector=spec.gender%3DMALE", "fieldSelector=spec.age%3Dold", "sort=metadata.labels", "fieldSelector=metadata.labels%3Dx",
		"fieldSelector=spec.gender%3E1", "fieldSelector=spec.age%3Eabc", "fieldSelector=metadata.labels%3Ex", "fieldSelector=metadata.creationTimestamp%3C2026"} {
		t.Run(q, func(t *testing.T) {
			_, err := s.List(ctx, m, mustQuery(t, q))
			var pe *query.ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *query.ParamError", err)
			}
		})
	}
}

// TestListAgreesWithOracle checks random queries over random data against a
// plain filter-and-sort written independently of the planner, across data
// sizes that push the planner to both of its strategies.
func TestListAgreesWithOracle(t *testing.T) {
	for _, n := range []int{40, 3000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			m := storetest.PersonModel()
			m.Validate = nil
			clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			s := storetest.Open(t, store.Options{Now: clock.now}, m)
			type row struct {
				name    string
				created int64
				age     *int64
				labels  map[string]string
				tags    []string
				sname   string
			}
			var rows []row
			for i := range n {
				if rng.IntN(3) == 0 {
					clock.t = clock.t.Add(time.Millisecond)
				}
				r := row{name: fmt.Sprintf("p%05d", rng.IntN(1_000_000)), created: clock.t.UnixNano(), labels: map[string]string{}}
				if rng.IntN(5) > 0 {
					r.age = storetest.Int64(int64(rng.IntN(40) - 5))
				}
				if v := rng.IntN(10); v < 8 {
					r.labels["team"] = fmt.Sprint("t", v%4)
				}
				if rng.IntN(50) == 0 {
					r.labels["rare"] = "yes"
				}
				if v := rng.IntN(4); v < 2 {
					r.labels["tier"] = []string{"", "gold"}[v] // the empty value is a value
				}
				for range rng.IntN(3) {
					r.tags = append(r.tags, fmt.Sprint("g", rng.IntN(5)))
				}
				// Long names share more than the eight bytes a sort
				// compares as an integer; short ones differ in length only.
				r.sname = []string{"x", "x\x00", "xy", fmt.Sprintf("person name %03d", rng.IntN(30))}[rng.IntN(4)]
				obj := storetest.NewPerson(r.name, Spec{Name: r.sname, Age: r.age, Tags: r.tags})
				obj.Metadata.Labels = r.labels
				if _, err := s.Create(ctx, m, obj); err != nil {
					continue // duplicate random name
				}
				slices.Sort(r.tags)
				r.tags = slices.Compact(r.tags)
				rows = append(rows, r)
				_ = i
			}
			// Updates that change one field and keep the others, so that
			// index entries of unchanged keys outlive their version: lists
			// must still see each object as last written.
			version := make([]int64, len(rows))
			for range len(rows) {
				i := rng.IntN(len(rows))
				r := &rows[i]
				switch rng.IntN(4) {
				case 0:
					r.age = storetest.Int64(int64(rng.IntN(40) - 5))
				case 1:
					r.tags = nil
					for range rng.IntN(3) {
						r.tags = append(r.tags, fmt.Sprint("g", rng.IntN(5)))
					}
					slices.Sort(r.tags)
					r.tags = slices.Compact(r.tags)
				case 2:
					r.sname = fmt.Sprintf("person name %03d", rng.IntN(30))
				case 3:
					r.labels = map[string]string{"team": fmt.Sprint("t", rng.IntN(4))}
				}
				obj := storetest.NewPerson(r.name, Spec{Name: r.sname, Age: r.age, Tags: r.tags})
				obj.Metadata.Labels = r.labels
				obj.Metadata.Version = storetest.Int64(version[i])
				rec, err := s.Update(ctx, m, obj)
				if err != nil {
					t.Fatalf("update %s: %v", r.name, err)
				}
				version[i] = rec.Version
			}
			versionOf := map[string]int64{}
			for i, r := range rows {
				versionOf[r.name] = version[i]
			}
			labelTerms := []string{"team=t1", "team!=t1", "team", "!team", "team=(t0,t2)", "rare=yes", "rare", "tier=", "tier!=", "tier=(gold)", "!tier"}
			fieldTerms := []string{"spec.age=3", "spec.age!=3", "spec.age=(1,2,30)", "spec.tags=g1", "spec.tags!=g2",
				// Ranges: numbers below and above 0, strings around the
				// eight bytes a sort compares as an integer, names, and
				// bounds that hold everything or nothing.
				"spec.age>3", "spec.age>=30", "spec.age<0", "spec.age<=-5", "spec.age>-100", "spec.age<3", "spec.age>=34", "spec.age<-5",
				"spec.tags>g2", "spec.tags<=g1", "spec.tags>=g4", "spec.tags<g0",
				"spec.name>x", "spec.name<=xy", "spec.name>=person name 015", "spec.name<person name 003",
				"name>p5", "name<=p2", "name>=p0"}
			// Creation times of some objects, in UTC and in another zone.
			for _, i := range []int{0, len(rows) / 2, len(rows) - 1} {
				at := time.Unix(0, rows[i].created)
				utc, east := at.UTC().Format(time.RFC3339Nano), at.In(time.FixedZone("", 3600)).Format(time.RFC3339Nano)
				fieldTerms = append(fieldTerms, "metadata.creationTimestamp="+utc, "metadata.creationTimestamp!="+east,
					"metadata.creationTimestamp=("+utc+","+east+")", "metadata.creationTimestamp=("+east+",2026-01-01T00:00:00.5Z)",
					"metadata.creationTimestamp>"+utc, "metadata.creationTimestamp>="+east,
					"metadata.creationTimestamp<"+east, "metadata.creationTimestamp<="+utc)
			}
			sorts := []string{"", "spec.age,asc", "spec.age,desc", "name,desc", "metadata.creationTimestamp,asc", "spec.tags,desc", "spec.name,asc", "spec.name,desc"}
			for iter := range 400 {
				v := url.Values{}
				for range rng.IntN(3) {
					v.Add("labelSelector", labelTerms[rng.IntN(len(labelTerms))])
				}
				for range rng.IntN(3) {
					v.Add("fieldSelector", fieldTerms[rng.IntN(len(fieldTerms))])
				}
				if srt := sorts[rng.IntN(len(sorts))]; srt != "" {
					v.Add("sort", srt)
				}
				size := []int{0, 1, 7, 20}[rng.IntN(4)]
				page := 1 + rng.IntN(4)
				v.Set("size", strconv.Itoa(size))
				v.Set("page", strconv.Itoa(page))
				q, err := query.Parse(v)
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.List(ctx, m, q)
				if err != nil {
					t.Fatalf("%d: List(%s): %v", iter, v.Encode(), err)
				}
				if n, err := s.Count(ctx, m, q); err != nil || n != res.Total {
					t.Fatalf("%d: Count(%s) = %d, %v; List's total is %d", iter, v.Encode(), n, err, res.Total)
				}
				// The oracle.
				keep := func(r row) bool {
					for _, req := range q.Labels {
						val, ok := r.labels[req.Key]
						if !req.Matches(val, ok) {
							return false
						}
					}
					for _, req := range q.Fields {
						if req.Op.IsRange() {
							// Some value in the range, compared as its type.
							var c []int
							bound := req.Values[0]
							switch req.Key {
							case "spec.age":
								b, _ := strconv.ParseInt(bound, 10, 64)
								if r.age != nil {
									c = append(c, cmp.Compare(*r.age, b))
								}
							case "spec.tags":
								for _, tag := range r.tags {
									c = append(c, strings.Compare(tag, bound))
								}
							case "spec.name":
								c = append(c, strings.Compare(r.sname, bound))
							case "metadata.name":
								c = append(c, strings.Compare(r.name, bound))
							case "metadata.creationTimestamp":
								at, _ := time.Parse(time.RFC3339Nano, bound)
								c = append(c, cmp.Compare(r.created, at.UnixNano()))
							default:
								t.Fatalf("oracle: no range on %s", req.Key)
							}
							if !slices.ContainsFunc(c, req.Op.Holds) {
								return false
							}
							continue
						}
						var vals []string
						switch req.Key {
						case "spec.age":
							if r.age != nil {
								vals = []string{strconv.FormatInt(*r.age, 10)}
							}
						case "spec.tags":
							vals = r.tags
						}
						hit := slices.ContainsFunc(vals, func(s string) bool { return slices.Contains(req.Values, s) })
						if req.Key == "metadata.creationTimestamp" {
							vals = []string{"created"}
							hit = slices.ContainsFunc(req.Values, func(s string) bool {
								at, err := time.Parse(time.RFC3339Nano, s)
								return err == nil && at.UnixNano() == r.created
							})
						}
						if req.Op.String() == "Equals" || req.Op.String() == "In" {
							if !hit {
								return false
							}
						} else if hit || len(vals) == 0 {
							return false
						}
					}
					return true
				}
				var want []row
				for _, r := range rows {
					if keep(r) {
						want = append(want, r)
					}
				}
				cmpOpt := func(a, b *int64, desc bool) int {
					switch {
					case a == nil && b == nil:
						return 0
					case a == nil:
						return -1
					case b == nil:
						return 1
					}
					return cmp.Compare(*a, *b)
				}
				tagKey := func(r row, desc bool) *int64 {
					if len(r.tags) == 0 {
						return nil
					}
					t := r.tags[0]
					if desc {
						t = r.tags[len(r.tags)-1]
					}
					n := int64(t[1] - '0')
					return &n
				}
				slices.SortStableFunc(want, func(a, b row) int {
					for _, srt := range q.Sorts {
						c := 0
						switch srt.Index {
						case "spec.age":
							c = cmpOpt(a.age, b.age, srt.Desc)
						case "spec.tags":
							c = cmpOpt(tagKey(a, srt.Desc), tagKey(b, srt.Desc), srt.Desc)
						case "spec.name":
							c = strings.Compare(a.sname, b.sname)
						case "metadata.name":
							c = cmp.Compare(a.name, b.name)
						case "metadata.creationTimestamp":
							c = cmp.Compare(a.created, b.created)
						}
						if srt.Desc {
							c = -c
						}
						if c != 0 {
							return c
						}
					}
					return cmp.Or(cmp.Compare(b.created, a.created), cmp.Compare(a.name, b.name))
				})
				total := len(want)
				if size > 0 {
					lo := min((page-1)*size, len(want))
					want = want[lo:min(lo+size, len(want))]
				}
				var wantNames []string
				for _, r := range want {
					wantNames = append(wantNames, r.name)
				}
				if got := names(res); got != strings.Join(wantNames, ",") || res.Total != int64(total) {
					t.Fatalf("%d: List(%s)\n got   %d: %s\n want  %d: %s", iter, v.Encode(), res.Total, got, total, strings.Join(wantNames, ","))
				}
				for _, r := range res.Items {
					if r.Version != versionOf[r.Name] {
						t.Fatalf("%d: List(%s) gave %s at version %d, want the last written %d", iter, v.Encode(), r.Name, r.Version, versionOf[r.Name])
					}
				}
			}
		})
	}
}

// TestListCorrelatedTermsAndSort: all matches sit at the far end of the
// sort order, where streaming exceeds its budget and the planner falls
// back to collecting; the page must be right either way. (The oracle test's
// random data rarely reaches the fallback.)
func TestListCorrelatedTermsAndSort(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{}, m)
	for i := range 30000 {
		p := storetest.NewPerson(fmt.Sprintf("p%05d", i), Spec{Name: "x", Age: storetest.Int64(int64(i % 100))})
		team := "other"
		if i%100 < 10 && i%2 == 0 {
			team = "young"
		}
		p.Metadata.Labels = map[string]string{"team": team}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Dyoung&sort=spec.age,desc&size=3&page=2"))
	if err != nil {
		t.Fatal(err)
	}
	// Young: ages 0, 2, 4, 6, 8 (300 objects each); age desc, newest first.
	if got := names(res); got != "p29608,p29508,p29408" || res.Total != 1500 {
		t.Errorf("got %s (total %d), want p29608,p29508,p29408 (total 1500)", got, res.Total)
	}
}

// TestListCorrelatedPagesAgreeWithFullList: the load tool's data, where a
// team's ages are a few fixed values, so a page sorted by age is found only
// after thousands of entries of other teams. Such walks switch to testing
// entries against a bitmap of the team's ids; every page must still be
// the matching slice of the full, collected list.
func TestListCorrelatedPagesAgreeWithFullList(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.Open(t, store.Options{}, m)
	for i := range 12000 {
		p := storetest.NewPerson(fmt.Sprintf("p%05d", i), Spec{Name: "x", Age: storetest.Int64(int64(18 + i%60))})
		p.Metadata.Labels = map[string]string{"team": fmt.Sprint("t", i%10)}
		if i%7 == 0 {
			p.Metadata.Labels["odd"] = "yes"
		}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	// Updates and deletes keep ids stable and drop entries.
	for i := 0; i < 12000; i += 97 {
		if _, err := s.Delete(ctx, m, fmt.Sprintf("p%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, sel := range []string{"team%3Dt0", "team%3Dt9", "team%3D(t3,t4)", "team%3Dt0&labelSelector=odd", "team%3Dt5&labelSelector=odd%3Dyes"} {
		for _, srt := range []string{"spec.age,desc", "spec.age,asc", "spec.age,desc&sort=metadata.name,desc"} {
			full, err := s.List(ctx, m, mustQuery(t, "labelSelector="+sel+"&sort="+srt))
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Split(names(full), ",")
			for _, page := range []int{1, 2, 7, 40} {
				q := fmt.Sprintf("labelSelector=%s&sort=%s&size=20&page=%d", sel, srt, page)
				res, err := s.List(ctx, m, mustQuery(t, q))
				if err != nil {
					t.Fatal(err)
				}
				lo := min((page-1)*20, len(all))
				want := strings.Join(all[lo:min(lo+20, len(all))], ",")
				if got := names(res); got != want || res.Total != full.Total {
					t.Fatalf("%s: got %s (total %d)\nwant %s (total %d)", q, got, res.Total, want, full.Total)
				}
			}
		}
	}
}

// TestEmptyLabelValue: "k=" selects the objects whose label k is "", and
// "k!=" those without k or with another value (Kubernetes' semantics).
func TestEmptyLabelValue(t *testing.T) {
	m := storetest.PersonModel()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	for _, p := range []struct {
		name   string
		labels map[string]string
	}{
		{"a", map[string]string{"color": ""}},
		{"b", map[string]string{"color": "red"}},
		{"c", nil},
		{"d", map[string]string{"color": "", "team": "x"}},
		{"e", map[string]string{"colorful": ""}},
	} {
		clock.t = clock.t.Add(time.Second)
		obj := storetest.NewPerson(p.name, Spec{Name: "x"})
		obj.Metadata.Labels = p.labels
		if _, err := s.Create(ctx, m, obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q, want string
		total   int64
	}{
		{"labelSelector=color%3D", "d,a", 2},
		{"labelSelector=color!%3D", "e,c,b", 3},
		{"labelSelector=color", "d,b,a", 3},
		{"labelSelector=color%3D&labelSelector=team", "d", 1},
		{"labelSelector=color%3D&labelSelector=!team", "a", 1},
		{"labelSelector=color!%3D&labelSelector=colorful%3D", "e", 1},
		{"labelSelector=color%3D&size=1&page=2", "a", 2},
		{"labelSelector=color!%3D&size=2&page=1&sort=name", "b,c", 3},
		{"labelSelector=color%3D&fieldSelector=name!%3Dd", "a", 1},
	} {
		res, err := s.List(ctx, m, mustQuery(t, tc.q))
		if err != nil {
			t.Fatalf("List(%s): %v", tc.q, err)
		}
		if got := names(res); got != tc.want || res.Total != tc.total {
			t.Errorf("List(%s) = %d: %s, want %d: %s", tc.q, res.Total, got, tc.total, tc.want)
		}
	}
}

// TestTimeFieldTermsAgree: on both timestamp indexes, "=", "!=" and
// "=(a,b)" with a stored value, or the same instant in another zone,
// select what testing every object's time selects. The creation index
// keeps no value in its entries, so its "=" is answered differently.
func TestTimeFieldTermsAgree(t *testing.T) {
	m := storetest.PersonModel()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	for i := range 300 {
		if i%3 == 0 {
			clock.t = clock.t.Add(time.Millisecond)
		}
		p := storetest.NewPerson(fmt.Sprintf("p%03d", i), Spec{Name: "x"})
		p.Metadata.Finalizers = []string{"example.com/hold"}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if _, err := s.Delete(ctx, m, p.Metadata.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := s.List(ctx, m, mustQuery(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	timeOf := func(r *store.Record, field string) (time.Time, bool) {
		var o struct {
			Metadata struct{ CreationTimestamp, DeletionTimestamp *time.Time }
		}
		if err := json.Unmarshal(r.Data, &o); err != nil {
			t.Fatal(err)
		}
		at := o.Metadata.CreationTimestamp
		if field == "metadata.deletionTimestamp" {
			at = o.Metadata.DeletionTimestamp
		}
		if at == nil {
			return time.Time{}, false
		}
		return *at, true
	}
	for _, field := range []string{"metadata.creationTimestamp", "metadata.deletionTimestamp"} {
		for _, name := range []string{"p000", "p001", "p148", "p296", "p299"} { // p000, p148, p296 deleted
			rec, err := s.Get(ctx, m, name)
			if err != nil {
				t.Fatal(err)
			}
			at, ok := timeOf(rec, field)
			if !ok {
				continue
			}
			utc := at.UTC().Format(time.RFC3339Nano)
			east := at.In(time.FixedZone("", 5400)).Format(time.RFC3339Nano)
			other := at.Add(time.Hour).UTC().Format(time.RFC3339Nano) // matches nothing
			for _, term := range []struct {
				sel  string
				eq   bool
				vals []string
			}{
				{field + "=" + utc, true, []string{utc}},
				{field + "=" + east, true, []string{east}},
				{field + "!=" + utc, false, []string{utc}},
				{field + "!=" + east, false, []string{east}},
				{field + "=(" + utc + "," + east + ")", true, []string{utc}},
				{field + "=(" + east + "," + other + ")", true, []string{east, other}},
				{field + "!=(" + utc + "," + other + ")", false, []string{utc, other}},
			} {
				var want []string
				for _, r := range all.Items {
					v, has := timeOf(r, field)
					hit := slices.ContainsFunc(term.vals, func(s string) bool {
						x, err := time.Parse(time.RFC3339Nano, s)
						return err == nil && has && x.Equal(v)
					})
					if has && hit == term.eq {
						want = append(want, r.Name)
					}
				}
				for _, size := range []int{0, 2} {
					q := "fieldSelector=" + url.QueryEscape(term.sel) + "&size=" + strconv.Itoa(size)
					res, err := s.List(ctx, m, mustQuery(t, q))
					if err != nil {
						t.Fatal(err)
					}
					w := want
					if size > 0 {
						w = w[:min(size, len(w))]
					}
					if got := names(res); got != strings.Join(w, ",") || res.Total != int64(len(want)) {
						t.Errorf("%s: got %d: %s\nwant %d: %s", term.sel, res.Total, got, len(want), strings.Join(w, ","))
					}
				}
			}
		}
	}
}

// TestLabelChangeReachesEveryIndexEntry: every index entry carries its
// object's label signature, so a label change must refresh the entries of
// indexes whose keys stayed the same. A list streamed over such an index
// (3,000 objects, half of them relabelled) must see the new labels.
func TestLabelChangeReachesEveryIndexEntry(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	var want []string
	for i := range 3000 {
		p := storetest.NewPerson(fmt.Sprintf("p%04d", i), Spec{Name: "x", Age: storetest.Int64(int64(i % 50))})
		p.Metadata.Labels = map[string]string{"team": "a"}
		rec, err := s.Create(ctx, m, p)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			continue
		}
		p = decode(t, rec)
		p.Metadata.Labels = map[string]string{"team": "b"}
		if _, err := s.Update(ctx, m, p); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			want = append(want, p.Metadata.Name)
		}
	}
	// Age 0, ties newest first: the last relabelled objects of age 0.
	slices.Reverse(want)
	res, err := s.List(ctx, m, mustQuery(t, "labelSelector=team%3Db&sort=spec.age,asc&size=20"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != strings.Join(want[:20], ",") || res.Total != 1500 {
		t.Fatalf("got %d: %s\nwant 1500: %s", res.Total, got, strings.Join(want[:20], ","))
	}
}

// TestListPassesOverWholeNodes: labels correlate with the sort key and the
// creation order, so index nodes hold entries of one label only and lists
// pass over whole nodes, at the start, the middle and the end of groups of
// equal keys, in every walk: forward, backward by groups, and gathered
// groups for other tie orders. Pages must be what sorting all matches
// gives.
func TestListPassesOverWholeNodes(t *testing.T) {
	m := storetest.PersonModel()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	type row struct {
		name string
		age  int64
		i    int // creation order
	}
	var rows []row
	for i := range 12000 {
		clock.t = clock.t.Add(time.Millisecond)
		r := row{name: fmt.Sprintf("p%05d", (i*7919)%12000), age: int64(i / 1000), i: i}
		team := "b"
		if i%1000 < 300 || i%1000 >= 900 { // the oldest and the newest of each age
			team = "a"
		}
		p := storetest.NewPerson(r.name, Spec{Name: "x", Age: storetest.Int64(r.age)})
		p.Metadata.Labels = map[string]string{"team": team}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
		if team == "a" {
			rows = append(rows, r)
		}
	}
	for _, tc := range []struct {
		sort string
		less func(a, b row) int
	}{
		{"sort=spec.age,desc", func(a, b row) int { return cmp.Or(cmp.Compare(b.age, a.age), cmp.Compare(b.i, a.i)) }},
		{"sort=spec.age,asc", func(a, b row) int { return cmp.Or(cmp.Compare(a.age, b.age), cmp.Compare(b.i, a.i)) }},
		{"sort=spec.age,desc&sort=metadata.name,desc", func(a, b row) int { return cmp.Or(cmp.Compare(b.age, a.age), strings.Compare(b.name, a.name)) }},
		{"sort=spec.age,asc&sort=metadata.creationTimestamp,asc", func(a, b row) int { return cmp.Or(cmp.Compare(a.age, b.age), cmp.Compare(a.i, b.i)) }},
	} {
		want := slices.Clone(rows)
		slices.SortFunc(want, tc.less)
		for _, page := range []int{1, 14, 15, 16, 100, 180, 181} {
			q := fmt.Sprintf("labelSelector=team%%3Da&%s&size=20&page=%d", tc.sort, page)
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

// TestPostingsFollowEveryWrite: label postings must follow creates, label
// changes, soft and final deletes, with views taken in between, and equal
// postings built afresh; lists with several label terms must agree with
// filtering the objects.
func TestPostingsFollowEveryWrite(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	rng := rand.New(rand.NewPCG(3, 5))
	labelsOf := func() map[string]string {
		l := map[string]string{}
		if rng.IntN(4) > 0 {
			l["team"] = fmt.Sprint("t", rng.IntN(3))
		}
		if rng.IntN(2) == 0 {
			l["kind"] = fmt.Sprint("k", rng.IntN(2))
		}
		if rng.IntN(20) == 0 {
			l["rare"] = "yes"
		}
		return l
	}
	live := map[string]map[string]string{}
	for op := range 3000 {
		name := fmt.Sprintf("p%03d", rng.IntN(400))
		cur, err := s.Get(ctx, m, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			p := storetest.NewPerson(name, Spec{Name: "x"})
			p.Metadata.Labels = labelsOf()
			if rng.IntN(5) == 0 {
				p.Metadata.Finalizers = []string{"example.com/hold"}
			}
			if _, err := s.Create(ctx, m, p); err != nil {
				t.Fatal(err)
			}
			live[name] = p.Metadata.Labels
		case err != nil:
			t.Fatal(err)
		case rng.IntN(3) == 0:
			if _, err := s.Delete(ctx, m, name); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, m, name); errors.Is(err, store.ErrNotFound) {
				delete(live, name)
			}
		default:
			p := decode(t, cur)
			p.Metadata.Labels = labelsOf()
			if rng.IntN(3) == 0 {
				p.Metadata.Finalizers = nil // a deleting object goes for good
			}
			if _, err := s.Update(ctx, m, p); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, m, name); errors.Is(err, store.ErrNotFound) {
				delete(live, name)
			} else {
				live[name] = p.Metadata.Labels
			}
		}
		if op%97 != 0 {
			continue
		}
		if err := s.CheckPostingsForTest(m); err != nil {
			t.Fatalf("after %d writes: %v", op+1, err)
		}
		for _, terms := range [][]string{{"team=t1", "kind=k0"}, {"team=t0", "rare=yes"}, {"team=(t0,t2)", "kind=k1"}, {"team", "kind=k0"}} {
			v := url.Values{"labelSelector": terms, "size": {"5"}}
			sel := strings.Join(terms, "&")
			q := mustQuery(t, v.Encode())
			res, err := s.List(ctx, m, q)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, l := range live {
				ok := true
				for _, r := range q.Labels {
					v, has := l[r.Key]
					ok = ok && r.Matches(v, has)
				}
				if ok {
					want++
				}
			}
			if res.Total != int64(want) {
				t.Fatalf("after %d writes, %s: total %d, want %d", op+1, sel, res.Total, want)
			}
		}
	}
}

// TestIntersectedTotals: two label terms with more candidates than a list
// collects, so the total is their intersection from the postings; the
// larger label leaves every third word of ids empty, and the last ones,
// where the smaller one has ids. Pages must agree with filtering and sorting all objects.
func TestIntersectedTotals(t *testing.T) {
	m := storetest.PersonModel()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	var want []string
	for i := range 5000 {
		clock.t = clock.t.Add(time.Millisecond)
		p := storetest.NewPerson(fmt.Sprintf("p%05d", i), Spec{Name: "x", Age: storetest.Int64(int64(i % 7))})
		p.Metadata.Labels = map[string]string{}
		if i%4 == 0 {
			p.Metadata.Labels["small"] = "y"
		}
		inLarge := (i/64)%3 != 2 && i < 4800 // gaps, and none at the end
		if inLarge {
			p.Metadata.Labels["large"] = "x"
		}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 && inLarge {
			want = append(want, p.Metadata.Name)
		}
	}
	// Age asc, then newest first.
	slices.SortStableFunc(want, func(a, b string) int {
		ia, _ := strconv.Atoi(a[1:])
		ib, _ := strconv.Atoi(b[1:])
		return cmp.Or(cmp.Compare(ia%7, ib%7), cmp.Compare(ib, ia))
	})
	// The same with a field term too: the intersection keeps the field
	// index's entries the posted words hold.
	var wantAged []string
	for _, n := range want {
		if i, _ := strconv.Atoi(n[1:]); i%7 >= 1 && i%7 <= 3 {
			wantAged = append(wantAged, n)
		}
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"labelSelector=small%3Dy&labelSelector=large%3Dx&sort=spec.age,asc", want},
		{"labelSelector=small%3Dy&labelSelector=large%3Dx&fieldSelector=spec.age%3D(1,2,3)&sort=spec.age,asc", wantAged},
	} {
		for _, page := range []int{1, 7} {
			res, err := s.List(ctx, m, mustQuery(t, fmt.Sprintf("%s&size=20&page=%d", tc.query, page)))
			if err != nil {
				t.Fatal(err)
			}
			lo := (page - 1) * 20
			if got := names(res); got != strings.Join(tc.want[lo:lo+20], ",") || res.Total != int64(len(tc.want)) {
				t.Fatalf("%s page %d:\n got  %d: %s\n want %d: %s", tc.query, page, res.Total, got, len(tc.want), strings.Join(tc.want[lo:lo+20], ","))
			}
		}
	}
}

// TestEntriesShareTheirKeys: the entries of one key point at one copy of
// it, and so do the postings of a label (a copy of their own: a label
// new to a chunk of ids would otherwise have to find the labels index's),
// whether they were inserted one by one (in any order, with deletes
// between) or built at a restart. A search compares keys on its path;
// copies all over the heap would make each comparison a cache miss.
func TestEntriesShareTheirKeys(t *testing.T) {
	m := storetest.PersonModel()
	dir := t.TempDir()
	s := storetest.Open(t, store.Options{Dir: dir}, m)
	rng := rand.New(rand.NewPCG(7, 11))
	for _, i := range rng.Perm(3000) {
		// Fresh strings for every object, as decoding gives.
		p := storetest.NewPerson(fmt.Sprintf("p%04d", i), Spec{Name: "x", Age: storetest.Int64(int64(i % 5)), Tags: []string{fmt.Sprint("tag", i%4)}})
		p.Metadata.Labels = map[string]string{"team": fmt.Sprint("t", i%3), "kind": fmt.Sprint("k", i%2)}
		if _, err := s.Create(ctx, m, p); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			if _, err := s.Delete(ctx, m, fmt.Sprintf("p%04d", rng.IntN(3000))); err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
		}
	}
	check := func(when string, s *store.Store) {
		t.Helper()
		copies, err := s.KeyCopiesForTest(m)
		if err != nil {
			t.Fatal(err)
		}
		// Five labels (entries and postings), one spec.name, five ages,
		// four tags; emails and friends are empty.
		if len(copies) != 5+5+1+5+4 {
			t.Errorf("%s: %d keys, want 20: %v", when, len(copies), copies)
		}
		for key, n := range copies {
			if n != 1 {
				t.Errorf("%s: %d copies of %q", when, n, key)
			}
		}
	}
	check("after inserts", s)
	s.Close()
	check("after a restart", storetest.Open(t, store.Options{Dir: dir}, m))
}

// TestStreamOverBudgetCollects: a page whose matches all sit at the far
// end of the sort order (a field term, so no label signature passes over
// the rest) makes the stream give up once it has walked more than
// collecting costs, and the collected page is the same.
func TestStreamOverBudgetCollects(t *testing.T) {
	m := storetest.PersonModel()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := storetest.Open(t, store.Options{Now: clock.now}, m)
	var want []string // the old ones, newest first
	for i := range 20000 {
		clock.t = clock.t.Add(time.Millisecond)
		spec := Spec{Name: "young", Age: storetest.Int64(int64(i % 100))}
		old := i%16 == 0
		if old {
			spec = Spec{Name: "old", Age: storetest.Int64(120)}
		}
		name := fmt.Sprintf("p%05d", i)
		if _, err := s.Create(ctx, m, storetest.NewPerson(name, spec)); err != nil {
			t.Fatal(err)
		}
		if old {
			want = append(want, name)
		}
	}
	slices.Reverse(want)
	for _, page := range []int{1, 30} {
		res, err := s.List(ctx, m, mustQuery(t, fmt.Sprintf("fieldSelector=spec.name%%3Dold&sort=spec.age,asc&size=20&page=%d", page)))
		if err != nil {
			t.Fatal(err)
		}
		lo := (page - 1) * 20
		if got := names(res); got != strings.Join(want[lo:lo+20], ",") || res.Total != int64(len(want)) {
			t.Fatalf("page %d:\n got  %d: %s\n want %d: %s", page, res.Total, got, len(want), strings.Join(want[lo:lo+20], ","))
		}
	}
}
