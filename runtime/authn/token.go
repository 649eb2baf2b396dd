package authn

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
)

// TokenPrefix starts every personal access token, as in Halo, so that a
// leaked token is easy to recognise (secret scanners) and a bearer value
// of another kind is refused without a store lookup.
const TokenPrefix = "pat_"

// LegacyTokenPrefix started the tokens of earlier versions of svc, which
// still work.
const LegacyTokenPrefix = "svc_pat_"

// isToken reports whether a bearer value may be a personal access token:
// a prefix, something after it, and no more than a token's length.
func isToken(s string) bool {
	if len(s) > maxBearerLen {
		return false
	}
	for _, p := range []string{TokenPrefix, LegacyTokenPrefix} {
		if len(s) > len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// tokenBytes is the entropy of a token: 256 bits.
const tokenBytes = 32

// NewToken returns a fresh personal access token, to be shown to its owner
// once, and the hash to store in PersonalAccessToken.spec.tokenHash.
func NewToken() (token, hash string, err error) {
	var b [tokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("authn: token randomness: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token), nil
}

// HashToken returns the hex SHA-256 of the whole token. A fast hash is right
// here, unlike for passwords: a token carries 256 random bits, so there is
// nothing to brute-force and a slow hash would only slow every request; the
// hash must also be deterministic, since it is the key the token is looked
// up by.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewTokenID returns a random UUID (version 4), as Halo's token ids
// (spec.tokenId) are.
func NewTokenID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("authn: token id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}
