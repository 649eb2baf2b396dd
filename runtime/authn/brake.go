package authn

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the failed sign-in brake (Options.Brake). Every password
// check the credential cache cannot answer, and every unknown token, must
// first be admitted by two token buckets: its user name's and its client
// address's. A failure spends a token; a success spends none.
const (
	// DefaultUserFailures failed sign-ins are allowed at once per user
	// name, then one more per DefaultUserEvery.
	DefaultUserFailures = 10
	DefaultUserEvery    = 6 * time.Second
	// DefaultAddrFailures failed sign-ins (passwords or tokens) are
	// allowed at once per client address (an IPv6 client's /64), then one
	// more per DefaultAddrEvery.
	DefaultAddrFailures = 30
	DefaultAddrEvery    = time.Second
	// DefaultBrakeEntries bounds how many user names, and how many
	// addresses, the brake tracks. When every tracked bucket is still
	// refilling, sign-ins for names or addresses it does not track are
	// refused until some refill: the brake's memory stays bounded, and
	// an attacker rotating names and addresses meets a brake too.
	DefaultBrakeEntries = 10_000
)

// Brake tunes the failed sign-in brake. Zero fields take the defaults; a
// negative Failures turns that bucket off.
type Brake struct {
	UserFailures int
	UserEvery    time.Duration
	AddrFailures int
	AddrEvery    time.Duration
	Entries      int
}

// ThrottledError refuses a sign-in without checking it: too many failed
// lately for its user name or client address. Limit names the limit.
type ThrottledError struct {
	Limit      string
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("authn: too many failed sign-ins (%s); retry in %s", e.Limit, e.RetryAfter.Round(time.Second))
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least
// one, for a Retry-After header.
func (e *ThrottledError) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// Names of the limits, as ThrottledError.Limit says them.
const (
	LimitUser  = "failed sign-ins per user name"
	LimitAddr  = "failed sign-ins per client address"
	limitTable = "failed sign-ins tracked at once"
)

// brake is the two tables of buckets. A nil table is a bucket turned off.
type brake struct {
	users *buckets[uint64]
	addrs *buckets[netip.Prefix]
	seed  maphash.Seed
	log   *slog.Logger
}

func newBrake(o Brake, log *slog.Logger) *brake {
	if o.Entries <= 0 {
		o.Entries = DefaultBrakeEntries
	}
	b := &brake{seed: maphash.MakeSeed(), log: log}
	if o.UserFailures >= 0 {
		b.users = newBuckets[uint64](LimitUser, orDefault(o.UserFailures, DefaultUserFailures), orDefaultD(o.UserEvery, DefaultUserEvery), o.Entries)
	}
	if o.AddrFailures >= 0 {
		b.addrs = newBuckets[netip.Prefix](LimitAddr, orDefault(o.AddrFailures, DefaultAddrFailures), orDefaultD(o.AddrEvery, DefaultAddrEvery), o.Entries)
	}
	return b
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orDefaultD(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// admission is what admit reserved, for settle.
type admission struct {
	user    uint64
	addr    netip.Prefix
	hasUser bool
	hasAddr bool
}

// admit reserves one failure in the buckets of user (when hasUser) and of
// the address, or says why not. User names are kept as a keyed hash:
// bounded in size, and never a password typed into the name field.
func (b *brake) admit(ctx context.Context, now time.Time, scheme, user string, hasUser bool, addr netip.Prefix) (admission, *ThrottledError) {
	var adm admission
	if hasUser && b.users != nil {
		k := maphash.String(b.seed, user)
		if terr, first := b.users.admit(now, k); terr != nil {
			if first {
				// The name is not logged: it may be a password typed
				// into the name field. The address is not a secret.
				b.refused(ctx, scheme, terr, addr)
			}
			return adm, terr
		}
		adm.user, adm.hasUser = k, true
	}
	if addr.IsValid() && b.addrs != nil {
		if terr, first := b.addrs.admit(now, addr); terr != nil {
			if first {
				b.refused(ctx, scheme, terr, addr)
			}
			if adm.hasUser {
				b.users.settle(now, adm.user, false)
			}
			return admission{}, terr
		}
		adm.addr, adm.hasAddr = addr, true
	}
	return adm, nil
}

func (b *brake) refused(ctx context.Context, scheme string, terr *ThrottledError, addr netip.Prefix) {
	client := ""
	if addr.IsValid() {
		client = addr.String()
	}
	b.log.LogAttrs(ctx, slog.LevelWarn, "authn: sign-ins refused",
		slog.String("scheme", scheme), slog.String("limit", terr.Limit),
		slog.String("client", client), slog.Duration("retryAfter", terr.RetryAfter))
}

// settle ends an admission: a failure spends the token it reserved, a
// success leaves it.
func (b *brake) settle(now time.Time, adm admission, failed bool) {
	if adm.hasUser {
		b.users.settle(now, adm.user, failed)
	}
	if adm.hasAddr {
		b.addrs.settle(now, adm.addr, failed)
	}
}

// clientPrefix is the bucket of a request's remote address ("ip:port"):
// the address itself, or its /64 for IPv6, where one client commonly holds
// the whole /64. An address that does not parse (none, or a test's pipe)
// has no bucket.
func clientPrefix(remote string) netip.Prefix {
	if remote == "" {
		return netip.Prefix{} // without the parse error's allocation
	}
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap().WithZone("")
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// buckets is a bounded table of token buckets, one per key. A bucket
// counts the checks in flight against it, so that concurrent attempts
// cannot all pass on its last token.
type buckets[K comparable] struct {
	name  string
	limit rate.Limit
	burst int
	max   int

	mu        sync.Mutex
	m         map[K]*bucket
	lastSweep time.Time
	full      bool // refusing for a full table; logged once per episode
}

type bucket struct {
	lim      *rate.Limiter
	inflight int
	refusing bool // the refusal was logged; cleared on the next admission
}

func newBuckets[K comparable](name string, burst int, every time.Duration, max int) *buckets[K] {
	return &buckets[K]{name: name, limit: rate.Every(every), burst: burst, max: max, m: make(map[K]*bucket)}
}

// admit reserves a token of k's bucket. On refusal, first says whether
// this is the first refusal of an episode (to be logged).
func (t *buckets[K]) admit(now time.Time, k K) (terr *ThrottledError, first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.m[k]
	if b == nil {
		if len(t.m) >= t.max && !t.sweep(now) {
			first, t.full = !t.full, true
			return &ThrottledError{Limit: limitTable, RetryAfter: durationOf(t.limit, 1)}, first
		}
		t.full = false
		b = &bucket{lim: rate.NewLimiter(t.limit, t.burst)}
		t.m[k] = b
	}
	if short := float64(b.inflight) + 1 - b.lim.TokensAt(now); short > 0 {
		first, b.refusing = !b.refusing, true
		return &ThrottledError{Limit: t.name, RetryAfter: durationOf(t.limit, short)}, first
	}
	b.inflight++
	b.refusing = false
	return nil, false
}

func (t *buckets[K]) settle(now time.Time, k K, failed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.m[k]
	if b == nil {
		return // cannot happen: a bucket in use is never swept
	}
	b.inflight--
	if failed {
		b.lim.AllowN(now, 1) // admit saw to it that the token is there
	}
}

// sweep drops the buckets that are idle and full again (as good as new),
// at most once a second so that a full table costs one scan a second,
// and reports whether there is room now.
func (t *buckets[K]) sweep(now time.Time) bool {
	if now.Sub(t.lastSweep) < time.Second && !t.lastSweep.IsZero() {
		return false
	}
	t.lastSweep = now
	for k, b := range t.m {
		if b.inflight == 0 && b.lim.TokensAt(now) >= float64(t.burst) {
			delete(t.m, k)
		}
	}
	return len(t.m) < t.max
}

// len is the number of tracked keys.
func (t *buckets[K]) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// durationOf is how long the limit takes to refill tokens.
func durationOf(l rate.Limit, tokens float64) time.Duration {
	return time.Duration(tokens / float64(l) * float64(time.Second))
}
