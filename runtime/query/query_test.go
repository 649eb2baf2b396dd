package query

import (
	"errors"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/query/selector"
)

func req(key string, op selector.Operator, values ...string) selector.Requirement {
	return selector.Requirement{Key: key, Op: op, Values: values}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		query string // raw query string, parsed with url.ParseQuery
		want  Query
	}{
		{name: "empty", query: "", want: Query{Page: 1}},
		{name: "unrelated parameters ignored", query: "watch=true&foo=bar", want: Query{Page: 1}},
		// page
		{name: "page 1", query: "page=1", want: Query{Page: 1}},
		{name: "page 3", query: "page=3", want: Query{Page: 3}},
		{name: "page 0 becomes 1", query: "page=0", want: Query{Page: 1}},
		{name: "negative page becomes 1", query: "page=-3", want: Query{Page: 1}},
		{name: "empty page is absent", query: "page=", want: Query{Page: 1}},
		{name: "first page value wins", query: "page=2&page=5", want: Query{Page: 2}},
		// size
		{name: "size absent is 0", query: "page=2", want: Query{Page: 2}},
		{name: "size 0", query: "size=0", want: Query{Page: 1}},
		{name: "size 20", query: "size=20", want: Query{Page: 1, Size: 20}},
		{name: "size larger than any list", query: "size=9223372036854775807", want: Query{Page: 1, Size: math.MaxInt}},
		// sort
		{name: "sort name alias", query: "sort=name", want: Query{Page: 1, Sorts: []Sort{{Index: "metadata.name"}}}},
		{name: "sort asc", query: "sort=spec.age,asc", want: Query{Page: 1, Sorts: []Sort{{Index: "spec.age"}}}},
		{name: "sort desc", query: "sort=name,desc", want: Query{Page: 1, Sorts: []Sort{{Index: "metadata.name", Desc: true}}}},
		{name: "sort DESC upper case", query: "sort=spec.age,DESC", want: Query{Page: 1, Sorts: []Sort{{Index: "spec.age", Desc: true}}}},
		{name: "sort Asc mixed case", query: "sort=spec.age,Asc", want: Query{Page: 1, Sorts: []Sort{{Index: "spec.age"}}}},
		{name: "sort spaces trimmed", query: "sort=+spec.age+,+desc+", want: Query{Page: 1, Sorts: []Sort{{Index: "spec.age", Desc: true}}}},
		{name: "sort repeated keeps order", query: "sort=spec.age,desc&sort=name&sort=metadata.creationTimestamp,asc",
			want: Query{Page: 1, Sorts: []Sort{{Index: "spec.age", Desc: true}, {Index: "metadata.name"}, {Index: "metadata.creationTimestamp"}}}},
		{name: "empty sort value skipped", query: "sort=&sort=name", want: Query{Page: 1, Sorts: []Sort{{Index: "metadata.name"}}}},
		// selectors
		{name: "label selector", query: "labelSelector=app%3Dweb",
			want: Query{Page: 1, Labels: selector.Selector{req("app", selector.Equals, "web")}}},
		{name: "label selector repeated", query: "labelSelector=app%3Dweb&labelSelector=!svc.run/hidden&labelSelector=tier%3D(a,b)",
			want: Query{Page: 1, Labels: selector.Selector{
				req("app", selector.Equals, "web"), req("svc.run/hidden", selector.DoesNotExist), req("tier", selector.In, "a", "b"),
			}}},
		{name: "empty label selector skipped", query: "labelSelector=", want: Query{Page: 1}},
		{name: "field selector name alias", query: "fieldSelector=name%3Dpost-1",
			want: Query{Page: 1, Fields: selector.Selector{req("metadata.name", selector.Equals, "post-1")}}},
		{name: "field selector repeated", query: "fieldSelector=spec.age!%3D3&fieldSelector=spec.slug%3D(b,a)",
			want: Query{Page: 1, Fields: selector.Selector{req("spec.age", selector.NotEquals, "3"), req("spec.slug", selector.In, "a", "b")}}},
		{name: "field selector ranges", query: "fieldSelector=spec.year%3E1900&fieldSelector=spec.year%3C%3D2000",
			want: Query{Page: 1, Fields: selector.Selector{req("spec.year", selector.GreaterThan, "1900"), req("spec.year", selector.LessOrEqual, "2000")}}},
		// everything
		{name: "all parameters", query: "page=2&size=10&sort=spec.age,desc&labelSelector=app%3Dweb&fieldSelector=spec.age%3D3",
			want: Query{Page: 2, Size: 10, Sorts: []Sort{{Index: "spec.age", Desc: true}},
				Labels: selector.Selector{req("app", selector.Equals, "web")},
				Fields: selector.Selector{req("spec.age", selector.Equals, "3")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatalf("bad test query %q: %v", tc.query, err)
			}
			got, err := Parse(v)
			if err != nil {
				t.Fatalf("Parse(%q): got error %v, want %+v", tc.query, err, tc.want)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q):\n got %+v\nwant %+v", tc.query, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		query     string
		wantParam string // ParamError.Param or selector.Error.Param
		wantValue string // the offending value, as sent
		selector  bool   // the error is a *selector.Error
		wantMsg   string
	}{
		{name: "page not a number", query: "page=x", wantParam: "page", wantValue: "x", wantMsg: `invalid page "x": must be an integer`},
		{name: "page fraction", query: "page=1.5", wantParam: "page", wantValue: "1.5"},
		{name: "page overflow", query: "page=99999999999999999999", wantParam: "page", wantValue: "99999999999999999999"},
		{name: "size not a number", query: "size=x", wantParam: "size", wantValue: "x", wantMsg: `invalid size "x": must be an integer`},
		{name: "size negative", query: "size=-1", wantParam: "size", wantValue: "-1", wantMsg: "must not be negative"},
		{name: "size overflow", query: "size=9223372036854775808", wantParam: "size", wantValue: "9223372036854775808", wantMsg: "must be an integer"},
		{name: "sort bad direction", query: "sort=name,up", wantParam: "sort", wantValue: "name,up", wantMsg: "direction must be asc or desc"},
		{name: "sort extra part", query: "sort=name,desc,asc", wantParam: "sort", wantValue: "name,desc,asc"},
		{name: "sort empty field", query: "sort=,desc", wantParam: "sort", wantValue: ",desc", wantMsg: "expected <field>[,asc|desc]"},
		{name: "sort blank field", query: "sort=+,asc", wantParam: "sort", wantValue: " ,asc"},
		{name: "sort second value bad", query: "sort=name&sort=age,sideways", wantParam: "sort", wantValue: "age,sideways"},
		{name: "label selector no key", query: "labelSelector=%3Dweb", selector: true, wantParam: "labelSelector", wantValue: "=web"},
		{name: "label selector bad value", query: "labelSelector=app%3D-web", selector: true, wantParam: "labelSelector", wantValue: "app=-web"},
		{name: "label selector second bad", query: "labelSelector=app&labelSelector=a%20b", selector: true, wantParam: "labelSelector", wantValue: "a b"},
		{name: "field selector no operator", query: "fieldSelector=spec.age", selector: true, wantParam: "fieldSelector", wantValue: "spec.age"},
		{name: "field selector no value", query: "fieldSelector=spec.age%3D", selector: true, wantParam: "fieldSelector", wantValue: "spec.age="},
		{name: "field selector range over a set", query: "fieldSelector=spec.age%3E(1,2)", selector: true, wantParam: "fieldSelector", wantValue: "spec.age>(1,2)"},
		{name: "label selector range", query: "labelSelector=tier%3E1", selector: true, wantParam: "labelSelector", wantValue: "tier>1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatalf("bad test query %q: %v", tc.query, err)
			}
			got, err := Parse(v)
			if err == nil {
				t.Fatalf("Parse(%q): got %+v, want an error naming %s", tc.query, got, tc.wantParam)
			}
			var param, value string
			var pe *ParamError
			var se *selector.Error
			switch {
			case errors.As(err, &pe):
				if tc.selector {
					t.Fatalf("Parse(%q): got *ParamError %v, want *selector.Error", tc.query, err)
				}
				param, value = pe.Param, pe.Value
			case errors.As(err, &se):
				if !tc.selector {
					t.Fatalf("Parse(%q): got *selector.Error %v, want *ParamError", tc.query, err)
				}
				param, value = se.Param, se.Term
			default:
				t.Fatalf("Parse(%q): got %T %v, want *ParamError or *selector.Error", tc.query, err, err)
			}
			if param != tc.wantParam || value != tc.wantValue {
				t.Errorf("Parse(%q): error names %s %q, want %s %q (error %q)", tc.query, param, value, tc.wantParam, tc.wantValue, err)
			}
			if !strings.Contains(err.Error(), tc.wantParam) {
				t.Errorf("Parse(%q): error %q does not name %s", tc.query, err, tc.wantParam)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Parse(%q): got error %q, want it to contain %q", tc.query, err, tc.wantMsg)
			}
		})
	}
}

func TestParseSortAndString(t *testing.T) {
	tests := []struct {
		in   string
		want Sort
		str  string
	}{
		{in: "name", want: Sort{Index: "metadata.name"}, str: "metadata.name,asc"},
		{in: "name,desc", want: Sort{Index: "metadata.name", Desc: true}, str: "metadata.name,desc"},
		{in: "metadata.name,ASC", want: Sort{Index: "metadata.name"}, str: "metadata.name,asc"},
		{in: "spec.age,", want: Sort{Index: "spec.age"}, str: "spec.age,asc"},
		{in: "names", want: Sort{Index: "names"}, str: "names,asc"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSort(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseSort(%q): got %+v, %v; want %+v, nil", tc.in, got, err, tc.want)
			}
			if s := got.String(); s != tc.str {
				t.Errorf("ParseSort(%q).String(): got %q, want %q", tc.in, s, tc.str)
			}
			// The String form parses back to the same Sort.
			if back, err := ParseSort(got.String()); err != nil || back != got {
				t.Errorf("ParseSort(%q): got %+v, %v; want %+v", got.String(), back, err, got)
			}
		})
	}
}

// FuzzParse feeds raw query strings through url.ParseQuery and Parse: no
// panic, errors of the two documented types only, and a successful parse
// stays within the documented bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "page=2&size=10", "page=-1", "size=10001", "sort=name,desc&sort=spec.age",
		"labelSelector=app%3Dweb&labelSelector=!x", "fieldSelector=name%3D(a,b)", "sort=,", "page=x",
		"labelSelector=%3D", "fieldSelector=a!%3D", "size=0&page=0",
		"fieldSelector=spec.age%3E%3D3&fieldSelector=spec.age%3C9", "fieldSelector=spec.age>(1,2)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			t.Skip()
		}
		q, err := Parse(v)
		if err != nil {
			var pe *ParamError
			var se *selector.Error
			if !errors.As(err, &pe) && !errors.As(err, &se) {
				t.Fatalf("Parse(%q): got error of type %T (%v), want *ParamError or *selector.Error", raw, err, err)
			}
			return
		}
		if q.Page < 1 || q.Size < 0 {
			t.Fatalf("Parse(%q): got page %d size %d, want page >= 1 and size >= 0", raw, q.Page, q.Size)
		}
		for _, s := range q.Sorts {
			if s.Index == "" || s.Index == "name" {
				t.Fatalf("Parse(%q): got sort %+v, want a non-empty index with the alias resolved", raw, s)
			}
		}
	})
}

func TestParseRaw(t *testing.T) {
	many := strings.Repeat("x=1&", MaxParams-1)
	for _, tc := range []struct {
		raw, param string // param "" means no error
	}{
		{"", ""},
		{"page=2&labelSelector=a%3Db", ""},
		{"labelSelector=%zz", "labelSelector"},
		{"labelSelector=a%3D1&fieldSelector=spec.age%3D1%zz", "fieldSelector"},
		{"page=%", "page"},
		{"a%2=1", "a%2"},
		{"x=1;y=2", "x"},
		{"q=100%25", ""},
		{many + "labelSelector=a%3Db", ""},
		{many + "x=1&labelSelector=a%3Db", "query"},
		{strings.Repeat("&", MaxParams), "query"},
	} {
		v, err := ParseRaw(tc.raw)
		var pe *ParamError
		switch {
		case tc.param == "" && err != nil:
			t.Errorf("ParseRaw(%q) = %v, want nil", tc.raw, err)
		case tc.param != "" && (!errors.As(err, &pe) || pe.Param != tc.param):
			t.Errorf("ParseRaw(%q) = %v, want a *ParamError naming %q", tc.raw, err, tc.param)
		case tc.param != "" && v != nil:
			t.Errorf("ParseRaw(%q) = %v with its error, want no values", tc.raw, v)
		}
	}
	// The tail of a long query is kept, unlike URL.Query past its cap.
	v, err := ParseRaw(many + "labelSelector=a%3Db")
	if err != nil || v.Get("labelSelector") != "a=b" {
		t.Errorf("ParseRaw(%d parameters) = %v, %v; want labelSelector a=b", MaxParams, v, err)
	}
}

// FuzzParseRaw: within MaxParams, ParseRaw refuses exactly what
// url.ParseQuery refuses and otherwise gives the same values.
func FuzzParseRaw(f *testing.F) {
	for _, s := range []string{"", "a=1&b=%3D", "a=%zz", "%", "a;b", "a=%2", "k%3d=v", "&&=&", "a=1&a=2&b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseRaw(raw)
		if strings.Count(raw, "&")+1 > MaxParams {
			if err == nil {
				t.Fatalf("ParseRaw(%q) accepted more than %d parameters", raw, MaxParams)
			}
			return
		}
		want, perr := url.ParseQuery(raw)
		if (err == nil) != (perr == nil) {
			t.Fatalf("ParseRaw(%q) = %v but url.ParseQuery gives %v", raw, err, perr)
		}
		if err == nil && (len(got) != 0 || len(want) != 0) && !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseRaw(%q) = %v, url.ParseQuery = %v", raw, got, want)
		}
	})
}

func TestParseNamesEveryBadParameter(t *testing.T) {
	v, _ := url.ParseQuery("page=x&size=-1&sort=spec.age,up&sort=name&labelSelector=a%3D%3Db&labelSelector=team%3Dblue&fieldSelector=spec&fieldSelector=spec.age%3D3")
	q, err := Parse(v)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse = %v, want Errors", err)
	}
	var params []string
	for _, e := range errs {
		var pe *ParamError
		var se *selector.Error
		switch {
		case errors.As(e, &pe):
			params = append(params, pe.Param)
		case errors.As(e, &se):
			params = append(params, se.Param)
		default:
			t.Errorf("unexpected error %T %v", e, e)
		}
	}
	if want := []string{"page", "size", "sort", "labelSelector", "fieldSelector"}; !slices.Equal(params, want) {
		t.Errorf("bad parameters named = %v, want %v", params, want)
	}
	// What parsed is kept, for the checks that come next.
	if len(q.Sorts) != 1 || len(q.Labels) != 1 || len(q.Fields) != 1 || q.Page != 1 || q.Size != 0 {
		t.Errorf("query kept = %+v", q)
	}
	if Join(nil, nil) != nil || Join(nil, errs[0]) != errs[0] || len(Join(errs, errs[0]).(Errors)) != len(errs)+1 {
		t.Errorf("Join does not flatten or pass single errors through")
	}
}
