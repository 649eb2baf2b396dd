package authn

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

// MaxPasswordLen is bcrypt's input limit in bytes. Longer passwords are
// refused rather than silently truncated, so that two passwords sharing
// their first 72 bytes never count as the same password.
const MaxPasswordLen = 72

// Errors of HashPassword. Their text names no part of the password.
var (
	ErrPasswordTooLong = errors.New("authn: a password can be at most 72 bytes")
	ErrPasswordEmpty   = errors.New("authn: the password is empty")
)

// HashPassword returns the bcrypt hash of pw at bcrypt.DefaultCost, the form
// User.spec.password stores.
func HashPassword(pw string) (string, error) {
	return HashPasswordCost(pw, bcrypt.DefaultCost)
}

// HashPasswordCost is HashPassword at a chosen bcrypt cost (tests use
// bcrypt.MinCost to stay fast).
func HashPasswordCost(pw string, cost int) (string, error) {
	switch {
	case pw == "":
		return "", ErrPasswordEmpty
	case len(pw) > MaxPasswordLen:
		return "", ErrPasswordTooLong
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return "", fmt.Errorf("authn: hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword reports whether pw matches the bcrypt hash. An empty or
// malformed hash, or a password HashPassword would refuse, never matches.
func CheckPassword(hash, pw string) bool {
	if hash == "" || pw == "" || len(pw) > MaxPasswordLen {
		return false
	}
	// CompareHashAndPassword compares the derived hashes in constant time.
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}
