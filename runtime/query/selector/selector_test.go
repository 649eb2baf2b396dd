package selector

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/object"
)

// goodCase is a term that parses. str is the canonical String() of the
// result.
type goodCase struct {
	name string
	term string
	want Requirement
	str  string
}

// badCase is a malformed term; reason is a substring of Error.Reason.
type badCase struct {
	name   string
	term   string
	reason string
}

func req(key string, op Operator, values ...string) Requirement {
	return Requirement{Key: key, Op: op, Values: values}
}

var labelGood = []goodCase{
	// Halo's forms.
	{name: "equals", term: "name=value", want: req("name", Equals, "value"), str: "name=value"},
	{name: "not equals", term: "name!=value", want: req("name", NotEquals, "value"), str: "name!=value"},
	{name: "does not exist", term: "!name", want: req("name", DoesNotExist), str: "!name"},
	{name: "exists", term: "name", want: req("name", Exists), str: "name"},
	{name: "in", term: "name=(a,b)", want: req("name", In, "a", "b"), str: "name=(a,b)"},
	// Sets.
	{name: "in sorted and deduplicated", term: "k=(b,a,b)", want: req("k", In, "a", "b"), str: "k=(a,b)"},
	{name: "in one value", term: "k=(a)", want: req("k", In, "a"), str: "k=(a)"},
	{name: "not in", term: "k!=(b,a)", want: req("k", NotIn, "a", "b"), str: "k!=(a,b)"},
	// Keys and values.
	{name: "brand prefixed key", term: "svc.run/role-template=true",
		want: req("svc.run/role-template", Equals, "true"), str: "svc.run/role-template=true"},
	{name: "halo hidden not exists", term: "!halo.run/hidden",
		want: req("halo.run/hidden", DoesNotExist), str: "!halo.run/hidden"},
	{name: "prefixed exists", term: "rbac.authorization.svc.run/aggregate-to-editor",
		want: req("rbac.authorization.svc.run/aggregate-to-editor", Exists),
		str:  "rbac.authorization.svc.run/aggregate-to-editor"},
	{name: "uppercase key and value", term: "MyKey=ABC", want: req("MyKey", Equals, "ABC"), str: "MyKey=ABC"},
	{name: "value separators", term: "k=v_1.2-x", want: req("k", Equals, "v_1.2-x"), str: "k=v_1.2-x"},
	{name: "key name 63", term: strings.Repeat("k", 63) + "=v",
		want: req(strings.Repeat("k", 63), Equals, "v"), str: strings.Repeat("k", 63) + "=v"},
	{name: "empty value", term: "name=", want: req("name", Equals, ""), str: "name="},
	{name: "empty not-equals value", term: "name!=", want: req("name", NotEquals, ""), str: "name!="},
	{name: "empty value after spaces", term: " k= ", want: req("k", Equals, ""), str: "k="},
	{name: "value 63", term: "k=" + strings.Repeat("v", 63),
		want: req("k", Equals, strings.Repeat("v", 63)), str: "k=" + strings.Repeat("v", 63)},
	// White space.
	{name: "surrounding spaces trimmed", term: "  app=web \t", want: req("app", Equals, "web"), str: "app=web"},
	{name: "surrounding spaces on not exists", term: " !app ", want: req("app", DoesNotExist), str: "!app"},
}

var labelBad = []badCase{
	{name: "no key", term: "=value", reason: `found no key before "="`},
	{name: "no key nor value", term: "=", reason: `found no key before "="`},
	{name: "bang with empty value", term: "!a=", reason: `"!<key>" takes no value`},
	{name: "no key before not equals", term: "!=value", reason: `found no key before "!="`},
	{name: "bang alone", term: "!", reason: `found "!" with no key`},
	{name: "double equals", term: "a==b", reason: `invalid value "=b"`},
	{name: "comma list", term: "a=b,c", reason: `invalid value "b,c"`},
	{name: "comma list hint", term: "a=b,c=d", reason: "repeat labelSelector"},
	{name: "empty set", term: "k=()", reason: `found an empty set "()"`},
	{name: "empty set not in", term: "k!=()", reason: `found an empty set "()"`},
	{name: "trailing empty set element", term: "k=(a,)", reason: "found an empty value in the set"},
	{name: "leading empty set element", term: "k=(,a)", reason: "found an empty value in the set"},
	{name: "middle empty set element", term: "k=(a,,b)", reason: "found an empty value in the set"},
	{name: "bad set element", term: "k=(a,-b)", reason: `invalid value "-b"`},
	{name: "space in set", term: "k=(a, b)", reason: `invalid value " b"`},
	{name: "unclosed set", term: "k=(a,b", reason: `found "(" with no closing ")"`},
	{name: "space in key", term: "my key=v", reason: `invalid key "my key"`},
	{name: "spaces around operator", term: "k = v", reason: `invalid key "k "`},
	{name: "bang with value", term: "!a=b", reason: `"!<key>" takes no value`},
	{name: "bang with not-equals value", term: "!a!=b", reason: `"!<key>" takes no value`},
	{name: "double bang", term: "!!a", reason: `invalid key "!a"`},
	{name: "bang inside key", term: "a!b", reason: `invalid key "a!b"`},
	{name: "uppercase prefix", term: "Svc.run/x=y", reason: "prefix part must consist of lower case"},
	{name: "two slashes", term: "a/b/c=d", reason: "found more than one '/'"},
	{name: "empty prefix", term: "/a=b", reason: "prefix part must not be empty"},
	{name: "key name 64", term: strings.Repeat("k", 64) + "=v", reason: "name part must be no more than 63 characters"},
	{name: "value 64", term: "k=" + strings.Repeat("v", 64), reason: "must be no more than 63 characters"},
	{name: "value leading dash", term: "k=-v", reason: `invalid value "-v"`},
	{name: "exists leading dash", term: "-a", reason: `invalid key "-a"`},
	{name: "kubernetes set syntax", term: "env in (a,b)", reason: `invalid key "env in (a,b)"`},
	{name: "empty term", term: "", reason: "found an empty term"},
	{name: "blank term", term: " \t ", reason: "found an empty term"},
}

var fieldGood = []goodCase{
	// Halo's forms; "name" is metadata.name.
	{name: "name equals", term: "name=value", want: req("metadata.name", Equals, "value"), str: "metadata.name=value"},
	{name: "name not equals", term: "name!=value", want: req("metadata.name", NotEquals, "value"),
		str: "metadata.name!=value"},
	{name: "name in", term: "name=(a,b)", want: req("metadata.name", In, "a", "b"), str: "metadata.name=(a,b)"},
	{name: "double equals", term: "a==b", want: req("a", Equals, "=b"), str: "a==b"},
	{name: "comma in value", term: "a=b,c", want: req("a", Equals, "b,c"), str: "a=b,c"},
	// Paths.
	{name: "spec path", term: "spec.age=30", want: req("spec.age", Equals, "30"), str: "spec.age=30"},
	{name: "full name path", term: "metadata.name=x", want: req("metadata.name", Equals, "x"), str: "metadata.name=x"},
	{name: "segment characters", term: "spec.my_field-2.X=1", want: req("spec.my_field-2.X", Equals, "1"),
		str: "spec.my_field-2.X=1"},
	{name: "name prefix is not the alias", term: "names=x", want: req("names", Equals, "x"), str: "names=x"},
	// Values are free text.
	{name: "at sign", term: "spec.email=a@b.c", want: req("spec.email", Equals, "a@b.c"), str: "spec.email=a@b.c"},
	{name: "inner spaces", term: "spec.title=hello world", want: req("spec.title", Equals, "hello world"),
		str: "spec.title=hello world"},
	{name: "not-equals inside value", term: "f=a!=b", want: req("f", Equals, "a!=b"), str: "f=a!=b"},
	{name: "equals inside not-equals value", term: "f!=a=b", want: req("f", NotEquals, "a=b"), str: "f!=a=b"},
	{name: "bang value", term: "f=!x", want: req("f", Equals, "!x"), str: "f=!x"},
	{name: "unclosed paren is a value", term: "f=(a", want: req("f", Equals, "(a"), str: "f=(a"},
	{name: "closing paren only is a value", term: "f=a)", want: req("f", Equals, "a)"), str: "f=a)"},
	{name: "lone paren is a value", term: "f=(", want: req("f", Equals, "("), str: "f=("},
	{name: "surrounding spaces trimmed", term: "  spec.age=30 ", want: req("spec.age", Equals, "30"), str: "spec.age=30"},
	// Sets.
	{name: "in sorted and deduplicated", term: "f=(b,a,b)", want: req("f", In, "a", "b"), str: "f=(a,b)"},
	{name: "in one value", term: "f=(a)", want: req("f", In, "a"), str: "f=(a)"},
	{name: "not in", term: "f!=(b,a)", want: req("f", NotIn, "a", "b"), str: "f!=(a,b)"},
	{name: "parens inside set", term: "f=((a),b)", want: req("f", In, "(a)", "b"), str: "f=((a),b)"},
	{name: "spaces kept inside set", term: "f=( a , b )", want: req("f", In, " a ", " b "), str: "f=( a , b )"},
	// Ranges.
	{name: "greater than", term: "spec.year>1900", want: req("spec.year", GreaterThan, "1900"), str: "spec.year>1900"},
	{name: "greater or equal", term: "spec.year>=1900", want: req("spec.year", GreaterOrEqual, "1900"), str: "spec.year>=1900"},
	{name: "less than", term: "spec.age<30", want: req("spec.age", LessThan, "30"), str: "spec.age<30"},
	{name: "less or equal", term: "spec.age<=30", want: req("spec.age", LessOrEqual, "30"), str: "spec.age<=30"},
	{name: "range on the name alias", term: "name>m", want: req("metadata.name", GreaterThan, "m"), str: "metadata.name>m"},
	{name: "range on a time", term: "metadata.creationTimestamp>=2026-01-01T00:00:00Z",
		want: req("metadata.creationTimestamp", GreaterOrEqual, "2026-01-01T00:00:00Z"),
		str:  "metadata.creationTimestamp>=2026-01-01T00:00:00Z"},
	{name: "negative bound", term: "spec.age>-5", want: req("spec.age", GreaterThan, "-5"), str: "spec.age>-5"},
	{name: "equals after or-equal is the value", term: "f>==x", want: req("f", GreaterOrEqual, "=x"), str: "f>==x"},
	{name: "operator after range is the value", term: "f<>x", want: req("f", LessThan, ">x"), str: "f<>x"},
	{name: "less-or-equal then greater", term: "f<=>x", want: req("f", LessOrEqual, ">x"), str: "f<=>x"},
	{name: "range signs inside an equals value", term: "f=a>b", want: req("f", Equals, "a>b"), str: "f=a>b"},
	{name: "range signs inside a not-equals value", term: "f!=<b", want: req("f", NotEquals, "<b"), str: "f!=<b"},
	{name: "range signs inside a set", term: "f=(<a,>b)", want: req("f", In, "<a", ">b"), str: "f=(<a,>b)"},
	{name: "equals inside a range value", term: "f>a=b", want: req("f", GreaterThan, "a=b"), str: "f>a=b"},
	{name: "half a set is a range value", term: "f>(a", want: req("f", GreaterThan, "(a"), str: "f>(a"},
	{name: "spaces around a range trimmed", term: " spec.age>=3 ", want: req("spec.age", GreaterOrEqual, "3"), str: "spec.age>=3"},
}

var fieldBad = []badCase{
	{name: "empty value", term: "name=", reason: `found no value after "="`},
	{name: "empty not-equals value", term: "name!=", reason: `found no value after "!="`},
	{name: "no field", term: "=value", reason: `found no field before "="`},
	{name: "no field before not equals", term: "!=value", reason: `found no field before "!="`},
	{name: "does not exist", term: "!name", reason: "fields have no does-not-exist form"},
	{name: "exists", term: "name", reason: "fields have no exists form"},
	{name: "bang alone", term: "!", reason: "fields have no does-not-exist form"},
	{name: "empty set", term: "f=()", reason: `found an empty set "()"`},
	{name: "empty set element", term: "f=(a,)", reason: "found an empty value in the set"},
	{name: "double dot", term: "spec..age=1", reason: `invalid field "spec..age"`},
	{name: "leading dot", term: ".spec=1", reason: `invalid field ".spec"`},
	{name: "trailing dot", term: "spec.=1", reason: `invalid field "spec."`},
	{name: "space in field", term: "spec age=1", reason: `invalid field "spec age"`},
	{name: "space before operator", term: "spec.age =1", reason: `invalid field "spec.age "`},
	{name: "slash in field", term: "spec/age=1", reason: `invalid field "spec/age"`},
	{name: "bang with value", term: "!a=b", reason: `invalid field "!a"`},
	{name: "empty term", term: "", reason: "found an empty term"},
	// Ranges.
	{name: "range with no value", term: "spec.age>", reason: `found no value after ">"`},
	{name: "or-equal range with no value", term: "spec.age<=", reason: `found no value after "<="`},
	{name: "range with no field", term: ">=3", reason: `found no field before ">="`},
	{name: "range over a set", term: "spec.age>=(1,2)", reason: `found a set after ">="; a range term takes one value`},
	{name: "range over an empty set", term: "spec.age<()", reason: `found a set after "<"`},
	{name: "bang before a range", term: "spec.age!>3", reason: `invalid field "spec.age!"`},
	{name: "space before a range", term: "spec.age >3", reason: `invalid field "spec.age "`},
	{name: "range after a bad path", term: "spec..age<3", reason: `invalid field "spec..age"`},
}

// A range term is a field term only: label values have no order.
var labelRangeBad = []badCase{
	{name: "label greater than", term: "tier>1", reason: `invalid key "tier>1"`},
	{name: "label greater or equal", term: "tier>=1", reason: `invalid key "tier>"`},
	{name: "label less than", term: "tier<1", reason: `invalid key "tier<1"`},
}

func checkGood(t *testing.T, parse func(string) (Requirement, error), cases []goodCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.term)
			if err != nil {
				t.Fatalf("parse(%q): got error %v, want %+v", tc.term, err, tc.want)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parse(%q) = %+v, want %+v", tc.term, got, tc.want)
			}
			if s := got.String(); s != tc.str {
				t.Fatalf("parse(%q).String() = %q, want %q", tc.term, s, tc.str)
			}
			again, err := parse(got.String())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("round trip of %q via %q = %+v, %v; want %+v", tc.term, got.String(), again, err, got)
			}
		})
	}
}

func checkBad(t *testing.T, parse func(string) (Requirement, error), param string, cases []badCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.term)
			if err == nil {
				t.Fatalf("parse(%q) = %+v, want error containing %q", tc.term, got, tc.reason)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("parse(%q): error %v is %T, want *Error", tc.term, err, err)
			}
			if e.Param != param || e.Term != tc.term {
				t.Fatalf("parse(%q): error has Param %q, Term %q; want %q, %q", tc.term, e.Param, e.Term, param, tc.term)
			}
			if !strings.Contains(e.Reason, tc.reason) {
				t.Fatalf("parse(%q): reason %q, want it to contain %q", tc.term, e.Reason, tc.reason)
			}
			if !reflect.DeepEqual(got, Requirement{}) {
				t.Fatalf("parse(%q): got %+v with the error, want the zero Requirement", tc.term, got)
			}
		})
	}
}

func TestParseLabelTerm(t *testing.T) {
	t.Run("good", func(t *testing.T) { checkGood(t, ParseLabelTerm, labelGood) })
	t.Run("bad", func(t *testing.T) { checkBad(t, ParseLabelTerm, LabelParam, labelBad) })
	t.Run("no ranges", func(t *testing.T) { checkBad(t, ParseLabelTerm, LabelParam, labelRangeBad) })
}

func TestParseFieldTerm(t *testing.T) {
	t.Run("good", func(t *testing.T) { checkGood(t, ParseFieldTerm, fieldGood) })
	t.Run("bad", func(t *testing.T) { checkBad(t, ParseFieldTerm, FieldParam, fieldBad) })
}

func TestErrorMessage(t *testing.T) {
	_, err := ParseLabelTerm("a=b,c")
	const prefix = `invalid labelSelector "a=b,c": invalid value "b,c": `
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("ParseLabelTerm(%q) error = %v, want prefix %q", "a=b,c", err, prefix)
	}
	_, err = ParseFieldTerm("!name")
	const want = `invalid fieldSelector "!name": found "!<field>"; expected "<field>=<value>", ` +
		`"<field>!=<value>", "<field>=(<v1>,<v2>)", "<field><<value>", "<field><=<value>", "<field>><value>" ` +
		`or "<field>>=<value>" (fields have no does-not-exist form)`
	if err == nil || err.Error() != want {
		t.Fatalf("ParseFieldTerm(%q) error = %v, want %q", "!name", err, want)
	}
}

func TestParseLabelsAndFields(t *testing.T) {
	tests := []struct {
		name    string
		parse   func([]string) (Selector, error)
		terms   []string
		want    Selector
		wantErr string // substring of the error; "" for success
	}{
		{name: "labels nil", parse: ParseLabels, terms: nil, want: nil},
		{name: "labels empty value ignored", parse: ParseLabels, terms: []string{""}, want: nil},
		{name: "labels blank values ignored", parse: ParseLabels, terms: []string{" ", "", "\t"}, want: nil},
		{name: "labels order kept", parse: ParseLabels,
			terms: []string{"svc.run/role-template=true", "", "!svc.run/hidden"},
			want:  Selector{req("svc.run/role-template", Equals, "true"), req("svc.run/hidden", DoesNotExist)}},
		{name: "labels first error", parse: ParseLabels, terms: []string{"a=b", "c=-", "=d"},
			wantErr: `invalid labelSelector "c=-"`},
		{name: "labels empty values", parse: ParseLabels, terms: []string{"a=", "b!="},
			want: Selector{req("a", Equals, ""), req("b", NotEquals, "")}},
		{name: "fields nil", parse: ParseFields, terms: nil, want: nil},
		{name: "fields empty value ignored", parse: ParseFields, terms: []string{""}, want: nil},
		{name: "fields alias and sets", parse: ParseFields, terms: []string{"name=(b,a)", "spec.age!=3"},
			want: Selector{req("metadata.name", In, "a", "b"), req("spec.age", NotEquals, "3")}},
		{name: "fields error", parse: ParseFields, terms: []string{"spec.age=1", "spec"},
			wantErr: `invalid fieldSelector "spec"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse(tc.terms)
			if tc.wantErr != "" {
				var e *Error
				if err == nil || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parse(%q) = %v, %v; want *Error containing %q", tc.terms, got, err, tc.wantErr)
				}
				if got != nil {
					t.Fatalf("parse(%q) returned %v with an error, want nil", tc.terms, got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parse(%q) = %#v, %v; want %#v", tc.terms, got, err, tc.want)
			}
		})
	}
}

func TestOperatorString(t *testing.T) {
	tests := []struct {
		op   Operator
		want string
	}{
		{Equals, "Equals"}, {NotEquals, "NotEquals"}, {In, "In"}, {NotIn, "NotIn"},
		{Exists, "Exists"}, {DoesNotExist, "DoesNotExist"}, {LessThan, "LessThan"}, {LessOrEqual, "LessOrEqual"},
		{GreaterThan, "GreaterThan"}, {GreaterOrEqual, "GreaterOrEqual"}, {0, "Operator(0)"}, {42, "Operator(42)"},
	}
	for _, tc := range tests {
		if got := tc.op.String(); got != tc.want {
			t.Errorf("Operator(%d).String() = %q, want %q", int(tc.op), got, tc.want)
		}
	}
}

func TestOperatorHolds(t *testing.T) {
	tests := []struct {
		op               Operator
		below, eq, above bool // Holds for a value below, at and above the bound
		isRange          bool
	}{
		{LessThan, true, false, false, true},
		{LessOrEqual, true, true, false, true},
		{GreaterThan, false, false, true, true},
		{GreaterOrEqual, false, true, true, true},
		{Equals, false, false, false, false},
		{NotEquals, false, false, false, false},
		{In, false, false, false, false},
		{NotIn, false, false, false, false},
		{Exists, false, false, false, false},
		{DoesNotExist, false, false, false, false},
		{0, false, false, false, false},
	}
	for _, tc := range tests {
		got := [4]bool{tc.op.Holds(-2), tc.op.Holds(0), tc.op.Holds(3), tc.op.IsRange()}
		if want := [4]bool{tc.below, tc.eq, tc.above, tc.isRange}; got != want {
			t.Errorf("%v: Holds(<0, 0, >0), IsRange = %v, want %v", tc.op, got, want)
		}
	}
}

func TestSelectorString(t *testing.T) {
	tests := []struct {
		name string
		sel  Selector
		want string
	}{
		{name: "nil", sel: nil, want: ""},
		{name: "one", sel: Selector{req("a", Exists)}, want: "a"},
		{name: "order given", sel: Selector{req("b", Equals, "1"), req("a", NotIn, "x", "y"), req("c", DoesNotExist)},
			want: "b=1,a!=(x,y),!c"},
		{name: "zero requirement", sel: Selector{{Key: "k"}}, want: "<invalid Operator(0) requirement on k>"},
		{name: "ranges", sel: Selector{req("a", LessThan, "1"), req("a", LessOrEqual, "2"), req("b", GreaterThan, "x"), req("b", GreaterOrEqual, "=y")},
			want: "a<1,a<=2,b>x,b>==y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.sel.String(); got != tc.want {
				t.Fatalf("%#v.String() = %q, want %q", tc.sel, got, tc.want)
			}
		})
	}
}

func TestRequirementMatches(t *testing.T) {
	type probe struct {
		v    string
		ok   bool
		want bool
	}
	tests := []struct {
		name   string
		r      Requirement
		probes []probe
	}{
		{name: "equals", r: req("k", Equals, "a"),
			probes: []probe{{"a", true, true}, {"b", true, false}, {"", true, false}, {"", false, false}, {"a", false, false}}},
		{name: "not equals matches absent", r: req("k", NotEquals, "a"),
			probes: []probe{{"a", true, false}, {"b", true, true}, {"", true, true}, {"", false, true}}},
		{name: "in", r: req("k", In, "a", "b"),
			probes: []probe{{"a", true, true}, {"b", true, true}, {"c", true, false}, {"", false, false}}},
		{name: "not in matches absent", r: req("k", NotIn, "a", "b"),
			probes: []probe{{"a", true, false}, {"b", true, false}, {"c", true, true}, {"", false, true}}},
		{name: "exists", r: req("k", Exists),
			probes: []probe{{"a", true, true}, {"", true, true}, {"", false, false}}},
		{name: "does not exist", r: req("k", DoesNotExist),
			probes: []probe{{"a", true, false}, {"", true, false}, {"", false, true}}},
		{name: "zero requirement matches nothing", r: Requirement{},
			probes: []probe{{"a", true, false}, {"", false, false}}},
		{name: "unsorted hand-built set", r: req("k", In, "z", "a"),
			probes: []probe{{"a", true, true}, {"z", true, true}, {"m", true, false}}},
		// The query engine compares typed keys for ranges.
		{name: "range matches nothing as text", r: req("k", GreaterThan, "1"),
			probes: []probe{{"2", true, false}, {"0", true, false}, {"", false, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range tc.probes {
				if got := tc.r.Matches(p.v, p.ok); got != p.want {
					t.Errorf("%v.Matches(%q, %v) = %v, want %v", tc.r, p.v, p.ok, got, p.want)
				}
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	labels := Set{
		"svc.run/role-template": "true",
		"app":                   "web",
		"tier":                  "",
	}
	tests := []struct {
		name   string
		terms  []string
		labels Labels
		want   bool
	}{
		{name: "nil selector selects all", terms: nil, labels: labels, want: true},
		{name: "nil selector with nil labels", terms: nil, labels: nil, want: true},
		{name: "equals", terms: []string{"app=web"}, labels: labels, want: true},
		{name: "equals other value", terms: []string{"app=db"}, labels: labels, want: false},
		{name: "not equals other value", terms: []string{"app!=db"}, labels: labels, want: true},
		{name: "not equals absent key", terms: []string{"missing!=x"}, labels: labels, want: true},
		{name: "exists with empty value", terms: []string{"tier"}, labels: labels, want: true},
		{name: "equals empty value", terms: []string{"tier="}, labels: labels, want: true},
		{name: "equals empty value, other value", terms: []string{"app="}, labels: labels, want: false},
		{name: "equals empty value, absent key", terms: []string{"missing="}, labels: labels, want: false},
		{name: "not equals empty value", terms: []string{"tier!="}, labels: labels, want: false},
		{name: "not equals empty value, other value", terms: []string{"app!="}, labels: labels, want: true},
		{name: "not equals empty value, absent key", terms: []string{"missing!="}, labels: labels, want: true},
		{name: "exists absent", terms: []string{"missing"}, labels: labels, want: false},
		{name: "does not exist", terms: []string{"!svc.run/hidden"}, labels: labels, want: true},
		{name: "does not exist present", terms: []string{"!app"}, labels: labels, want: false},
		{name: "in", terms: []string{"app=(db,web)"}, labels: labels, want: true},
		{name: "in absent", terms: []string{"missing=(a,b)"}, labels: labels, want: false},
		{name: "not in absent", terms: []string{"missing!=(a,b)"}, labels: labels, want: true},
		{name: "halo role templates", terms: []string{"svc.run/role-template=true", "!svc.run/hidden"},
			labels: labels, want: true},
		{name: "and fails on one term", terms: []string{"svc.run/role-template=true", "app=db"},
			labels: labels, want: false},
		{name: "nil labels have nothing", terms: []string{"!app", "app!=x"}, labels: nil, want: true},
		{name: "nil set has nothing", terms: []string{"app"}, labels: Set(nil), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := ParseLabels(tc.terms)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(tc.labels); got != tc.want {
				t.Fatalf("selector %q matching %v = %v, want %v", tc.terms, tc.labels, got, tc.want)
			}
		})
	}
}

// checkParsed checks the invariants every parsed Requirement holds, and that
// it round-trips through String. emptyValue: Equals and NotEquals may
// carry the empty value (labels).
func checkParsed(t *testing.T, parse func(string) (Requirement, error), term string, r Requirement, emptyValue bool) {
	t.Helper()
	switch r.Op {
	case Equals, NotEquals:
		if len(r.Values) != 1 || r.Values[0] == "" && !emptyValue {
			t.Fatalf("parse(%q) = %+v: want one non-empty value", term, r)
		}
	case In, NotIn:
		if len(r.Values) == 0 || !slices.IsSorted(r.Values) || len(slices.Compact(slices.Clone(r.Values))) != len(r.Values) {
			t.Fatalf("parse(%q) = %+v: want a sorted, duplicate-free, non-empty set", term, r)
		}
		for _, v := range r.Values {
			if v == "" || strings.Contains(v, ",") {
				t.Fatalf("parse(%q) = %+v: set value %q is empty or holds ','", term, r, v)
			}
		}
	case Exists, DoesNotExist:
		if len(r.Values) != 0 {
			t.Fatalf("parse(%q) = %+v: want no values", term, r)
		}
	case LessThan, LessOrEqual, GreaterThan, GreaterOrEqual:
		if len(r.Values) != 1 || r.Values[0] == "" {
			t.Fatalf("parse(%q) = %+v: want one non-empty value", term, r)
		}
		if (r.Op == LessThan || r.Op == GreaterThan) && r.Values[0][0] == '=' {
			t.Fatalf("parse(%q) = %+v: a strict range's value starts with '=', so its String reads as <= or >=", term, r)
		}
		if _, set := setBody(r.Values[0]); set {
			t.Fatalf("parse(%q) = %+v: a range's value is a set", term, r)
		}
	default:
		t.Fatalf("parse(%q) = %+v: invalid operator", term, r)
	}
	s := r.String()
	again, err := parse(s)
	if err != nil {
		t.Fatalf("parse(%q) = %+v, but its String %q does not parse: %v", term, r, s, err)
	}
	if !reflect.DeepEqual(again, r) {
		t.Fatalf("parse(%q) = %+v, but parse(%q) = %+v", term, r, s, again)
	}
	if s2 := again.String(); s2 != s {
		t.Fatalf("String is not stable for %q: %q then %q", term, s, s2)
	}
}

// checkErr checks that a parse failure is exactly an *Error naming the
// parameter and the term.
func checkErr(t *testing.T, term, param string, r Requirement, err error) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("parse(%q): error %v is %T, want *Error", term, err, err)
	}
	if e.Param != param || e.Term != term || e.Reason == "" {
		t.Fatalf("parse(%q): error %+v, want Param %q, Term the input, and a Reason", term, e, param)
	}
	if !reflect.DeepEqual(r, Requirement{}) {
		t.Fatalf("parse(%q): got %+v with the error, want the zero Requirement", term, r)
	}
}

func addSeeds(f *testing.F, good []goodCase, bad []badCase) {
	for _, tc := range good {
		f.Add(tc.term)
	}
	for _, tc := range bad {
		f.Add(tc.term)
	}
}

func FuzzParseLabelTerm(f *testing.F) {
	addSeeds(f, labelGood, labelBad)
	addSeeds(f, nil, labelRangeBad)
	f.Fuzz(func(t *testing.T, term string) {
		r, err := ParseLabelTerm(term)
		if err != nil {
			checkErr(t, term, LabelParam, r, err)
			return
		}
		checkParsed(t, ParseLabelTerm, term, r, true)
		if r.Op.IsRange() {
			t.Fatalf("ParseLabelTerm(%q) = %+v: labels have no range forms", term, r)
		}
		if err := object.ValidateLabelKey(r.Key); err != nil {
			t.Fatalf("ParseLabelTerm(%q) accepted key %q: %v", term, r.Key, err)
		}
		for _, v := range r.Values {
			if err := object.ValidateLabelValue(v); err != nil {
				t.Fatalf("ParseLabelTerm(%q) accepted value %q: %v", term, v, err)
			}
		}
		sel, err := ParseLabels([]string{term})
		if err != nil || len(sel) != 1 || !reflect.DeepEqual(sel[0], r) {
			t.Fatalf("ParseLabels([%q]) = %v, %v; want [%v]", term, sel, err, r)
		}
	})
}

func FuzzParseFieldTerm(f *testing.F) {
	addSeeds(f, fieldGood, fieldBad)
	f.Fuzz(func(t *testing.T, term string) {
		r, err := ParseFieldTerm(term)
		if err != nil {
			checkErr(t, term, FieldParam, r, err)
			return
		}
		checkParsed(t, ParseFieldTerm, term, r, false)
		if r.Op == Exists || r.Op == DoesNotExist {
			t.Fatalf("ParseFieldTerm(%q) = %+v: fields have no exists forms", term, r)
		}
		if !isFieldPath(r.Key) || r.Key == "name" {
			t.Fatalf("ParseFieldTerm(%q) = %+v: bad field path", term, r)
		}
		// The operator is the first of "=<>" in the term: a value may hold
		// those signs, a key never.
		trimmed := strings.TrimSpace(term)
		if i := strings.IndexAny(trimmed, "=<>"); i < 0 || !strings.HasPrefix(trimmed[i:], strings.TrimPrefix(r.Op.symbol(), "!")) {
			t.Fatalf("ParseFieldTerm(%q) = %+v: operator %q is not where the term's first of \"=<>\" is", term, r, r.Op.symbol())
		}
		sel, err := ParseFields([]string{term})
		if err != nil || len(sel) != 1 || !reflect.DeepEqual(sel[0], r) {
			t.Fatalf("ParseFields([%q]) = %v, %v; want [%v]", term, sel, err, r)
		}
	})
}

func BenchmarkParseLabelTerm(b *testing.B) {
	terms := []struct{ name, term string }{
		{"Equals", "svc.run/role-template=true"},
		{"DoesNotExist", "!svc.run/hidden"},
		{"In3", "app=(web,db,cache)"},
	}
	for _, tc := range terms {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseLabelTerm(tc.term); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSelectorMatches(b *testing.B) {
	sel, err := ParseLabels([]string{"svc.run/role-template=true", "!svc.run/hidden", "app=(db,web)"})
	if err != nil {
		b.Fatal(err)
	}
	labels := Set{
		"svc.run/role-template":      "true",
		"app":                        "web",
		"tier":                       "frontend",
		"plugin.svc.run/plugin-name": "example",
		"rbac.authorization.svc.run/aggregate-to-editor": "true",
	}
	b.ReportAllocs()
	for b.Loop() {
		if !sel.Matches(labels) {
			b.Fatal("want a match")
		}
	}
}
