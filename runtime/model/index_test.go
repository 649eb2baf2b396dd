package model

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/svcrun/svc/runtime/object"
)

// The key encodings must compare, as plain bytes, exactly like the values
// they encode. Each check states "want" from the values' own comparison and
// "got" from the keys' byte order.

// keyCmp compares two keys as the store does: byte order.
func keyCmp(a, b Key) int { return strings.Compare(string(a), string(b)) }

// quickConfig runs enough random cases to be meaningful and few enough to
// keep the package fast.
var quickConfig = &quick.Config{MaxCount: 20000}

// --- IntKey ---

func checkIntOrder(t *testing.T, a, b int64) {
	t.Helper()
	if got, want := keyCmp(IntKey(a), IntKey(b)), cmp.Compare(a, b); got != want {
		t.Errorf("IntKey(%d) vs IntKey(%d): got byte order %d, want %d (keys %x, %x)", a, b, got, want, IntKey(a), IntKey(b))
	}
}

func TestIntKeyOrderEdges(t *testing.T) {
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 32, -256, -255, -1, 0, 1, 255, 256, 1 << 32, math.MaxInt64 - 1, math.MaxInt64}
	for _, a := range vals {
		for _, b := range vals {
			checkIntOrder(t, a, b)
		}
		if n := len(IntKey(a)); n != 8 {
			t.Errorf("IntKey(%d): got %d bytes, want 8", a, n)
		}
	}
}

func TestIntKeyOrderRandom(t *testing.T) {
	prop := func(a, b int64) bool { return keyCmp(IntKey(a), IntKey(b)) == cmp.Compare(a, b) }
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Errorf("IntKey order differs from int64 order: %v", err)
	}
	// quick draws from the whole int64 range; neighbours and small values
	// of opposite sign are where a sign-bit mistake shows.
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a := r.Int64N(2000) - 1000
		checkIntOrder(t, a, a+r.Int64N(3)-1)
		checkIntOrder(t, a, -a)
	}
}

func FuzzIntKeyOrder(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(-1), int64(0))
	f.Add(int64(math.MinInt64), int64(math.MaxInt64))
	f.Add(int64(255), int64(256))
	f.Fuzz(func(t *testing.T, a, b int64) {
		checkIntOrder(t, a, b)
		if got, want := FormatKey(Int, IntKey(a)), strconv.FormatInt(a, 10); got != want {
			t.Errorf("FormatKey(Int, IntKey(%d)): got %q, want %q", a, got, want)
		}
	})
}

// --- FloatKey ---

// floatCmp is the order FloatKey promises: numeric order, with -0 == 0.
func floatCmp(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func checkFloatOrder(t *testing.T, a, b float64) {
	t.Helper()
	if got, want := keyCmp(FloatKey(a), FloatKey(b)), floatCmp(a, b); got != want {
		t.Errorf("FloatKey(%g) vs FloatKey(%g): got byte order %d, want %d (keys %x, %x)", a, b, got, want, FloatKey(a), FloatKey(b))
	}
}

func TestFloatKeyOrderEdges(t *testing.T) {
	// Ascending; -0 and 0 are equal numbers and must get equal keys (an
	// equality selector "0" has to find a stored -0).
	vals := []float64{
		math.Inf(-1), -math.MaxFloat64, -1e300, -2, -1, -0.5, -math.SmallestNonzeroFloat64,
		math.Copysign(0, -1), 0,
		math.SmallestNonzeroFloat64, 0.5, 1, 2, 1e300, math.MaxFloat64, math.Inf(1),
	}
	for _, a := range vals {
		for _, b := range vals {
			checkFloatOrder(t, a, b)
		}
		if n := len(FloatKey(a)); n != 8 {
			t.Errorf("FloatKey(%g): got %d bytes, want 8", a, n)
		}
	}
	if FloatKey(math.Copysign(0, -1)) != FloatKey(0) {
		t.Errorf("FloatKey(-0) = %x, want it equal to FloatKey(0) = %x", FloatKey(math.Copysign(0, -1)), FloatKey(0))
	}
}

func TestFloatKeyOrderRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// Any bit pattern except NaN, which has no numeric order.
	anyFloat := func() float64 {
		for {
			if v := math.Float64frombits(r.Uint64()); !math.IsNaN(v) {
				return v
			}
		}
	}
	for range 20000 {
		a, b := anyFloat(), anyFloat()
		checkFloatOrder(t, a, b)
		checkFloatOrder(t, a, -a)
		checkFloatOrder(t, a, math.Nextafter(a, math.Inf(1)))
		// Ordinary magnitudes, where most real values live.
		x, y := r.NormFloat64()*100, r.NormFloat64()*100
		checkFloatOrder(t, x, y)
		checkFloatOrder(t, math.Round(x), math.Round(y))
	}
}

func FuzzFloatKeyOrder(f *testing.F) {
	f.Add(0.0, math.Copysign(0, -1))
	f.Add(-1.5, 1.5)
	f.Add(math.Inf(-1), math.Inf(1))
	f.Add(math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64)
	f.Fuzz(func(t *testing.T, a, b float64) {
		if math.IsNaN(a) || math.IsNaN(b) {
			t.Skip("NaN has no numeric order")
		}
		checkFloatOrder(t, a, b)
		back, err := ParseKey(Float, FormatKey(Float, FloatKey(a)))
		if err != nil || back != FloatKey(a) {
			t.Errorf("ParseKey(Float, FormatKey(FloatKey(%g))): got %x, %v; want %x, nil", a, back, err, FloatKey(a))
		}
	})
}

// --- TimeKey ---

func checkTimeOrder(t *testing.T, a, b time.Time) {
	t.Helper()
	if got, want := keyCmp(TimeKey(a), TimeKey(b)), a.Compare(b); got != want {
		t.Errorf("TimeKey(%s) vs TimeKey(%s): got byte order %d, want %d (keys %x, %x)",
			a.Format(time.RFC3339Nano), b.Format(time.RFC3339Nano), got, want, TimeKey(a), TimeKey(b))
	}
}

func TestTimeKeyOrderEdges(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Ascending. The ends are outside the int64 nanosecond range
	// (1678-2262), which the encoding must still order.
	vals := []time.Time{
		{}, // 0001-01-01, the zero time.Time
		utc("0001-01-01T00:00:00.000000001Z"),
		utc("1000-06-15T12:00:00Z"),
		utc("1677-09-21T00:12:43.145224191Z"),
		utc("1677-09-21T00:12:43.145224192Z"), // the earliest UnixNano
		utc("1900-01-01T00:00:00Z"),
		utc("1969-12-31T23:59:59Z"),
		utc("1969-12-31T23:59:59.5Z"),
		utc("1969-12-31T23:59:59.999999999Z"),
		time.Unix(0, 0),
		utc("1970-01-01T00:00:00.000000001Z"),
		utc("1970-01-01T00:00:01Z"),
		utc("2024-02-29T12:00:00Z"),
		utc("2024-02-29T12:00:00.000000001Z"),
		utc("2262-04-11T23:47:16.854775807Z"), // the latest UnixNano
		utc("2262-04-11T23:47:16.854775808Z"),
		utc("3000-01-01T00:00:00Z"),
		utc("9999-12-31T23:59:59.999999999Z"),
	}
	for _, a := range vals {
		for _, b := range vals {
			checkTimeOrder(t, a, b)
		}
	}
}

func TestTimeKeySameInstantSameKey(t *testing.T) {
	base := time.Date(2024, 5, 6, 7, 8, 9, 123, time.UTC)
	zones := []*time.Location{time.UTC, time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600), time.Local}
	for _, loc := range zones {
		t.Run(loc.String(), func(t *testing.T) {
			if got, want := TimeKey(base.In(loc)), TimeKey(base); got != want {
				t.Errorf("TimeKey(%s): got %x, want %x (same instant as %s)", base.In(loc), got, want, base)
			}
		})
	}
	// A monotonic clock reading must not matter either.
	now := time.Now()
	if got, want := TimeKey(now), TimeKey(now.Round(0)); got != want {
		t.Errorf("TimeKey(now) with monotonic reading: got %x, want %x", got, want)
	}
}

func TestTimeKeyOrderRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	// Seconds across years 1 to 9999 (what RFC 3339 can write), so both
	// sides of 1970 and of the UnixNano range are covered.
	const minSec, maxSec = -62135596800, 253402300799
	randTime := func() time.Time {
		return time.Unix(minSec+r.Int64N(maxSec-minSec+1), r.Int64N(1e9))
	}
	for range 20000 {
		a, b := randTime(), randTime()
		checkTimeOrder(t, a, b)
		checkTimeOrder(t, a, a.Add(time.Duration(r.Int64N(3)-1)))
		checkTimeOrder(t, a, a.Add(time.Duration(r.Int64N(2e9)-1e9)))
	}
}

// --- StringKey ---

func checkStringOrder(t *testing.T, a, b string) {
	t.Helper()
	for _, x := range []string{a, b} {
		if got := AppendStringKey([]byte("p"), x); string(got) != "p"+string(StringKey(x)) {
			t.Errorf("AppendStringKey(p, %q) = %q, want p+StringKey", x, got)
		}
	}
	if got, want := keyCmp(StringKey(a), StringKey(b)), strings.Compare(a, b); got != want {
		t.Errorf("StringKey(%q) vs StringKey(%q): got byte order %d, want %d (keys %q, %q)", a, b, got, want, StringKey(a), StringKey(b))
	}
}

// checkSelfDelimiting checks that whatever follows a key cannot change the
// order of keys of different values: the store appends bytes after a key.
func checkSelfDelimiting(t *testing.T, a, b, x, y string) {
	t.Helper()
	want := strings.Compare(a, b)
	if want == 0 {
		return
	}
	if got := keyCmp(StringKey(a)+Key(x), StringKey(b)+Key(y)); got != want {
		t.Errorf("StringKey(%q)+%q vs StringKey(%q)+%q: got byte order %d, want %d", a, x, b, y, got, want)
	}
}

func TestStringKeyOrderTable(t *testing.T) {
	// Ascending, with the tricky prefix relations around 0x00.
	vals := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x00\xff", "\x01", "a", "a\x00", "a\x00\x00", "a\x00\x01", "a\x00\xff", "a\x01", "ab", "b", "\xff", "\xff\x00", "\xff\xff"}
	if !slices.IsSorted(vals) {
		t.Fatalf("test table is not sorted: %q", vals)
	}
	suffixes := []string{"", "\x00", "\x01", "\xff", "\x00\x00", "\xff\xff", "zzz"}
	for _, a := range vals {
		for _, b := range vals {
			checkStringOrder(t, a, b)
			for _, x := range suffixes {
				for _, y := range suffixes {
					checkSelfDelimiting(t, a, b, x, y)
				}
			}
		}
	}
}

func TestStringKeyPrefixChain(t *testing.T) {
	// The documented example: "a" < "a\x00" < "ab".
	chain := []string{"a", "a\x00", "ab"}
	for i := 1; i < len(chain); i++ {
		if keyCmp(StringKey(chain[i-1]), StringKey(chain[i])) >= 0 {
			t.Errorf("StringKey(%q) = %q, want it before StringKey(%q) = %q", chain[i-1], StringKey(chain[i-1]), chain[i], StringKey(chain[i]))
		}
	}
}

// randString draws from a tiny alphabet so that prefixes, equal strings
// and 0x00 bytes are common.
func randString(r *rand.Rand) string {
	const alphabet = "\x00\x01a\xfe\xff"
	b := make([]byte, r.IntN(6))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func TestStringKeyOrderRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		a, b := randString(r), randString(r)
		checkStringOrder(t, a, b)
		checkSelfDelimiting(t, a, b, randString(r), randString(r))
		checkStringOrder(t, a, a+b)
		checkSelfDelimiting(t, a, a+b, randString(r), randString(r))
	}
	prop := func(a, b, x, y string) bool {
		want := strings.Compare(a, b)
		if keyCmp(StringKey(a), StringKey(b)) != want {
			return false
		}
		return want == 0 || keyCmp(StringKey(a)+Key(x), StringKey(b)+Key(y)) == want
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Errorf("StringKey order or self-delimiting property fails: %v", err)
	}
}

func FuzzStringKeyOrder(f *testing.F) {
	f.Add("a", "a\x00", "\x00", "\xff")
	f.Add("a\x00", "ab", "", "\x00\x00")
	f.Add("", "\x00", "\xff\xff", "")
	f.Fuzz(func(t *testing.T, a, b, x, y string) {
		checkStringOrder(t, a, b)
		checkSelfDelimiting(t, a, b, x, y)
		if got := FormatKey(String, StringKey(a)); got != a {
			t.Errorf("FormatKey(String, StringKey(%q)): got %q, want the input back", a, got)
		}
	})
}

// --- BoolKey and LabelKey ---

func TestBoolKeyOrder(t *testing.T) {
	if keyCmp(BoolKey(false), BoolKey(true)) >= 0 {
		t.Errorf("BoolKey(false) = %x, BoolKey(true) = %x: want false first", BoolKey(false), BoolKey(true))
	}
	for _, v := range []bool{false, true} {
		if got := FormatKey(Bool, BoolKey(v)); got != strconv.FormatBool(v) {
			t.Errorf("FormatKey(Bool, BoolKey(%v)): got %q, want %q", v, got, strconv.FormatBool(v))
		}
		if len(BoolKey(v)) != 1 {
			t.Errorf("BoolKey(%v): got %d bytes, want 1", v, len(BoolKey(v)))
		}
	}
}

func TestLabelKeyPrefix(t *testing.T) {
	tests := []struct {
		name     string
		key, val string
		prefixOf string // label key whose prefix is tried
		want     bool
	}{
		{name: "own key", key: "app", val: "web", prefixOf: "app", want: true},
		{name: "own key empty value", key: "app", val: "", prefixOf: "app", want: true},
		{name: "longer key is not found by shorter prefix", key: "apps", val: "web", prefixOf: "app", want: false},
		{name: "shorter key is not found by longer prefix", key: "app", val: "web", prefixOf: "apps", want: false},
		{name: "prefixed key", key: "svc.run/role", val: "x", prefixOf: "svc.run/role", want: true},
		{name: "domain only", key: "svc.run/role", val: "x", prefixOf: "svc.run", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := LabelKey(tc.key, tc.val)
			if got := strings.HasPrefix(string(k), string(LabelKeyPrefix(tc.prefixOf))); got != tc.want {
				t.Errorf("LabelKey(%q, %q) = %q has prefix LabelKeyPrefix(%q) = %q: got %v, want %v",
					tc.key, tc.val, k, tc.prefixOf, LabelKeyPrefix(tc.prefixOf), got, tc.want)
			}
			if got, want := FormatKey(Label, k), tc.key+"="+tc.val; got != want {
				t.Errorf("FormatKey(Label, %q): got %q, want %q", k, got, want)
			}
		})
	}
	// Within one key, values sort in string order.
	if keyCmp(LabelKey("app", "a"), LabelKey("app", "ab")) >= 0 || keyCmp(LabelKey("app", "ab"), LabelKey("app", "b")) >= 0 {
		t.Errorf("label values of one key do not sort in string order")
	}
}

// --- ParseKey and FormatKey ---

func TestParseFormatRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		typ  KeyType
		in   string
		want string // FormatKey of the parsed key: the canonical text
		key  Key    // expected key, when it is simple to state
	}{
		{name: "string", typ: String, in: "hello", want: "hello", key: StringKey("hello")},
		{name: "string empty", typ: String, in: "", want: ""},
		{name: "string with NUL", typ: String, in: "a\x00b\x00", want: "a\x00b\x00"},
		{name: "string with escape-like bytes", typ: String, in: "a\x00\xff\x00\x01", want: "a\x00\xff\x00\x01"},
		{name: "int zero", typ: Int, in: "0", want: "0", key: IntKey(0)},
		{name: "int negative", typ: Int, in: "-42", want: "-42", key: IntKey(-42)},
		{name: "int plus sign", typ: Int, in: "+7", want: "7", key: IntKey(7)},
		{name: "int min", typ: Int, in: "-9223372036854775808", want: "-9223372036854775808", key: IntKey(math.MinInt64)},
		{name: "int max", typ: Int, in: "9223372036854775807", want: "9223372036854775807", key: IntKey(math.MaxInt64)},
		{name: "float zero", typ: Float, in: "0", want: "0", key: FloatKey(0)},
		{name: "float negative zero is zero", typ: Float, in: "-0", want: "0", key: FloatKey(0)},
		{name: "float fraction", typ: Float, in: "1.5", want: "1.5", key: FloatKey(1.5)},
		{name: "float negative", typ: Float, in: "-2.25", want: "-2.25", key: FloatKey(-2.25)},
		{name: "float integer text", typ: Float, in: "10", want: "10", key: FloatKey(10)},
		{name: "float exponent", typ: Float, in: "1e300", want: "1e+300", key: FloatKey(1e300)},
		{name: "float smallest", typ: Float, in: "5e-324", want: "5e-324", key: FloatKey(math.SmallestNonzeroFloat64)},
		{name: "float +Inf", typ: Float, in: "+Inf", want: "+Inf", key: FloatKey(math.Inf(1))},
		{name: "float -Inf", typ: Float, in: "-Inf", want: "-Inf", key: FloatKey(math.Inf(-1))},
		{name: "time UTC", typ: Time, in: "2024-05-06T07:08:09Z", want: "2024-05-06T07:08:09Z"},
		{name: "time nanoseconds", typ: Time, in: "2024-05-06T07:08:09.123456789Z", want: "2024-05-06T07:08:09.123456789Z"},
		{name: "time offset becomes UTC", typ: Time, in: "2024-05-06T09:08:09+02:00", want: "2024-05-06T07:08:09Z"},
		{name: "time before 1970", typ: Time, in: "1969-12-31T23:59:59.5Z", want: "1969-12-31T23:59:59.5Z"},
		{name: "time year 1", typ: Time, in: "0001-01-01T00:00:00Z", want: "0001-01-01T00:00:00Z", key: TimeKey(time.Time{})},
		{name: "time year 9999", typ: Time, in: "9999-12-31T23:59:59.999999999Z", want: "9999-12-31T23:59:59.999999999Z"},
		{name: "bool true", typ: Bool, in: "true", want: "true", key: BoolKey(true)},
		{name: "bool false", typ: Bool, in: "false", want: "false", key: BoolKey(false)},
		{name: "bool 1", typ: Bool, in: "1", want: "true", key: BoolKey(true)},
		{name: "bool F", typ: Bool, in: "F", want: "false", key: BoolKey(false)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParseKey(tc.typ, tc.in)
			if err != nil {
				t.Fatalf("ParseKey(%s, %q): got error %v, want a key", tc.typ, tc.in, err)
			}
			if tc.key != "" && k != tc.key {
				t.Errorf("ParseKey(%s, %q): got key %x, want %x", tc.typ, tc.in, k, tc.key)
			}
			if got := FormatKey(tc.typ, k); got != tc.want {
				t.Errorf("FormatKey(%s, ParseKey(%q)): got %q, want %q", tc.typ, tc.in, got, tc.want)
			}
			// The canonical text parses back to the same key.
			k2, err := ParseKey(tc.typ, tc.want)
			if err != nil || k2 != k {
				t.Errorf("ParseKey(%s, %q) (canonical form): got %x, %v; want %x, nil", tc.typ, tc.want, k2, err, k)
			}
		})
	}
}

func TestParseKeyErrors(t *testing.T) {
	tests := []struct {
		name    string
		typ     KeyType
		in      string
		wantErr string
	}{
		{name: "int letters", typ: Int, in: "abc", wantErr: `"abc" is not an integer`},
		{name: "int fraction", typ: Int, in: "1.5", wantErr: "not an integer"},
		{name: "int empty", typ: Int, in: "", wantErr: "not an integer"},
		{name: "int overflow", typ: Int, in: "9223372036854775808", wantErr: "not an integer"},
		{name: "int spaces", typ: Int, in: " 1", wantErr: "not an integer"},
		{name: "float NaN", typ: Float, in: "NaN", wantErr: `"NaN" is not a number`},
		{name: "float nan lower case", typ: Float, in: "nan", wantErr: "not a number"},
		{name: "float letters", typ: Float, in: "abc", wantErr: "not a number"},
		{name: "float empty", typ: Float, in: "", wantErr: "not a number"},
		{name: "float overflow", typ: Float, in: "1e400", wantErr: "not a number"},
		{name: "time date only", typ: Time, in: "2024-05-06", wantErr: `"2024-05-06" is not an RFC 3339 date-time`},
		{name: "time space separator", typ: Time, in: "2024-05-06 07:08:09Z", wantErr: "not an RFC 3339 date-time"},
		{name: "time no zone", typ: Time, in: "2024-05-06T07:08:09", wantErr: "not an RFC 3339 date-time"},
		{name: "time words", typ: Time, in: "yesterday", wantErr: "not an RFC 3339 date-time"},
		{name: "time unix seconds", typ: Time, in: "1714979289", wantErr: "not an RFC 3339 date-time"},
		{name: "bool yes", typ: Bool, in: "yes", wantErr: `"yes" is not a boolean`},
		{name: "bool empty", typ: Bool, in: "", wantErr: "not a boolean"},
		{name: "label type", typ: Label, in: "app=web", wantErr: "index of type label cannot be compared"},
		{name: "unknown type", typ: KeyType(42), in: "x", wantErr: "index of type KeyType(42) cannot be compared"},
		{name: "negative type", typ: KeyType(-1), in: "x", wantErr: "KeyType(-1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParseKey(tc.typ, tc.in)
			if err == nil {
				t.Fatalf("ParseKey(%s, %q): got key %x, want error containing %q", tc.typ, tc.in, k, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseKey(%s, %q): got error %q, want it to contain %q", tc.typ, tc.in, err, tc.wantErr)
			}
		})
	}
}

func TestFormatKeyMalformed(t *testing.T) {
	// A key of the wrong length for its type is shown quoted rather than
	// misread.
	tests := []struct {
		name string
		typ  KeyType
		key  Key
		want string
	}{
		{name: "short int", typ: Int, key: "abc", want: `"abc"`},
		{name: "short float", typ: Float, key: "\x01", want: `"\x01"`},
		{name: "int-sized time", typ: Time, key: IntKey(5), want: `"\x80\x00\x00\x00\x00\x00\x00\x05"`},
		{name: "unknown type", typ: KeyType(9), key: "k", want: `"k"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatKey(tc.typ, tc.key); got != tc.want {
				t.Errorf("FormatKey(%s, %q): got %q, want %q", tc.typ, tc.key, got, tc.want)
			}
		})
	}
}

func TestKeyTypeString(t *testing.T) {
	tests := []struct {
		typ  KeyType
		want string
	}{
		{String, "string"}, {Int, "integer"}, {Float, "number"}, {Time, "date-time"}, {Bool, "boolean"}, {Label, "label"},
		{KeyType(6), "KeyType(6)"}, {KeyType(-3), "KeyType(-3)"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.typ.String(); got != tc.want {
				t.Errorf("KeyType(%d).String(): got %q, want %q", int(tc.typ), got, tc.want)
			}
		})
	}
}

// --- DefaultIndexes ---

func TestDefaultIndexes(t *testing.T) {
	created := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	deleted := created.Add(time.Hour)
	full := &object.Unstructured{Envelope: object.Envelope{
		APIVersion: "v1", Kind: "Thing",
		Metadata: object.Metadata{
			Name:              "thing-1",
			Labels:            map[string]string{"b": "2", "a": "1", "svc.run/hidden": "true"},
			CreationTimestamp: &created,
			DeletionTimestamp: &deleted,
		},
	}}
	bare := &object.Unstructured{Envelope: object.Envelope{Metadata: object.Metadata{Name: "bare"}}}

	tests := []struct {
		name  string
		index string
		obj   object.Object
		want  []Key
	}{
		{name: "name", index: IndexName, obj: full, want: []Key{StringKey("thing-1")}},
		{name: "labels", index: IndexLabels, obj: full, want: []Key{LabelKey("a", "1"), LabelKey("b", "2"), LabelKey("svc.run/hidden", "true")}},
		{name: "creation", index: IndexCreationTimestamp, obj: full, want: []Key{TimeKey(created)}},
		{name: "deletion", index: IndexDeletionTimestamp, obj: full, want: []Key{TimeKey(deleted)}},
		{name: "bare name", index: IndexName, obj: bare, want: []Key{StringKey("bare")}},
		{name: "bare labels", index: IndexLabels, obj: bare, want: nil},
		{name: "bare creation", index: IndexCreationTimestamp, obj: bare, want: nil},
		{name: "bare deletion", index: IndexDeletionTimestamp, obj: bare, want: nil},
	}
	defaults := DefaultIndexes()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			i := slices.IndexFunc(defaults, func(ix Index) bool { return ix.Name == tc.index })
			if i < 0 {
				t.Fatalf("DefaultIndexes has no %q", tc.index)
			}
			got := defaults[i].Keys(tc.obj, nil)
			slices.Sort(got) // labels come from a map
			if !slices.Equal(got, tc.want) {
				t.Errorf("index %q keys of %s: got %q, want %q", tc.index, tc.obj.GetEnvelope().Metadata.Name, got, tc.want)
			}
			// Keys appends to dst and keeps what was there.
			pre := []Key{"keep"}
			if got := defaults[i].Keys(tc.obj, pre); len(got) != 1+len(tc.want) || got[0] != "keep" {
				t.Errorf("index %q Keys(obj, [keep]): got %q, want keep followed by %d keys", tc.index, got, len(tc.want))
			}
		})
	}

	wantDecl := []struct {
		name   string
		typ    KeyType
		unique bool
		multi  bool
	}{
		{IndexName, String, true, false},
		{IndexLabels, Label, false, true},
		{IndexCreationTimestamp, Time, false, false},
		{IndexDeletionTimestamp, Time, false, false},
	}
	if len(defaults) != len(wantDecl) {
		t.Fatalf("DefaultIndexes: got %d indexes, want %d", len(defaults), len(wantDecl))
	}
	for i, w := range wantDecl {
		d := defaults[i]
		if d.Name != w.name || d.Type != w.typ || d.Unique != w.unique || d.Multi != w.multi {
			t.Errorf("DefaultIndexes()[%d]: got {%s %s unique=%v multi=%v}, want {%s %s unique=%v multi=%v}",
				i, d.Name, d.Type, d.Unique, d.Multi, w.name, w.typ, w.unique, w.multi)
		}
	}
}
