package authn

import (
	"errors"
	"sync/atomic"
)

// Sign-in methods and results as SignIns reports them.
const (
	MethodBasic  = "basic"
	MethodBearer = "bearer"
	// MethodOther is an Authorization header of no supported scheme.
	MethodOther = "other"

	ResultSuccess = "success"
	ResultFailure = "failure"
	// ResultThrottled is a sign-in the brake refused unchecked.
	ResultThrottled = "throttled"
	// ResultError is a sign-in that could not be checked (the store failed).
	ResultError = "error"
)

// Indexes of the counters.
const (
	basicIdx = iota
	bearerIdx
	otherIdx
)

const (
	successIdx = iota
	failureIdx
	throttledIdx
	errorIdx
)

var (
	methods = [...]string{basicIdx: MethodBasic, bearerIdx: MethodBearer, otherIdx: MethodOther}
	results = [...]string{successIdx: ResultSuccess, failureIdx: ResultFailure, throttledIdx: ResultThrottled, errorIdx: ResultError}
	// limits are the brake's limits (ThrottledError.Limit) and their
	// metric labels.
	limits = [...]struct{ limit, label string }{{LimitUser, "user"}, {LimitAddr, "address"}, {limitTable, "table"}}
)

// signInStats counts sign-ins for operators (runtime/metrics): one atomic
// add per request that carries credentials.
type signInStats struct {
	n         [len(methods)][len(results)]atomic.Uint64
	throttled [len(limits)]atomic.Uint64
}

func (s *signInStats) count(method int, err error) {
	var terr *ThrottledError
	switch {
	case err == nil:
		s.n[method][successIdx].Add(1)
	case errors.Is(err, ErrUnauthorized):
		s.n[method][failureIdx].Add(1)
	case errors.As(err, &terr):
		s.n[method][throttledIdx].Add(1)
		for i, l := range limits {
			if l.limit == terr.Limit {
				s.throttled[i].Add(1)
			}
		}
	default:
		s.n[method][errorIdx].Add(1)
	}
}

// SignInCount is the number of sign-ins of one method with one result.
type SignInCount struct {
	Method, Result string
	Count          uint64
}

// SignIns returns how many requests with credentials had each outcome
// since the Authenticator was made, every method and result included.
// A request without credentials (anonymous) is not a sign-in.
func (a *Authenticator) SignIns() []SignInCount {
	out := make([]SignInCount, 0, len(methods)*len(results))
	for i, m := range methods {
		for j, r := range results {
			out = append(out, SignInCount{m, r, a.stats.n[i][j].Load()})
		}
	}
	return out
}

// ThrottledCount is the number of sign-ins one limit of the brake refused.
type ThrottledCount struct {
	// Limit is "user", "address" or "table" (too many names and
	// addresses tracked at once).
	Limit string
	Count uint64
}

// Throttled returns how many sign-ins the brake refused, by limit.
func (a *Authenticator) Throttled() []ThrottledCount {
	out := make([]ThrottledCount, len(limits))
	for i, l := range limits {
		out[i] = ThrottledCount{l.label, a.stats.throttled[i].Load()}
	}
	return out
}
