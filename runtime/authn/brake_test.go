package authn

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// throttled asserts that the sign-in is refused by the brake's limit.
func (e *env) throttled(h http.Header, addr, limit string) *ThrottledError {
	e.t.Helper()
	id, err := e.a.AuthenticateFrom(e.ctx, h, addr)
	var terr *ThrottledError
	if !errors.As(err, &terr) {
		e.t.Fatalf("AuthenticateFrom(%q, %s) = %+v, %v; want a ThrottledError", h.Get("Authorization"), addr, id, err)
	}
	if terr.Limit != limit || terr.RetryAfter <= 0 {
		e.t.Fatalf("refused by %q, retry after %s; want %q and a positive delay", terr.Limit, terr.RetryAfter, limit)
	}
	if id.Authenticated {
		e.t.Fatalf("a refused sign-in returned identity %+v", id)
	}
	return terr
}

func (e *env) deniedFrom(h http.Header, addr string) {
	e.t.Helper()
	if _, err := e.a.AuthenticateFrom(e.ctx, h, addr); !errors.Is(err, ErrUnauthorized) {
		e.t.Fatalf("AuthenticateFrom(%q, %s) = %v; want ErrUnauthorized", h.Get("Authorization"), addr, err)
	}
}

func TestBrakeRefusesBeforeBcrypt(t *testing.T) {
	e := newEnv(t, Options{Brake: Brake{UserFailures: 3, UserEvery: 10 * time.Second}})
	e.user("hugo", "right-pw", nil)
	for i := range 3 {
		e.denied(basic("hugo", fmt.Sprintf("guess-%d", i)))
	}
	terr := e.throttled(basic("hugo", "guess-3"), "", LimitUser)
	// Even the right password is not checked now: the brake must not
	// tell a guesser which guess was right.
	e.throttled(basic("hugo", "right-pw"), "", LimitUser)
	if n := e.checks.Load(); n != 3 {
		t.Fatalf("bcrypt ran %d times, want 3: refusals must come before it", n)
	}
	if terr.RetryAfter != 10*time.Second || terr.RetryAfterSeconds() != 10 {
		t.Fatalf("retry after %s (%d s), want 10s", terr.RetryAfter, terr.RetryAfterSeconds())
	}
	// An unknown user name is braked alike (the decoy check), so that the
	// brake does not tell which names exist.
	for i := range 3 {
		e.denied(basic("nobody", fmt.Sprintf("guess-%d", i)))
	}
	e.throttled(basic("nobody", "guess-3"), "", LimitUser)
	// One token back after the interval; a success does not spend it.
	e.now = e.now.Add(10 * time.Second)
	e.ok(basic("hugo", "right-pw"), "hugo")
	e.a.Forget("hugo")
	e.denied(basic("hugo", "guess-4"))
	e.throttled(basic("hugo", "guess-5"), "", LimitUser)
}

func TestBrakeSparesCachedCredential(t *testing.T) {
	e := newEnv(t, Options{Brake: Brake{UserFailures: 2, AddrFailures: 2}})
	e.user("ida", "right-pw", nil)
	const addr = "198.51.100.7:4000"
	e.ok(basic("ida", "right-pw"), "ida") // now cached
	for i := range 2 {
		e.deniedFrom(basic("ida", fmt.Sprintf("guess-%d", i)), addr)
	}
	e.throttled(basic("ida", "guess-2"), addr, LimitUser)
	before := e.checks.Load()
	for range 5 {
		if id, err := e.a.AuthenticateFrom(e.ctx, basic("ida", "right-pw"), addr); err != nil || id.User != "ida" {
			t.Fatalf("cached credential under attack: %+v, %v", id, err)
		}
	}
	if n := e.checks.Load() - before; n != 0 {
		t.Fatalf("cached sign-ins ran bcrypt %d times", n)
	}
}

func TestBrakeSuccessCostsNothing(t *testing.T) {
	e := newEnv(t, Options{Brake: Brake{UserFailures: 1, AddrFailures: 1}})
	e.user("jo", "right-pw", nil)
	for range 5 {
		if _, err := e.a.AuthenticateFrom(e.ctx, basic("jo", "right-pw"), "192.0.2.1:1"); err != nil {
			t.Fatal(err)
		}
		e.a.Forget("jo") // the next sign-in pays bcrypt again
	}
	if n := e.checks.Load(); n != 5 {
		t.Fatalf("%d checks, want 5", n)
	}
}

func TestBrakePerAddress(t *testing.T) {
	e := newEnv(t, Options{Brake: Brake{AddrFailures: 4, AddrEvery: time.Minute}})
	// Rotating user names does not escape the address's bucket.
	for i := range 4 {
		e.deniedFrom(basic(fmt.Sprintf("u%d", i), "pw"), "203.0.113.5:1000")
	}
	e.throttled(basic("u9", "pw"), "203.0.113.5:2000", LimitAddr)
	// Another client is served.
	e.deniedFrom(basic("u9", "pw"), "203.0.113.6:1000")
	// An IPv6 client's /64 is one bucket.
	for i := range 4 {
		e.deniedFrom(basic("v", fmt.Sprintf("pw%d", i)), fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1))
	}
	e.throttled(basic("w", "pw"), "[2001:db8:1:2:ffff::1]:443", LimitAddr)
	e.deniedFrom(basic("w", "pw"), "[2001:db8:1:3::1]:443")
	if n := e.checks.Load(); n != 10 {
		t.Fatalf("bcrypt ran %d times, want 10", n)
	}
}

func TestBrakeBearer(t *testing.T) {
	e := newEnv(t, Options{Brake: Brake{AddrFailures: 3, AddrEvery: time.Minute}})
	e.user("kim", "pw", nil)
	good := e.token("kim-token", "kim", nil)
	const addr = "203.0.113.9:1"
	e.ok(bearer(good), "kim") // seen once: a known token
	for range 3 {
		tok, _, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		e.deniedFrom(bearer(tok), addr)
	}
	tok, _, _ := NewToken()
	e.throttled(bearer(tok), addr, LimitAddr)
	// The brake is shared with passwords.
	e.throttled(basic("kim", "guess"), addr, LimitAddr)
	// The known token still works from the braked address.
	if id, err := e.a.AuthenticateFrom(e.ctx, bearer(good), addr); err != nil || id.User != "kim" {
		t.Fatalf("known token from a braked address: %+v, %v", id, err)
	}
	e.deniedFrom(http.Header{"Authorization": {"Digest x"}}, addr)
	// Every outcome counted (runtime/metrics), anonymous requests not.
	e.a.AuthenticateFrom(e.ctx, http.Header{}, addr)
	got := map[string]uint64{}
	for _, c := range e.a.SignIns() {
		if c.Count > 0 {
			got[c.Method+"/"+c.Result] = c.Count
		}
	}
	if want := map[string]uint64{"bearer/success": 2, "bearer/failure": 3, "bearer/throttled": 1, "basic/throttled": 1, "other/failure": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sign-ins counted %v, want %v", got, want)
	}
	if th := e.a.Throttled(); fmt.Sprint(th) != "[{user 0} {address 2} {table 0}]" {
		t.Errorf("throttled by limit = %v", th)
	}
}

// TestBrakeConcurrent: parallel guesses cannot all pass on the last
// tokens; checks in flight count.
func TestBrakeConcurrent(t *testing.T) {
	e := newEnv(t, Options{Brake: Brake{UserFailures: 5, AddrFailures: -1}})
	e.user("lee", "right-pw", nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for i := range 32 {
		wg.Go(func() {
			_, err := e.a.AuthenticateFrom(e.ctx, basic("lee", fmt.Sprintf("guess-%d", i)), "192.0.2.9:1")
			var terr *ThrottledError
			if errors.As(err, &terr) {
				mu.Lock()
				refused++
				mu.Unlock()
			} else if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("guess %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if n := e.checks.Load(); n != 5 || refused != 27 {
		t.Fatalf("32 parallel guesses: %d checks, %d refused; want 5 and 27", n, refused)
	}
}

// TestBrakeMemoryBounded: names and addresses beyond the table's size are
// refused, not tracked, until tracked ones refill.
func TestBrakeMemoryBounded(t *testing.T) {
	const size = 8
	e := newEnv(t, Options{Brake: Brake{UserFailures: 2, UserEvery: 5 * time.Second, Entries: size}})
	for i := range size {
		e.deniedFrom(basic(fmt.Sprintf("name-%d", i), "pw"), fmt.Sprintf("192.0.2.%d:1", i))
	}
	for i := range 100 {
		e.throttled(basic(fmt.Sprintf("other-%d", i), "pw"), fmt.Sprintf("198.51.100.%d:1", i), limitTable)
	}
	if u, a := e.a.brake.users.len(), e.a.brake.addrs.len(); u > size || a > size {
		t.Fatalf("brake tracks %d names and %d addresses, bound %d", u, a, size)
	}
	if n := e.checks.Load(); n != size {
		t.Fatalf("bcrypt ran %d times, want %d", n, size)
	}
	// Once the tracked buckets are full again they are dropped for new ones.
	e.now = e.now.Add(5 * time.Second)
	e.deniedFrom(basic("other-0", "pw"), "198.51.100.0:1")
	if u := e.a.brake.users.len(); u != 1 {
		t.Fatalf("after the sweep the brake tracks %d names, want 1", u)
	}
}

func TestClientPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:80":              "192.0.2.1/32",
		"[::ffff:192.0.2.1]:80":     "192.0.2.1/32",
		"[2001:db8::1%eth0]:80":     "2001:db8::/64",
		"[2001:db8:0:0:1::9]:65535": "2001:db8::/64",
		"":                          "invalid Prefix",
		"pipe":                      "invalid Prefix",
	} {
		if got := clientPrefix(in).String(); got != want {
			t.Errorf("clientPrefix(%q) = %s, want %s", in, got, want)
		}
	}
}
