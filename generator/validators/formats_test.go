package validators_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/svcrun/svc/generator/validators"
	"github.com/svcrun/svc/runtime/validation"
)

// formatCases seed TestFormatsAgreeWithKin and FuzzFormats.
var formatCases = []string{
	"", "a", "a@b", "@b", "a@", "a@@b", "a@b c", "a b@c", "a@b,c", "é@ü.de", "a@b\n", "\xff@b",
	"http://example.com", "https://user:pw@example.com:8080/p?q=1#f", "mailto:a@b.c", "urn:isbn:123",
	"http://[::1]:80/", "http://[::1", "http://a b", "http://a:b:c/", "http://a:99x/", "//x", "/x", "x",
	"1http://x", "h:", "h://", "http://%zz", "http://x/%zz", "http://x/%41", "http://x#%zz", "http://ä.de",
	"ht~tp://x", "a+b.c-d://x", "http://a_b.c~d/", "http://x:/", "HTTP://X", "http://x\x7f",
	"2017-07-21", "2017-13-21", "2017-02-31", "17-07-21", "2017-07-21 ",
	"2017-07-21T17:32:28Z", "2017-07-21T17:32:28.123456789Z", "2017-07-21T17:32:28+02:00",
	"2017-07-21T17:32:28-23:59", "2017-07-21T17:32:28+24:00", "2017-07-21T17:32:28+05:60",
	"2017-07-21T17:32:60Z", "2017-02-29T00:00:00Z", "2016-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
	"2000-02-29T00:00:00Z", "0000-02-29T00:00:00Z", "2017-07-21t17:32:28Z", "2017-07-21T17:32:28z",
	"2017-07-21T17:32:28.Z", "2017-07-21T17:32:28", "2017-07-21T24:00:00Z", "2017-04-31T00:00:00Z",
	"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-42661417400g", "123e4567e89b12d3a456426614174000",
	"00000000-0000-0000-0000-000000000000", "123e4567-e89b-12d3-a456_426614174000",
}

func TestFormatsAgreeWithKin(t *testing.T) {
	for _, s := range formatCases {
		checkFormats(t, s)
	}
}

func FuzzFormats(f *testing.F) {
	for _, s := range formatCases {
		f.Add(s)
	}
	f.Fuzz(checkFormats)
}

// checkFormats compares the format checks of runtime/validation, which the
// generated validators call, with kin-openapi's under KinFormats.
func checkFormats(t *testing.T, s string) {
	t.Helper()
	kin := validators.KinFormats()
	for name, ours := range map[string]func(string) bool{
		"email": validation.IsEmail, "uri": validation.IsURI, "uuid": validation.IsUUID, "date": validation.IsDate, "date-time": validation.IsDateTime,
	} {
		want := kin[name].Validate(s) == nil
		if got := ours(s); got != want {
			t.Errorf("format %s of %q: generated check says %v, kin-openapi's says %v", name, s, got, want)
		}
	}
	if validation.IsDateTime(s) {
		// What the check accepts must survive a round trip through a
		// typed field.
		var tm time.Time
		q, _ := json.Marshal(s)
		if err := json.Unmarshal(q, &tm); err != nil {
			t.Errorf("IsDateTime(%q), but time.Time cannot read it: %v", s, err)
		} else if _, err := json.Marshal(tm); err != nil || !validation.IsJSONTime(tm) {
			t.Errorf("IsDateTime(%q), but time.Time cannot write it back: %v", s, err)
		}
	}
}
