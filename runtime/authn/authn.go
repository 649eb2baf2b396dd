// Package authn establishes who sent a request (docs/api.md,
// "Authentication"): HTTP Basic against the User objects' bcrypt password
// hashes, and Bearer personal access tokens looked up by their SHA-256.
// Authorization is runtime/authz's job (over runtime/rbac); authn only
// says who it is and, for a token, which roles the token is limited to.
// Besides the Authenticator it holds what credentials are made of:
// password hashes (password.go), tokens and their ids (token.go), and the
// bookkeeping of a token's last use (lastused.go, noted by the guard).
//
// Verifying a bcrypt hash takes tens of milliseconds by design, far too
// long to pay on every request of an API client using Basic. The
// Authenticator therefore remembers credentials it has verified, keyed by
// an HMAC of the credential, and pays bcrypt once per credential and stored
// password hash rather than once per request.
package authn

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/store"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/singleflight"
)

// ErrUnauthorized is every credential failure: a malformed header, an
// unknown scheme, user or token, a wrong password, a disabled or deleted
// user, a revoked or expired token. Which one is deliberately not said.
var ErrUnauthorized = errors.New("authn: invalid credentials")

// DefaultCacheSize is the number of verified Basic credentials remembered
// when Options.CacheSize is 0.
const DefaultCacheSize = 10_000

// Limits on credential lengths, far above any valid credential (a user name
// is at most 253 bytes, a password 72, a token 51), so that junk is refused
// before it is decoded or hashed.
const (
	maxBasicLen  = 1024
	maxBearerLen = 256
)

// Identity is who a request comes from.
type Identity struct {
	// User is the user's name; empty for an anonymous request.
	User string
	// Authenticated is true when the request carried valid credentials.
	Authenticated bool
	// TokenName is the PersonalAccessToken's name when a token was used.
	TokenName string
	// Roles limits a token to these roles (empty: none beyond anonymous
	// and authenticated); nil, for a password, means all of the user's.
	Roles []string
}

// Options tune an Authenticator. The zero value is usable.
type Options struct {
	// CacheSize bounds the verified-credential cache: 0 means
	// DefaultCacheSize, a negative size turns the cache off.
	CacheSize int
	// Now is the clock token expiry is checked against; nil is time.Now.
	Now func() time.Time
	// Logger receives debug records of failed sign-ins (never a secret);
	// nil is slog.Default().
	Logger *slog.Logger
	// PasswordCost is the bcrypt cost passwords are stored with; 0 means
	// bcrypt.DefaultCost. A sign-in as an unknown user, or one without a
	// password, is checked against a decoy hash of this cost, so that it
	// takes as long as a wrong password and does not reveal which users
	// exist.
	PasswordCost int
	// Brake limits failed sign-ins per user name and client address;
	// the zero value takes the defaults (DefaultUserFailures, ...).
	Brake Brake
}

// Authenticator checks request credentials against the store. It is safe
// for concurrent use.
type Authenticator struct {
	users  *core.UserClient
	tokens *core.PersonalAccessTokenClient
	now    func() time.Time
	log    *slog.Logger
	cost   int
	cache  *credCache // nil when turned off
	macs   sync.Pool  // of *scratch, each with an HMAC under this Authenticator's key
	// misses lets concurrent sign-ins with one credential that the cache
	// does not hold share a single bcrypt: clients opening many
	// connections at once (after a restart, say) would otherwise queue
	// one check per connection, each tens of milliseconds of CPU.
	misses singleflight.Group

	// check verifies a password against a stored hash; a field so that
	// tests can count how often bcrypt runs.
	check func(hash, pw string) bool

	decoyOnce sync.Once
	decoy     string

	// brake refuses password checks and token look-ups, before they
	// run, for names and addresses with too many recent failures.
	brake *brake

	// users and tokens skip decoding what did not change since last seen;
	// tokens are keyed by their hash.
	decodedUsers  *decodedCache[*core.User]
	decodedTokens *decodedCache[*core.PersonalAccessToken]

	stats signInStats // stats.go
}

// token returns the stored token whose hash is hash, or nil; like user,
// it decodes only a token that changed since it was last seen.
func (a *Authenticator) token(ctx context.Context, hash string) (*core.PersonalAccessToken, error) {
	res, err := a.tokens.ListRecords(ctx, client.ListOptions{
		FieldSelector: []string{core.PersonalAccessTokenIndexSpecTokenHash + "=" + hash},
	})
	if err != nil || len(res.Items) != 1 {
		return nil, err
	}
	return a.decodedTokens.get(hash, res.Items[0], a.tokens.Decode)
}

// user returns the stored user called name, decoding it only when it
// changed since the last request for it.
func (a *Authenticator) user(ctx context.Context, name string) (*core.User, error) {
	rec, err := a.users.Record(ctx, name)
	if err != nil {
		return nil, err
	}
	return a.decodedUsers.get(name, rec, a.users.Decode)
}

// scratch is per-goroutine working memory for the cache key, pooled so that
// a cached sign-in allocates nothing for it.
type scratch struct {
	mac hash.Hash
	buf []byte
	sum [sha256.Size]byte
}

// New returns an Authenticator reading users and tokens through the given
// clients.
func New(users *core.UserClient, tokens *core.PersonalAccessTokenClient, opts Options) *Authenticator {
	a := &Authenticator{
		users:  users,
		tokens: tokens,
		now:    opts.Now,
		log:    opts.Logger,
		cost:   opts.PasswordCost,
		check:  CheckPassword,
	}
	a.decodedUsers = newDecodedCache[*core.User](max(opts.CacheSize, DefaultCacheSize))
	a.decodedTokens = newDecodedCache[*core.PersonalAccessToken](max(opts.CacheSize, DefaultCacheSize))
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.cost == 0 {
		a.cost = bcrypt.DefaultCost
	}
	a.brake = newBrake(opts.Brake, a.log)
	size := opts.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	if size > 0 {
		a.cache = newCredCache(size)
	}
	// A fresh key per Authenticator: cache keys mean nothing outside this
	// process, and rand.Read cannot fail (it aborts the program instead).
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	a.macs.New = func() any { return &scratch{mac: hmac.New(sha256.New, key)} }
	return a
}

// Authenticate returns the identity the request's Authorization header
// proves. With no header the request is anonymous: a zero Identity and no
// error. Bad credentials of any kind are ErrUnauthorized; any other error
// means the store could not be read. It knows no client address: only
// the per user name brake applies.
func (a *Authenticator) Authenticate(ctx context.Context, header http.Header) (Identity, error) {
	return a.AuthenticateFrom(ctx, header, "")
}

// AuthenticateFrom is Authenticate for a request from remoteAddr
// (http.Request.RemoteAddr). A sign-in that would need a password check
// or token look-up while its user name or address has failed too often
// lately is refused unchecked with a *ThrottledError; a credential the
// cache already vouches for is never refused.
func (a *Authenticator) AuthenticateFrom(ctx context.Context, header http.Header, remoteAddr string) (Identity, error) {
	vals := header.Values("Authorization")
	if len(vals) == 0 {
		return Identity{}, nil
	}
	var id Identity
	var err error
	method := otherIdx
	if len(vals) > 1 {
		id, err = a.fail(ctx, "", "several Authorization headers", "")
	} else {
		scheme, cred, _ := strings.Cut(vals[0], " ")
		cred = strings.TrimSpace(cred)
		switch {
		case strings.EqualFold(scheme, "Basic"):
			method = basicIdx
			id, err = a.basic(ctx, cred, remoteAddr)
		case strings.EqualFold(scheme, "Bearer"):
			method = bearerIdx
			id, err = a.bearer(ctx, cred, remoteAddr)
		default:
			id, err = a.fail(ctx, "", "unsupported or malformed Authorization header", "")
		}
	}
	a.stats.count(method, err)
	return id, err
}

// Forget drops every remembered credential of the user, so the next
// sign-in pays bcrypt again. A password change needs no call: remembered
// credentials are bound to the stored hash they were verified against.
func (a *Authenticator) Forget(username string) {
	if a.cache != nil {
		a.cache.forget(username)
	}
}

func (a *Authenticator) basic(ctx context.Context, cred, remoteAddr string) (Identity, error) {
	const scheme = "basic"
	if cred == "" || len(cred) > maxBasicLen {
		return a.fail(ctx, scheme, "malformed credentials", "")
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return a.fail(ctx, scheme, "credentials are not base64", "")
	}
	name, pw, ok := strings.Cut(string(raw), ":")
	clear(raw)
	switch {
	case !ok:
		return a.fail(ctx, scheme, "credentials lack a colon", "")
	case name == "" || pw == "":
		return a.fail(ctx, scheme, "empty user name or password", "")
	case len(pw) > MaxPasswordLen:
		return a.fail(ctx, scheme, "password longer than bcrypt accepts", "")
	}
	u, err := a.user(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		if terr := a.checkDecoy(ctx, name, pw, remoteAddr); terr != nil {
			return Identity{}, terr
		}
		// The name is not logged: people type passwords into it.
		return a.fail(ctx, scheme, "unknown user", "")
	}
	if err != nil {
		// Not named either: it may be a mistyped password.
		return Identity{}, fmt.Errorf("authn: look up the user: %w", err)
	}
	var stored string
	if u.Spec.Password != nil {
		stored = *u.Spec.Password
	}
	if stored == "" {
		if terr := a.checkDecoy(ctx, name, pw, remoteAddr); terr != nil {
			return Identity{}, terr
		}
		return a.fail(ctx, scheme, "user has no password", name)
	}
	// The password is checked before the user's state, so that a failed
	// attempt does not tell a stranger whether the user is disabled.
	ok, terr := a.verify(ctx, name, pw, stored, remoteAddr)
	if terr != nil {
		return Identity{}, terr
	}
	if !ok {
		return a.fail(ctx, scheme, "wrong password", name)
	}
	if reason := unusable(u); reason != "" {
		return a.fail(ctx, scheme, reason, name)
	}
	return Identity{User: name, Authenticated: true}, nil
}

// verify checks pw against the user's stored hash: through the cache, or
// with bcrypt once the brake admits the attempt. A refusal is returned
// before bcrypt runs; the answer for an unknown user (the decoy) and a
// known one is the same, so that the brake reveals no user names.
func (a *Authenticator) verify(ctx context.Context, name, pw, stored, remoteAddr string) (bool, *ThrottledError) {
	k, hit := a.cached(name, pw, stored)
	if hit {
		return true, nil
	}
	return a.checkMiss(ctx, k, name, pw, stored, remoteAddr)
}

// cached returns the credential's cache key and whether the cache vouches
// for it against the stored hash.
func (a *Authenticator) cached(name, pw, stored string) (credKey, bool) {
	var k credKey
	if a.cache == nil {
		return k, false
	}
	s := a.macs.Get().(*scratch)
	s.buf = append(append(append(s.buf[:0], name...), 0), pw...)
	s.mac.Reset()
	s.mac.Write(s.buf)
	copy(k[:], s.mac.Sum(s.sum[:0]))
	hit := false
	if user, hash, ok := a.cache.get(k); ok && user == name {
		s.buf = append(s.buf[:0], stored...)
		hit = subtle.ConstantTimeCompare(hash, s.buf) == 1
	}
	clear(s.buf) // it held the password
	a.macs.Put(s)
	return k, hit
}

// checkMiss runs bcrypt, once the brake admits it, for a credential the
// cache does not hold (key k).
func (a *Authenticator) checkMiss(ctx context.Context, k credKey, name, pw, stored, remoteAddr string) (bool, *ThrottledError) {
	check := func() missResult {
		adm, terr := a.brake.admit(ctx, a.now(), "basic", name, true, clientPrefix(remoteAddr))
		if terr != nil {
			return missResult{terr: terr}
		}
		ok := a.check(stored, pw)
		a.brake.settle(a.now(), adm, !ok)
		return missResult{ok: ok}
	}
	if a.cache == nil {
		r := check()
		return r.ok, r.terr
	}
	// The flight is keyed by the credential's HMAC and the stored hash,
	// never the password; it remembers the entry before it ends, so that
	// later arrivals find it in the cache. Sharing it, concurrent
	// identical attempts also share one admission by the brake: they
	// cost one check.
	v, _, _ := a.misses.Do(string(k[:])+stored, func() (any, error) {
		r := check()
		if r.ok {
			a.cache.put(k, name, stored) // failures are never remembered
		}
		return r, nil
	})
	r := v.(missResult)
	return r.ok, r.terr
}

type missResult struct {
	ok   bool
	terr *ThrottledError
}

// checkDecoy spends the time of a password check on a hash no password
// matches. It goes through verify, like a real user's check: concurrent
// identical attempts share it there, and were only real users' checks
// shared, a burst of one credential would answer fast for a user who
// exists and slowly for one who does not. verify never remembers it, as
// it remembers no failure.
func (a *Authenticator) checkDecoy(ctx context.Context, name, pw, remoteAddr string) *ThrottledError {
	a.decoyOnce.Do(func() {
		var b [18]byte
		_, _ = rand.Read(b[:])
		// On error (an invalid cost) the decoy stays empty and costs
		// nothing; sign-ins still fail as they should.
		a.decoy, _ = HashPasswordCost(hex.EncodeToString(b[:]), a.cost)
	})
	_, terr := a.verify(ctx, name, pw, a.decoy, remoteAddr)
	return terr
}

func (a *Authenticator) bearer(ctx context.Context, token, remoteAddr string) (id Identity, err error) {
	const scheme = "bearer"
	if !isToken(token) {
		return a.fail(ctx, scheme, "not a personal access token", "")
	}
	want := HashToken(token)
	// A token seen before (which takes guessing 256 bits) is looked up
	// however its address fares; any other must be admitted by the
	// address's brake first, so that guessing tokens is as slow as
	// guessing passwords.
	if !a.decodedTokens.has(want) {
		adm, terr := a.brake.admit(ctx, a.now(), scheme, "", false, clientPrefix(remoteAddr))
		if terr != nil {
			return Identity{}, terr
		}
		defer func() { a.brake.settle(a.now(), adm, errors.Is(err, ErrUnauthorized)) }()
	}
	t, err := a.token(ctx, want)
	if err != nil {
		return Identity{}, fmt.Errorf("authn: look up token: %w", err)
	}
	if t == nil {
		return a.fail(ctx, scheme, "unknown token", "")
	}
	switch {
	case subtle.ConstantTimeCompare([]byte(t.Spec.TokenHash), []byte(want)) != 1:
		return a.fail(ctx, scheme, "unknown token", "")
	case t.Spec.Revoked != nil && *t.Spec.Revoked:
		return a.fail(ctx, scheme, "token "+t.Metadata.Name+" is revoked", t.Spec.Username)
	case t.Metadata.DeletionTimestamp != nil:
		return a.fail(ctx, scheme, "token "+t.Metadata.Name+" is being deleted", t.Spec.Username)
	case t.Spec.ExpiresAt != nil && !a.now().Before(*t.Spec.ExpiresAt):
		return a.fail(ctx, scheme, "token "+t.Metadata.Name+" has expired", t.Spec.Username)
	}
	u, err := a.user(ctx, t.Spec.Username)
	if errors.Is(err, store.ErrNotFound) {
		return a.fail(ctx, scheme, "token "+t.Metadata.Name+" belongs to an unknown user", t.Spec.Username)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("authn: look up user %q of token %q: %w", t.Spec.Username, t.Metadata.Name, err)
	}
	if reason := unusable(u); reason != "" {
		return a.fail(ctx, scheme, reason, t.Spec.Username)
	}
	if tc, uc := t.Metadata.CreationTimestamp, u.Metadata.CreationTimestamp; tc != nil && uc != nil && tc.Before(*uc) {
		// Made by an earlier user of the same name, deleted since.
		return a.fail(ctx, scheme, "token "+t.Metadata.Name+" predates its user", t.Spec.Username)
	}
	id = Identity{User: u.Metadata.Name, Authenticated: true, TokenName: t.Metadata.Name}
	// A token is always limited to its roles, none included (never "all
	// of the user's": roles granted after the token was made would reach
	// it). A copy, so that whoever holds the identity cannot alter the
	// decoded token.
	id.Roles = append([]string{}, t.Spec.Roles...)
	return id, nil
}

// unusable says why a user may not sign in, or "".
func unusable(u *core.User) string {
	switch {
	case u.Metadata.DeletionTimestamp != nil:
		return "user is being deleted"
	case u.Spec.Disabled != nil && *u.Spec.Disabled:
		return "user is disabled"
	}
	return ""
}

// fail logs why a sign-in failed and returns ErrUnauthorized. Callers pass
// only what is safe to log: never a password or token, and a user name
// only once it is known to be one.
func (a *Authenticator) fail(ctx context.Context, scheme, reason, user string) (Identity, error) {
	a.log.LogAttrs(ctx, slog.LevelDebug, "authn: sign-in failed",
		slog.String("scheme", scheme), slog.String("reason", reason), slog.String("user", user))
	return Identity{}, ErrUnauthorized
}
