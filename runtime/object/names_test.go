package object

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Regexp oracles for the hand-written validators. They are the rules written
// the obvious way; the fuzz targets check that both agree.
var (
	oracleName          = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	oracleSubdomain     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	oracleQualifiedName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
)

func oracleValidName(s string) bool {
	return len(s) <= 253 && oracleName.MatchString(s)
}

func oracleValidSubdomain(s string) bool {
	return len(s) <= 253 && oracleSubdomain.MatchString(s)
}

func oracleValidQualifiedName(s string) bool {
	return len(s) <= 63 && oracleQualifiedName.MatchString(s)
}

func oracleValidLabelKey(s string) bool {
	prefix, name, hasSlash := strings.Cut(s, "/")
	if !hasSlash {
		return oracleValidQualifiedName(s)
	}
	return oracleValidSubdomain(prefix) && oracleValidQualifiedName(name)
}

func oracleValidLabelValue(s string) bool {
	return s == "" || oracleValidQualifiedName(s)
}

// validatorCase is one row of a validator table. wantErr is "" for valid
// input, else a substring the error message must contain.
type validatorCase struct {
	name    string
	in      string
	wantErr string
}

func runValidatorCases(t *testing.T, fn func(string) error, cases []validatorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fn(tc.in)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("input %q: got error %q, want valid", tc.in, err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("input %q: got valid, want error containing %q", tc.in, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("input %q: got error %q, want it to contain %q", tc.in, err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), strconv.Quote(tc.in)) {
				t.Errorf("input %q: error %q repeats the input", tc.in, err)
			}
		})
	}
}

const (
	msgEmpty     = "must not be empty"
	msgLong63    = "must be no more than 63 characters"
	msgLong253   = "must be no more than 253 characters"
	msgName      = "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')"
	msgSubdomain = "must consist of lower case alphanumeric characters, '-' or '.'"
	msgQualified = "must consist of alphanumeric characters, '-', '_' or '.'"
	msgValue     = "must be empty or consist of alphanumeric characters"
)

func TestValidateName(t *testing.T) {
	runValidatorCases(t, ValidateName, []validatorCase{
		{name: "one letter", in: "a"},
		{name: "one digit", in: "7"},
		{name: "dashes inside", in: "my-name"},
		{name: "digits and dashes", in: "123-abc"},
		{name: "double dash", in: "a--b"},
		{name: "length 253", in: strings.Repeat("a", 253)},
		{name: "length 254", in: strings.Repeat("a", 254), wantErr: msgLong253},
		{name: "empty", in: "", wantErr: msgEmpty},
		{name: "uppercase", in: "myName", wantErr: msgName},
		{name: "dot", in: "my.name", wantErr: msgName},
		{name: "underscore", in: "my_name", wantErr: msgName},
		{name: "leading dash", in: "-name", wantErr: msgName},
		{name: "trailing dash", in: "name-", wantErr: msgName},
		{name: "only dash", in: "-", wantErr: msgName},
		{name: "space", in: "my name", wantErr: msgName},
		{name: "slash", in: "a/b", wantErr: msgName},
		{name: "non-ASCII", in: "naïve", wantErr: msgName},
		{name: "NUL byte", in: "a\x00b", wantErr: msgName},
	})
}

func TestValidateDNSSubdomain(t *testing.T) {
	runValidatorCases(t, ValidateDNSSubdomain, []validatorCase{
		{name: "single part", in: "example"},
		{name: "two parts", in: "example.com"},
		{name: "brand prefix", in: "rbac.authorization.svc.run"},
		{name: "dashes and digits", in: "my-plugin.3rd-party.io"},
		{name: "single characters", in: "a.b.c"},
		{name: "length 253", in: strings.Repeat("a.", 126) + "a"},
		{name: "length 253 one part", in: strings.Repeat("a", 253)},
		{name: "length 254", in: strings.Repeat("a.", 126) + "ab", wantErr: msgLong253},
		{name: "empty", in: "", wantErr: msgEmpty},
		{name: "uppercase", in: "Example.com", wantErr: msgSubdomain},
		{name: "leading dot", in: ".example.com", wantErr: msgSubdomain},
		{name: "trailing dot", in: "example.com.", wantErr: msgSubdomain},
		{name: "double dot", in: "example..com", wantErr: msgSubdomain},
		{name: "leading dash", in: "-example.com", wantErr: msgSubdomain},
		{name: "trailing dash", in: "example.com-", wantErr: msgSubdomain},
		{name: "dash before dot", in: "example-.com", wantErr: msgSubdomain},
		{name: "dash after dot", in: "example.-com", wantErr: msgSubdomain},
		{name: "underscore", in: "my_example.com", wantErr: msgSubdomain},
		{name: "only dot", in: ".", wantErr: msgSubdomain},
	})
}

func TestValidateQualifiedNamePart(t *testing.T) {
	runValidatorCases(t, ValidateQualifiedNamePart, []validatorCase{
		{name: "lowercase", in: "name"},
		{name: "mixed case", in: "MyName"},
		{name: "all separators", in: "a-b_c.d"},
		{name: "one character", in: "Z"},
		{name: "length 63", in: strings.Repeat("x", 63)},
		{name: "length 64", in: strings.Repeat("x", 64), wantErr: msgLong63},
		{name: "empty", in: "", wantErr: msgEmpty},
		{name: "leading dot", in: ".name", wantErr: msgQualified},
		{name: "trailing underscore", in: "name_", wantErr: msgQualified},
		{name: "leading dash", in: "-name", wantErr: msgQualified},
		{name: "slash", in: "a/b", wantErr: msgQualified},
		{name: "space", in: "a b", wantErr: msgQualified},
	})
}

func TestValidateLabelKey(t *testing.T) {
	runValidatorCases(t, ValidateLabelKey, []validatorCase{
		{name: "plain name", in: "app"},
		{name: "mixed case name", in: "MyLabel"},
		{name: "name with separators", in: "my_label.v-2"},
		{name: "brand prefix", in: "svc.run/role-template"},
		{name: "aggregation key", in: "rbac.authorization.svc.run/aggregate-to-editor"},
		{name: "single-part prefix", in: "example/app"},
		{name: "name length 63", in: strings.Repeat("n", 63)},
		{name: "prefix 253 and name 63", in: strings.Repeat("a.", 126) + "a/" + strings.Repeat("n", 63)},
		{name: "name length 64", in: strings.Repeat("n", 64), wantErr: "name part " + msgLong63},
		{name: "prefixed name length 64", in: "example.com/" + strings.Repeat("n", 64), wantErr: "name part " + msgLong63},
		{name: "prefix length 254", in: strings.Repeat("a.", 126) + "ab/app", wantErr: "prefix part " + msgLong253},
		{name: "empty", in: "", wantErr: "name part " + msgEmpty},
		{name: "empty prefix", in: "/app", wantErr: "prefix part must not be empty"},
		{name: "empty name after prefix", in: "example.com/", wantErr: "name part " + msgEmpty},
		{name: "only slash", in: "/", wantErr: "prefix part must not be empty"},
		{name: "two slashes", in: "a/b/c", wantErr: "found more than one '/'"},
		{name: "uppercase prefix", in: "Example.com/app", wantErr: "prefix part " + msgSubdomain},
		{name: "underscore in prefix", in: "my_example.com/app", wantErr: "prefix part " + msgSubdomain},
		{name: "prefix trailing dot", in: "example./app", wantErr: "prefix part " + msgSubdomain},
		{name: "name leading dash", in: "-app", wantErr: "name part " + msgQualified},
		{name: "name trailing dot", in: "example.com/app.", wantErr: "name part " + msgQualified},
		{name: "space", in: "my app", wantErr: "name part " + msgQualified},
		{name: "equals sign", in: "a=b", wantErr: "name part " + msgQualified},
	})
}

func TestValidateLabelValue(t *testing.T) {
	runValidatorCases(t, ValidateLabelValue, []validatorCase{
		{name: "empty", in: ""},
		{name: "true", in: "true"},
		{name: "mixed case", in: "MyValue"},
		{name: "separators", in: "my_value.v-1"},
		{name: "digits", in: "12345"},
		{name: "length 63", in: strings.Repeat("v", 63)},
		{name: "length 64", in: strings.Repeat("v", 64), wantErr: msgLong63},
		{name: "leading dash", in: "-v", wantErr: msgValue},
		{name: "trailing dot", in: "v.", wantErr: msgValue},
		{name: "only underscore", in: "_", wantErr: msgValue},
		{name: "comma", in: "b,c", wantErr: msgValue},
		{name: "slash", in: "a/b", wantErr: msgValue},
		{name: "space", in: "a b", wantErr: msgValue},
		{name: "equals sign", in: "=b", wantErr: msgValue},
	})
}

func TestValidateFinalizer(t *testing.T) {
	runValidatorCases(t, ValidateFinalizer, []validatorCase{
		{name: "prefixed", in: "example.com/cleanup"},
		{name: "plain", in: "cleanup"},
		{name: "empty", in: "", wantErr: "name part " + msgEmpty},
		{name: "two slashes", in: "a/b/c", wantErr: "found more than one '/'"},
		{name: "bad prefix", in: "Example.com/cleanup", wantErr: "prefix part " + msgSubdomain},
	})
}

// TestValidateNoAllocs guards the promise in names.go: the validators run on
// every write and must not allocate, whatever the input.
func TestValidateNoAllocs(t *testing.T) {
	inputs := []string{
		"my-name", strings.Repeat("a", 253), "rbac.authorization.svc.run/aggregate-to-editor",
		"MyValue", "", "Bad Name", "a/b/c", strings.Repeat("x", 300),
	}
	fns := map[string]func(string) error{
		"ValidateName":              ValidateName,
		"ValidateDNSSubdomain":      ValidateDNSSubdomain,
		"ValidateQualifiedNamePart": ValidateQualifiedNamePart,
		"ValidateLabelKey":          ValidateLabelKey,
		"ValidateLabelValue":        ValidateLabelValue,
		"ValidateFinalizer":         ValidateFinalizer,
	}
	for fnName, fn := range fns {
		for _, in := range inputs {
			var sink error
			allocs := testing.AllocsPerRun(100, func() { sink = fn(in) })
			_ = sink
			if allocs != 0 {
				t.Errorf("%s(%q): %v allocations per call, want 0", fnName, in, allocs)
			}
		}
	}
}

// nameSeeds are shared by the fuzz targets: every table input is a useful
// starting point for either rule.
var nameSeeds = []string{
	"", "a", "my-name", "123-abc", "-a", "a-", "A", "a.b", "a_b", "a/b", "/a", "a/", "a/b/c",
	"svc.run/role-template", "example.com/MyName", "example..com/a", "example-.com/a",
	strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254),
	strings.Repeat("a.", 126) + "a/" + strings.Repeat("n", 63), "naïve", "a\x00b",
}

func FuzzValidateName(f *testing.F) {
	for _, s := range nameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateName(s)
		if want := oracleValidName(s); (err == nil) != want {
			t.Fatalf("ValidateName(%q) = %v, oracle says valid=%v", s, err, want)
		}
		if err != nil {
			return
		}
		// A valid name is also a valid DNS subdomain (one part) and a
		// valid finalizer; when short enough it is a valid label key and
		// label value too.
		if err := ValidateDNSSubdomain(s); err != nil {
			t.Fatalf("valid name %q is not a DNS subdomain: %v", s, err)
		}
		if err := ValidateLabelKey(s + "/a"); err != nil {
			t.Fatalf("valid name %q is not a label key prefix: %v", s, err)
		}
		if len(s) <= 63 {
			if err := ValidateLabelKey(s); err != nil {
				t.Fatalf("valid name %q is not a label key: %v", s, err)
			}
			if err := ValidateLabelValue(s); err != nil {
				t.Fatalf("valid name %q is not a label value: %v", s, err)
			}
		}
	})
}

func FuzzValidateLabelKey(f *testing.F) {
	for _, s := range nameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateLabelKey(s)
		if want := oracleValidLabelKey(s); (err == nil) != want {
			t.Fatalf("ValidateLabelKey(%q) = %v, oracle says valid=%v", s, err, want)
		}
		if got := ValidateFinalizer(s); (got == nil) != (err == nil) {
			t.Fatalf("ValidateFinalizer(%q) = %v, ValidateLabelKey = %v", s, got, err)
		}
		// The parts agree with their own validators.
		if err := ValidateDNSSubdomain(s); (err == nil) != oracleValidSubdomain(s) {
			t.Fatalf("ValidateDNSSubdomain(%q) = %v, oracle disagrees", s, err)
		}
		if err := ValidateQualifiedNamePart(s); (err == nil) != oracleValidQualifiedName(s) {
			t.Fatalf("ValidateQualifiedNamePart(%q) = %v, oracle disagrees", s, err)
		}
		if err := ValidateLabelValue(s); (err == nil) != oracleValidLabelValue(s) {
			t.Fatalf("ValidateLabelValue(%q) = %v, oracle disagrees", s, err)
		}
	})
}

func BenchmarkValidateName(b *testing.B) {
	name := "my-plugin-role-manage-persons"
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateName(name); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateLabelKey(b *testing.B) {
	key := "rbac.authorization.svc.run/aggregate-to-editor"
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateLabelKey(key); err != nil {
			b.Fatal(err)
		}
	}
}

func TestValidateDNSLabel(t *testing.T) {
	for s, ok := range map[string]bool{"links": true, "links-pro": true, "a1": true, strings.Repeat("a", 63): true,
		strings.Repeat("a", 64): false, "PluginLinks": false, "-x": false, "x-": false, "a.b": false, "": false} {
		if err := ValidateDNSLabel(s); (err == nil) != ok {
			t.Errorf("ValidateDNSLabel(%q) = %v", s, err)
		}
	}
}
