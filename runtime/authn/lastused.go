package authn

import (
	"context"
	"sync"
	"time"

	"github.com/svcrun/svc/generated/core"
)

// lastUsedGap is how stale spec.lastUsed may get: a token is written at
// most once per gap, as in Halo, so that a busy client does not turn
// every request into a store write.
const lastUsedGap = time.Minute

// maxNoted bounds the memory of recently noted tokens.
const maxNoted = 10_000

// TokenUse keeps PersonalAccessToken.spec.lastUsed roughly current: the
// guard (runtime/authz) notes each request a token signed in.
type TokenUse struct {
	tokens *core.PersonalAccessTokenClient
	now    func() time.Time

	mu    sync.Mutex
	noted map[string]time.Time // token name → when last written
}

// NewTokenUse returns a TokenUse that writes through tokens.
func NewTokenUse(tokens *core.PersonalAccessTokenClient) *TokenUse {
	return &TokenUse{tokens: tokens, now: time.Now, noted: map[string]time.Time{}}
}

// Note records that the named token was just used. It is best effort: a
// failed or conflicting write (the owner revoking it meanwhile) is
// dropped, and the next use a gap later tries again.
func (u *TokenUse) Note(ctx context.Context, name string) {
	now := u.now()
	u.mu.Lock()
	if last, ok := u.noted[name]; ok && now.Sub(last) < lastUsedGap {
		u.mu.Unlock()
		return
	}
	if len(u.noted) >= maxNoted {
		clear(u.noted)
	}
	u.noted[name] = now
	u.mu.Unlock()

	t, err := u.tokens.Get(ctx, name)
	if err != nil || (t.Spec.LastUsed != nil && now.Sub(*t.Spec.LastUsed) < lastUsedGap) {
		return
	}
	stamp := now.UTC()
	t.Spec.LastUsed = &stamp
	_, _ = u.tokens.Update(ctx, t)
}
