package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultLogRetry is the default Options.LogRetry.
const DefaultLogRetry = time.Second

// ErrUnavailable: the store cannot make writes durable now (HTTP 507 when
// its disk is full, else 503); *UnavailableError matches it.
var ErrUnavailable = errors.New("store unavailable: writes are refused")

// UnavailableError is a write refused because the write-ahead log failed
// (a full disk, a failing fsync): the write was not stored. The store
// checks every RetryAfter whether it can write again and then resumes by
// itself.
type UnavailableError struct {
	Err        error // the log's failure, for the server log
	NoSpace    bool  // the disk is full (ENOSPC or EDQUOT)
	Cluster    bool  // the etcd cluster is unreachable or has no quorum
	Since      time.Time
	RetryAfter time.Duration
}

// Error names the cause without file names: it reaches clients.
func (e *UnavailableError) Error() string {
	if e.Cluster {
		return fmt.Sprintf("store: writes are refused since %s: the etcd cluster is unreachable or has no quorum", e.Since.UTC().Format(time.RFC3339))
	}
	cause := "write-ahead log failed"
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		cause += ": " + errno.Error()
	}
	return fmt.Sprintf("store: writes are refused since %s: %s", e.Since.UTC().Format(time.RFC3339), cause)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// RetryAfterSeconds is RetryAfter in whole seconds, at least 1 (the
// Retry-After header's unit).
func (e *UnavailableError) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// health is whether the store takes writes. Once err is set (ch closed)
// every write is refused: until restart if fatal (an apply failed: a
// bug), else until a probe finds the log writable again (probed) and the
// committer swaps in a fresh health.
type health struct {
	ch     chan struct{} // closed once err is set
	err    error
	fatal  bool
	probed atomic.Bool
}

func newHealth() *health { return &health{ch: make(chan struct{})} }

// Health returns nil while the store takes writes, else why it refuses
// them (an *UnavailableError while its log fails): a server is not ready
// then.
func (s *Store) Health() error { return s.failure() }

// fail makes err the store's failure (unless one is set already) and
// returns the one set. The committer then aborts its open batch. Only the
// syncer calls it. A log failure starts probing the log.
func (s *Store) fail(err error, fatal bool) error {
	h := s.health.Load()
	if s.failure() == nil {
		h.err, h.fatal = err, fatal
		close(h.ch) // publishes err to every receiver
		if !fatal && s.backend != nil {
			s.probes.Add(1)
			go s.probe(h)
		}
	}
	return h.err
}

// logFailed returns the error writers get while the log fails with err.
func (s *Store) logFailed(err error) error {
	return &UnavailableError{Err: err, NoSpace: errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT),
		Since: s.opts.Now(), RetryAfter: s.opts.LogRetry}
}

// failure returns the store's failure, or nil.
func (s *Store) failure() error {
	h := s.health.Load()
	select {
	case <-h.ch:
		return h.err
	default:
		return nil
	}
}

// probe checks every Options.LogRetry whether the failed log h reports
// can write again (the log repairs itself and writes a scratch file),
// then lets the committer resume writes: it sends a write of nothing,
// which finds the store failed and h probed.
func (s *Store) probe(h *health) {
	defer s.probes.Done()
	t := time.NewTicker(s.opts.LogRetry)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if err := s.backend.Probe(); err != nil {
			s.log.Warn("write-ahead log still failing; writes stay refused", "err", err)
			continue
		}
		h.probed.Store(true)
		if err := s.submit(context.Background(), &op{apply: func(*batch) error { return nil }}); err != nil {
			s.log.Warn("write-ahead log: resuming writes", "err", err)
		}
		return
	}
}

// resume swaps in a fresh health once a probe found the failed log
// writable: writes are taken again. Only the committer calls it, with no
// batch open; it waits for the syncer to finish rolling back the failed
// batches. It reports whether writes resume.
func (s *Store) resume() bool {
	h := s.health.Load()
	if h.fatal || !h.probed.Load() {
		return false
	}
	s.inflight.Wait()
	s.health.Store(newHealth())
	s.log.Info("write-ahead log writable again; writes resume")
	return true
}
