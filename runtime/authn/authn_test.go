package authn

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/store/storetest"
	"golang.org/x/crypto/bcrypt"
)

// env is a real store with the User and PersonalAccessToken models, and an
// Authenticator over it that counts its bcrypt checks.
type env struct {
	t      testing.TB
	ctx    context.Context
	users  *core.UserClient
	tokens *core.PersonalAccessTokenClient
	a      *Authenticator
	now    time.Time
	checks atomic.Int64
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	um, tm := core.UserModel(), core.PersonalAccessTokenModel()
	st := storetest.New(t, um, tm)
	e := &env{t: t, ctx: context.Background(), users: core.NewUserClient(st, um), tokens: core.NewPersonalAccessTokenClient(st, tm)}
	e.now = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if opts.Now == nil {
		opts.Now = func() time.Time { return e.now }
	}
	if opts.PasswordCost == 0 {
		opts.PasswordCost = bcrypt.MinCost
	}
	e.a = New(e.users, e.tokens, opts)
	e.a.check = func(hash, pw string) bool {
		e.checks.Add(1)
		return CheckPassword(hash, pw)
	}
	return e
}

func hashPW(t testing.TB, pw string) string {
	t.Helper()
	h, err := HashPasswordCost(pw, bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func ptr[T any](v T) *T { return &v }

// user creates a user with the password pw (none when empty); edit, if
// given, adjusts it first.
func (e *env) user(name, pw string, edit func(*core.User)) *core.User {
	e.t.Helper()
	u := core.NewUser(name)
	u.Spec.DisplayName = name
	if pw != "" {
		u.Spec.Password = ptr(hashPW(e.t, pw))
	}
	if edit != nil {
		edit(u)
	}
	u, err := e.users.Create(e.ctx, u)
	if err != nil {
		e.t.Fatalf("create user %s: %v", name, err)
	}
	return u
}

// token creates a token of user and returns the token itself.
func (e *env) token(name, user string, edit func(*core.PersonalAccessToken)) string {
	e.t.Helper()
	tok, hash, err := NewToken()
	if err != nil {
		e.t.Fatal(err)
	}
	t := core.NewPersonalAccessToken(name)
	t.Spec.Username = user
	t.Spec.TokenHash = hash
	if edit != nil {
		edit(t)
	}
	if _, err := e.tokens.Create(e.ctx, t); err != nil {
		e.t.Fatalf("create token %s: %v", name, err)
	}
	return tok
}

func basic(user, pw string) http.Header {
	return authz("Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw)))
}

func bearer(tok string) http.Header { return authz("Bearer " + tok) }

func authz(v string) http.Header { return http.Header{"Authorization": {v}} }

// ok asserts a successful sign-in as user.
func (e *env) ok(h http.Header, user string) Identity {
	e.t.Helper()
	id, err := e.a.Authenticate(e.ctx, h)
	if err != nil {
		e.t.Fatalf("Authenticate(%q) = %v, want user %s", h.Get("Authorization"), err, user)
	}
	if !id.Authenticated || id.User != user {
		e.t.Fatalf("Authenticate(%q) = %+v, want user %s", h.Get("Authorization"), id, user)
	}
	return id
}

// denied asserts ErrUnauthorized, whose text must contain none of secrets.
func (e *env) denied(h http.Header, secrets ...string) {
	e.t.Helper()
	id, err := e.a.Authenticate(e.ctx, h)
	if !errors.Is(err, ErrUnauthorized) {
		e.t.Fatalf("Authenticate(%q) = %+v, %v; want ErrUnauthorized", h.Get("Authorization"), id, err)
	}
	if id.Authenticated || id.User != "" {
		e.t.Fatalf("a failed sign-in returned identity %+v", id)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			e.t.Fatalf("error %q reveals a secret", err)
		}
	}
}

func TestAnonymous(t *testing.T) {
	e := newEnv(t, Options{})
	for _, h := range []http.Header{nil, {}, {"X-Other": {"Basic abc"}}} {
		id, err := e.a.Authenticate(e.ctx, h)
		if err != nil || id.Authenticated || id.User != "" || id.TokenName != "" || id.Roles != nil {
			t.Fatalf("Authenticate(%v) = %+v, %v; want anonymous", h, id, err)
		}
	}
}

func TestBasic(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("alice", "correct horse", nil)
	e.user("nopass", "", nil)
	e.user("off", "secret-off", func(u *core.User) { u.Spec.Disabled = ptr(true) })
	e.user("on", "secret-on", func(u *core.User) { u.Spec.Disabled = ptr(false) })

	id := e.ok(basic("alice", "correct horse"), "alice")
	if id.TokenName != "" || id.Roles != nil {
		t.Fatalf("a Basic identity carries token data: %+v", id)
	}
	e.ok(authz("basic "+base64.StdEncoding.EncodeToString([]byte("alice:correct horse"))), "alice") // scheme is case-insensitive
	e.ok(basic("on", "secret-on"), "on")

	e.denied(basic("alice", "wrong"), "wrong")
	e.denied(basic("alice", "correct horse "), "correct horse")
	e.denied(basic("Alice", "correct horse"), "correct horse")
	e.denied(basic("bob", "correct horse"), "correct horse")
	e.denied(basic("nopass", "anything"), "anything")
	e.denied(basic("off", "secret-off"), "secret-off")
	e.denied(basic("alice", strings.Repeat("x", 73)), strings.Repeat("x", 73))
}

func TestBasicDeletedUser(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("gone", "pw-gone", func(u *core.User) { u.Metadata.Finalizers = []string{"test.svc.run/keep"} })
	e.ok(basic("gone", "pw-gone"), "gone") // now cached
	if _, err := e.users.Delete(e.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if u, err := e.users.Get(e.ctx, "gone"); err != nil || u.Metadata.DeletionTimestamp == nil {
		t.Fatalf("the user should stay readable with a deletionTimestamp: %v", err)
	}
	e.denied(basic("gone", "pw-gone"), "pw-gone")
}

func TestBasicDisabledAfterCaching(t *testing.T) {
	e := newEnv(t, Options{})
	u := e.user("carol", "pw-carol", nil)
	e.ok(basic("carol", "pw-carol"), "carol")
	u.Spec.Disabled = ptr(true)
	if _, err := e.users.Update(e.ctx, u); err != nil {
		t.Fatal(err)
	}
	e.denied(basic("carol", "pw-carol"))
}

func TestPasswordChangeInvalidatesCache(t *testing.T) {
	e := newEnv(t, Options{})
	u := e.user("dave", "old-pw", nil)
	e.ok(basic("dave", "old-pw"), "dave")
	e.ok(basic("dave", "old-pw"), "dave") // from the cache
	u.Spec.Password = ptr(hashPW(t, "new-pw"))
	if _, err := e.users.Update(e.ctx, u); err != nil {
		t.Fatal(err)
	}
	// No Forget: the cached entry is bound to the old stored hash.
	e.denied(basic("dave", "old-pw"), "old-pw")
	e.ok(basic("dave", "new-pw"), "dave")
	e.denied(basic("dave", "old-pw"), "old-pw")
}

func TestCacheSavesBcrypt(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("erin", "pw-erin", nil)
	e.ok(basic("erin", "pw-erin"), "erin")
	if n := e.checks.Load(); n != 1 {
		t.Fatalf("first sign-in ran bcrypt %d times, want 1", n)
	}
	for range 5 {
		e.ok(basic("erin", "pw-erin"), "erin")
	}
	if n := e.checks.Load(); n != 1 {
		t.Fatalf("cached sign-ins ran bcrypt: %d checks in all, want 1", n)
	}
	e.a.Forget("erin")
	e.ok(basic("erin", "pw-erin"), "erin")
	if n := e.checks.Load(); n != 2 {
		t.Fatalf("after Forget: %d checks, want 2", n)
	}
}

// TestConcurrentSignInsShareOneCheck: sign-ins that arrive together with
// one credential the cache does not hold yet pay bcrypt once between them,
// and so do concurrent failures of one wrong password, and of one unknown
// user (whose decoy check must cost what a real user's does).
func TestConcurrentSignInsShareOneCheck(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("gail", "pw-gail", nil)
	const n = 16
	var arrived atomic.Int64
	e.a.check = func(hash, pw string) bool {
		e.checks.Add(1)
		// Hold the first check until every sign-in has started, and long
		// enough after for each to reach the cache miss, even on a busy
		// machine: one that came after the flight ended would check again.
		for arrived.Load() < n {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		return CheckPassword(hash, pw)
	}
	for _, tc := range []struct {
		user, pw string
		want     bool
	}{{"gail", "pw-gail", true}, {"gail", "wrong", false}, {"nobody", "pw-gail", false}} {
		arrived.Store(0)
		e.checks.Store(0)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				arrived.Add(1)
				id, err := e.a.Authenticate(e.ctx, basic(tc.user, tc.pw))
				if got := err == nil && id.User == tc.user; got != tc.want {
					errs <- fmt.Errorf("%s:%s: signed in %v (%+v, %v), want %v", tc.user, tc.pw, got, id, err, tc.want)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := e.checks.Load(); got != 1 {
			t.Errorf("%s:%s: %d concurrent sign-ins ran bcrypt %d times, want 1", tc.user, tc.pw, n, got)
		}
	}
}

func TestWrongPasswordOnCachedUser(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("frank", "right-pw", nil)
	e.ok(basic("frank", "right-pw"), "frank")
	before := e.checks.Load()
	for range 3 {
		e.denied(basic("frank", "wrong-pw"), "wrong-pw")
	}
	// Each failure paid bcrypt: failures are neither served by the cache
	// nor remembered.
	if n := e.checks.Load() - before; n != 3 {
		t.Fatalf("3 wrong passwords ran bcrypt %d times, want 3", n)
	}
	if n := e.a.cache.len(); n != 1 {
		t.Fatalf("cache holds %d entries, want only the good one", n)
	}
	e.ok(basic("frank", "right-pw"), "frank")
}

func TestUnknownUserPaysDecoy(t *testing.T) {
	e := newEnv(t, Options{})
	e.denied(basic("nobody", "pw"))
	if n := e.checks.Load(); n != 1 {
		t.Fatalf("an unknown user ran %d password checks, want 1 (the decoy)", n)
	}
}

func TestCacheBounded(t *testing.T) {
	const size = 3
	e := newEnv(t, Options{CacheSize: size})
	for i := range 10 {
		name := fmt.Sprintf("user-%d", i)
		e.user(name, "pw-"+name, nil)
		e.ok(basic(name, "pw-"+name), name)
		if n := e.a.cache.len(); n > size {
			t.Fatalf("cache holds %d entries, bound is %d", n, size)
		}
	}
	if n := e.a.cache.len(); n != size {
		t.Fatalf("cache holds %d entries, want %d", n, size)
	}
	// Evicted or not, every user still signs in.
	for i := range 10 {
		name := fmt.Sprintf("user-%d", i)
		e.ok(basic(name, "pw-"+name), name)
	}
	// The index and the entries agree after random replacement and Forget.
	e.a.Forget("user-9")
	c := e.a.cache
	if len(c.idx) != len(c.ents) {
		t.Fatalf("index has %d keys, entries %d", len(c.idx), len(c.ents))
	}
	for k, i := range c.idx {
		if c.ents[i].key != k || c.ents[i].user == "user-9" {
			t.Fatalf("index entry %d is stale", i)
		}
	}
}

func TestCacheOff(t *testing.T) {
	e := newEnv(t, Options{CacheSize: -1})
	e.user("gina", "pw-gina", nil)
	e.ok(basic("gina", "pw-gina"), "gina")
	e.ok(basic("gina", "pw-gina"), "gina")
	if n := e.checks.Load(); n != 2 {
		t.Fatalf("without a cache: %d checks, want 2", n)
	}
	e.a.Forget("gina") // harmless
}

func TestMalformedHeaders(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("alice", "pw", nil)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"empty value", authz("")},
		{"scheme only", authz("Basic")},
		{"basic not base64", authz("Basic !!!")},
		{"basic missing colon", authz("Basic " + b64("alicepw"))},
		{"basic empty user", authz("Basic " + b64(":pw"))},
		{"basic empty password", authz("Basic " + b64("alice:"))},
		{"basic too long", authz("Basic " + strings.Repeat("A", maxBasicLen+4))},
		{"bearer empty", authz("Bearer ")},
		{"bearer bare", authz("Bearer")},
		{"bearer prefix only", authz("Bearer " + TokenPrefix)},
		{"bearer other token", authz("Bearer abc.def.ghi")},
		{"bearer too long", authz("Bearer " + TokenPrefix + strings.Repeat("a", maxBearerLen))},
		{"unknown scheme", authz("Digest username=alice")},
		{"no space", authz("Basic" + b64("alice:pw"))},
		{"two headers", http.Header{"Authorization": {"Basic " + b64("alice:pw"), "Basic " + b64("alice:pw")}}},
	} {
		t.Run(tc.name, func(t *testing.T) { e.denied(tc.h) })
	}
	e.ok(basic("alice", "pw"), "alice")
	e.ok(authz("Basic   "+b64("alice:pw")+" "), "alice") // extra blanks around the credentials
}

func TestBearer(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("alice", "pw", nil)
	e.user("off", "pw", func(u *core.User) { u.Spec.Disabled = ptr(true) })
	e.user("gone", "pw", func(u *core.User) { u.Metadata.Finalizers = []string{"test.svc.run/keep"} })

	good := e.token("alice-none", "alice", nil)
	limited := e.token("alice-limited", "alice", func(t *core.PersonalAccessToken) {
		t.Spec.Roles = []string{"post-author", "guest"}
	})
	future := e.token("alice-future", "alice", func(t *core.PersonalAccessToken) { t.Spec.ExpiresAt = ptr(e.now.Add(time.Minute)) })
	expired := e.token("alice-expired", "alice", func(t *core.PersonalAccessToken) { t.Spec.ExpiresAt = ptr(e.now.Add(-time.Minute)) })
	revoked := e.token("alice-revoked", "alice", func(t *core.PersonalAccessToken) { t.Spec.Revoked = ptr(true) })
	notRevoked := e.token("alice-not-revoked", "alice", func(t *core.PersonalAccessToken) { t.Spec.Revoked = ptr(false) })
	ofDisabled := e.token("off-token", "off", nil)
	ofUnknown := e.token("ghost-token", "ghost", nil)
	ofDeleted := e.token("gone-token", "gone", nil)
	deleting := e.token("alice-deleting", "alice", func(t *core.PersonalAccessToken) {
		t.Metadata.Finalizers = []string{"test.svc.run/keep"}
	})

	// A token without roles holds none of the user's: never all of them.
	id := e.ok(bearer(good), "alice")
	if id.TokenName != "alice-none" || id.Roles == nil || len(id.Roles) != 0 {
		t.Fatalf("identity %+v, want token alice-none limited to no roles", id)
	}
	id = e.ok(bearer(limited), "alice")
	if id.TokenName != "alice-limited" || !slices.Equal(id.Roles, []string{"post-author", "guest"}) {
		t.Fatalf("identity %+v, want the token's roles", id)
	}
	e.ok(authz("bearer "+good), "alice")
	e.ok(bearer(future), "alice")
	e.ok(bearer(notRevoked), "alice")
	e.ok(bearer(deleting), "alice")
	e.ok(bearer(ofDeleted), "gone")

	if _, err := e.tokens.Delete(e.ctx, "alice-deleting"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.users.Delete(e.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	wrong, _, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	// A token left by an earlier user of the same name.
	predating := e.token("reborn-token", "reborn", nil)
	time.Sleep(time.Millisecond)
	e.user("reborn", "pw", nil)
	for name, tok := range map[string]string{
		"expired": expired, "revoked": revoked, "disabled user": ofDisabled, "unknown user": ofUnknown,
		"deleted user": ofDeleted, "token being deleted": deleting, "wrong": wrong, "older than its user": predating,
		"truncated": good[:len(good)-1], "extended": good + "A",
	} {
		t.Run(name, func(t *testing.T) { e.denied(bearer(tok), tok, HashToken(tok)) })
	}

	// Expiry follows the clock: at the expiry instant the token is dead.
	e.now = e.now.Add(time.Minute)
	e.denied(bearer(future))
	if n := e.checks.Load(); n != 0 {
		t.Fatalf("tokens ran bcrypt %d times", n)
	}
}

func TestPasswordHashing(t *testing.T) {
	h, err := HashPasswordCost("pässword", bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword(h, "pässword") || CheckPassword(h, "password") || CheckPassword(h, "") || CheckPassword("", "pässword") || CheckPassword("not a hash", "pässword") {
		t.Fatal("CheckPassword disagrees with HashPasswordCost")
	}
	h2, err := HashPasswordCost("pässword", bcrypt.MinCost)
	if err != nil || h2 == h {
		t.Fatalf("two hashes of one password should differ by salt: %v", err)
	}
	max := strings.Repeat("p", MaxPasswordLen)
	if h, err := HashPasswordCost(max, bcrypt.MinCost); err != nil || !CheckPassword(h, max) || CheckPassword(h, max[:MaxPasswordLen-1]) {
		t.Fatalf("a %d-byte password should work: %v", MaxPasswordLen, err)
	}
	long := max + "X"
	if _, err := HashPasswordCost(long, bcrypt.MinCost); !errors.Is(err, ErrPasswordTooLong) || strings.Contains(err.Error(), long) {
		t.Fatalf("a 73-byte password: %v, want ErrPasswordTooLong without the password", err)
	}
	if _, err := HashPassword(long); !errors.Is(err, ErrPasswordTooLong) {
		t.Fatalf("HashPassword of a 73-byte password: %v", err)
	}
	if _, err := HashPasswordCost("", bcrypt.MinCost); !errors.Is(err, ErrPasswordEmpty) {
		t.Fatalf("an empty password: %v", err)
	}
	if _, err := HashPasswordCost("pw", 99); err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("an invalid cost: %v", err)
	}
}

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok, hash, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(tok, TokenPrefix)
		if !ok || len(body) != 43 || strings.ContainsAny(body, "+/=") {
			t.Fatalf("token %q is not %s + 43 base64url characters", tok, TokenPrefix)
		}
		if raw, err := base64.RawURLEncoding.DecodeString(body); err != nil || len(raw) != 32 {
			t.Fatalf("token body does not decode to 32 bytes: %v", err)
		}
		if hash != HashToken(tok) || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
			t.Fatalf("hash %q is not the hex SHA-256 of the token", hash)
		}
		if seen[tok] {
			t.Fatal("a token repeated")
		}
		seen[tok] = true
	}
	// A fixed vector (sha256sum of "svc_pat_test").
	if got, want := HashToken("svc_pat_test"), "dcde7ef510a38a2f9b451532ea887981b74a489bedd0a2441a17b1bef6c04a95"; got != want {
		t.Fatalf("HashToken = %s, want %s", got, want)
	}
}

func TestConcurrent(t *testing.T) {
	e := newEnv(t, Options{CacheSize: 4})
	var toks []string
	for i := range 8 {
		name := fmt.Sprintf("user-%d", i)
		e.user(name, "pw-"+name, nil)
		toks = append(toks, e.token("tok-"+name, name, nil))
	}
	done := make(chan error)
	const workers = 4
	for g := range workers {
		go func() {
			for i := range 16 {
				n := (g + i) % 8
				name := fmt.Sprintf("user-%d", n)
				h := basic(name, "pw-"+name)
				switch i % 4 {
				case 1:
					h = bearer(toks[n])
				case 2:
					e.a.Forget(name)
				case 3:
					h = basic(name, "nope")
				}
				id, err := e.a.Authenticate(e.ctx, h)
				if i%4 == 3 {
					if !errors.Is(err, ErrUnauthorized) {
						done <- fmt.Errorf("wrong password: %v", err)
						return
					}
					continue
				}
				if err != nil || id.User != name {
					done <- fmt.Errorf("%s: %+v %v", name, id, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range workers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkBasicCached(b *testing.B) {
	e := newEnv(b, Options{})
	e.user("alice", "correct horse battery staple", nil)
	h := basic("alice", "correct horse battery staple")
	e.ok(h, "alice")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.a.Authenticate(e.ctx, h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBearer(b *testing.B) {
	e := newEnv(b, Options{})
	e.user("alice", "pw", nil)
	h := bearer(e.token("alice-token", "alice", func(t *core.PersonalAccessToken) { t.Spec.Roles = []string{"guest"} }))
	e.ok(h, "alice")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.a.Authenticate(e.ctx, h); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBasicUncached is the cost the cache saves, at bcrypt's default
// cost.
func BenchmarkBasicUncached(b *testing.B) {
	e := newEnv(b, Options{CacheSize: -1})
	u := core.NewUser("alice")
	u.Spec.DisplayName = "alice"
	hash, err := HashPassword("correct horse battery staple")
	if err != nil {
		b.Fatal(err)
	}
	u.Spec.Password = &hash
	if _, err := e.users.Create(e.ctx, u); err != nil {
		b.Fatal(err)
	}
	h := basic("alice", "correct horse battery staple")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.a.Authenticate(e.ctx, h); err != nil {
			b.Fatal(err)
		}
	}
}
