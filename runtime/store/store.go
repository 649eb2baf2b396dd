package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/durable"
	"github.com/svcrun/svc/runtime/store/internal/durable/etcd"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/wal"
	"github.com/svcrun/svc/runtime/watch"
)

// Options configure a Store.
type Options struct {
	// Dir is the data directory. Empty means a memory-only store that
	// persists nothing (tests and throw-away servers).
	Dir string
	// SnapshotBytes is the WAL size after which a snapshot is taken and
	// the log truncated, or the newest snapshot's size if that is larger.
	// Default 64 MiB.
	SnapshotBytes int64
	// SegmentBytes is the WAL segment size. Default 64 MiB.
	SegmentBytes int64
	// MaxIndexKeys is how many keys one object may put into one index
	// (labels, or a multi-valued field such as spec.tags); a write beyond
	// it fails with an *object.InvalidError naming the field (HTTP 400).
	// It bounds the work and memory one object costs every index write
	// and rebuild. Default DefaultMaxIndexKeys.
	MaxIndexKeys int
	// LogRetry is how often a store whose write-ahead log failed (a full
	// disk, a failing fsync) checks whether it can write again; writes are
	// refused meanwhile (*UnavailableError, HTTP 507 or 503 with this as
	// Retry-After). Default DefaultLogRetry.
	LogRetry time.Duration
	// WALFS is the file system the write-ahead log writes through; nil
	// means the operating system's. Tests inject disk faults with it
	// (runtime/store/wal/waltest).
	WALFS wal.FS
	// WatchBuffer is how many events a watcher may fall behind before it is
	// dropped. Default 1024.
	WatchBuffer int
	Logger      *slog.Logger
	// Etcd, if set, makes the store a replica of objects kept in an etcd
	// cluster (shared.go); Dir is then unused.
	Etcd *EtcdOptions
	// Now is the clock; default time.Now.
	Now func() time.Time

	cooling time.Duration // how long a tree read by no one stays in views; tests shorten it
	gather  time.Duration // how long a small batch waits for writers (gatherDelay); tests lengthen it
}

// DefaultMaxIndexKeys is the default Options.MaxIndexKeys: far above the
// tags or categories a real object carries, far below what makes one
// write of it costly.
const DefaultMaxIndexKeys = 1000

// maxBatch bounds how many writes share one memdb transaction.
const maxBatch = 512

// A small batch waits for the writers of the last one (see gather): for up
// to gatherTarget of them, at most gatherDelay, under an fsync here.
const (
	gatherTarget = 16
	gatherDelay  = 300 * time.Microsecond
)

// Store keeps every object of every model in memory, indexed, and makes
// each acknowledged write durable. See doc.go for the design.
type Store struct {
	opts Options
	log  *slog.Logger
	// backend makes writes durable (internal/durable); nil for a
	// memory-only store.
	backend durable.Backend
	// shared is the etcd backend of a replica (shared.go); nil otherwise.
	shared *etcd.Backend
	// rev is the last revision applied (Revision); revSig wakes waiters.
	rev    atomic.Int64
	revSig signal
	// feedMu: the feed applies under its read lock; Register holds it
	// while it builds a model's indexes from the raw table, which must not
	// change meanwhile.
	feedMu     sync.RWMutex
	feedErr    atomic.Pointer[error]
	writeErr   atomic.Pointer[error]
	feedCancel context.CancelFunc
	feedDone   chan struct{}
	replicaID  string // names this replica in leader elections
	// Tests pause the feed (PauseFeedForTest): feedHold set stops it,
	// watchCancel ends its watch, feedHeld says it stopped.
	feedHold    atomic.Pointer[chan struct{}]
	watchCancel atomic.Pointer[context.CancelFunc]
	feedHeld    chan struct{}

	tablesMu sync.Mutex                        // serialises changes to tables
	tables   atomic.Pointer[map[string]*table] // copy-on-write; readers load

	ops chan *op
	seq uint64 // the last batch's number; only the committer touches it
	// lastBatch (the size of the last batch handed off) and pending (a
	// control op that arrived while a batch gathered) are the committer's.
	lastBatch int
	pending   *op
	synced    chan *batch   // the batch handed off to the syncer (unbuffered: one at a time)
	idle      chan struct{} // the syncer waits for a batch (capacity 1)
	// health says whether writes are refused (health.go); swapped for a
	// fresh one when writes resume after a log failure.
	health atomic.Pointer[health]
	probes sync.WaitGroup // the goroutine probing a failed log
	// appliedOps counts the writes applied, durable or not, for tests
	// that stop the log to look at the store in between.
	appliedOps atomic.Uint64
	inflight   sync.WaitGroup
	stop       chan struct{}
	stopped    chan struct{}
	closed     atomic.Bool
	started    atomic.Bool

	metrics *storeMetrics // metrics.go

	beforeLog atomic.Pointer[func()] // tests: runs before each log write
	failApply atomic.Pointer[error]  // tests: the error the next apply fails with
}

// table holds one model's data. Its state is swapped whole, so a reader
// sees a consistent model, db and phase.
type table struct {
	key   string
	state atomic.Pointer[tableState]
}

type phase int

const (
	phaseRaw      phase = iota // data kept, no model registered
	phaseBuilding              // model registered, indexes being built
	phaseReady
)

type tableState struct {
	model *model.Model // nil when raw
	db    *memdb.MemDB
	phase phase
	hub   *watch.Hub[*Record] // nil when raw; closed on unregister
	// byName mirrors the name index for point reads: a hash lookup costs a
	// fraction of a memdb transaction plus radix walk. The committer
	// updates it after each commit, before acknowledging the writes.
	byName *names
	nextID uint32 // the id of the next object created; the committer's
	// idx holds the committer's trees (none when raw), and db with them
	// every applied batch, durable or not. mu is held by the committer
	// while it has a batch open on the table. Readers get an immutable copy
	// of both (of the hot trees) from current(), taken only when a commit
	// happened since the last copy: every copy makes the next writes copy
	// the nodes they touch.
	mu      sync.Mutex
	idx     index.Set // the committer's trees and postings; under mu
	applied uint64    // the last batch applied to db and idx; under mu
	// durable is the last batch of this table that is in the log (and
	// published); a view is current when its seq reaches it.
	durable atomic.Uint64
	view    atomic.Pointer[index.View] // the newest copy handed out
	// hot holds the trees views copy (see index.TreeBit); asked, those readers
	// asked for since cooled, when copyView last cooled hot (under mu).
	hot     atomic.Uint64
	asked   atomic.Uint64
	cooled  time.Time
	cooling time.Duration
	// wantView asks the committer to copy the state it has applied when
	// it hands off its open (or next) batch, for a reader that found db and
	// idx ahead of the log; published wakes such readers.
	wantView  atomic.Bool
	published signal
	// reserved: Reserve marked the model; Register has not started.
	reserved bool
}

// Open loads the store (Load) and starts it (Start): for tests and
// one-shot tools, whose store lives as long as they do.
func Open(opts Options) (*Store, error) {
	s, err := Load(opts)
	if err != nil {
		return nil, err
	}
	s.Start()
	return s, nil
}

// Load opens (or creates) the store in opts.Dir: it takes the directory
// lock, loads the newest snapshot and replays the write-ahead log. Objects
// are restored by name only; Register builds a model's indexes. It starts
// no goroutine that outlives it: the store takes writes once its owner
// calls Start, and Close releases it either way.
func Load(opts Options) (*Store, error) {
	if opts.SnapshotBytes <= 0 {
		opts.SnapshotBytes = 64 << 20
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = 64 << 20
	}
	if opts.LogRetry <= 0 {
		opts.LogRetry = DefaultLogRetry
	}
	if opts.MaxIndexKeys <= 0 {
		opts.MaxIndexKeys = DefaultMaxIndexKeys
	}
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = 1024
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.cooling <= 0 {
		opts.cooling = cooling
	}
	if opts.gather <= 0 {
		opts.gather = gatherDelay
	}
	s := &Store{
		opts:    opts,
		log:     opts.Logger,
		ops:     make(chan *op, 4*maxBatch),
		synced:  make(chan *batch),
		idle:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
		metrics: newStoreMetrics(),
	}
	s.tables.Store(&map[string]*table{})
	s.health.Store(newHealth())
	if opts.Etcd != nil {
		if err := s.openShared(); err != nil {
			if s.shared != nil {
				s.shared.Close()
			}
			return nil, err
		}
	} else if opts.Dir != "" {
		if err := s.recover(); err != nil {
			if s.backend != nil {
				s.backend.Close()
			}
			return nil, err
		}
	}
	return s, nil
}

// Start starts the committer and the syncer, which run until Close. Load
// only loads, so the owner (runtime/server) decides when the store's
// goroutines start; until Start, every write and registration fails with
// an error saying so. Calling it again does nothing.
func (s *Store) Start() {
	if s.closed.Load() || !s.started.CompareAndSwap(false, true) {
		return
	}
	syncDone := make(chan struct{})
	go s.syncer(syncDone)
	go s.run(syncDone)
	if s.shared != nil {
		ctx, cancel := context.WithCancel(context.Background())
		s.feedCancel, s.feedDone, s.feedHeld = cancel, make(chan struct{}), make(chan struct{})
		go s.feed(ctx)
	}
}

// errNotStarted: a write before Start would wait for a committer that
// does not run.
var errNotStarted = errors.New("store: not started (Load, then Start)")

// Close stops the committer after the queued writes, waits for a running
// snapshot, and closes the log. Watchers are dropped with watch.ErrClosed.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(s.stop)
	if s.feedCancel != nil {
		s.feedCancel()
		<-s.feedDone
	}
	if s.started.Load() {
		<-s.stopped
	}
	if s.backend != nil {
		s.backend.Wait()
	}
	s.probes.Wait()
	for _, t := range *s.tables.Load() {
		if h := t.state.Load().hub; h != nil {
			h.Close()
		}
	}
	if s.shared != nil {
		return s.shared.Close()
	}
	if s.backend != nil {
		return s.backend.Close()
	}
	return nil
}

// tableFor returns the table for key, creating an empty raw one.
func (s *Store) tableFor(key string) *table {
	if t, ok := (*s.tables.Load())[key]; ok {
		return t
	}
	s.tablesMu.Lock()
	defer s.tablesMu.Unlock()
	old := *s.tables.Load()
	if t, ok := old[key]; ok {
		return t
	}
	t := &table{key: key}
	t.state.Store(&tableState{db: index.NewDB()})
	next := make(map[string]*table, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[key] = t
	s.tables.Store(&next)
	return t
}

// ready returns the table state of m if m is registered and built.
func (s *Store) ready(m *model.Model) (*table, *tableState, error) {
	t, ok := (*s.tables.Load())[m.StorageKey()]
	if !ok {
		return nil, nil, fmt.Errorf("%s: %w", m.GVK(), ErrNotRegistered)
	}
	st := t.state.Load()
	switch {
	case st.model != m:
		return nil, nil, fmt.Errorf("%s: %w", m.GVK(), ErrNotRegistered)
	case st.phase == phaseBuilding:
		return nil, nil, fmt.Errorf("%s: %w", m.GVK(), ErrNotReady)
	}
	return t, st, nil
}

// Ready reports whether m is registered and its indexes are built.
func (s *Store) Ready(m *model.Model) bool {
	_, _, err := s.ready(m)
	return err == nil
}

// submit hands an op to the committer and waits for its outcome. Waiting
// ignores ctx once the op is queued: the write may already be in the log,
// and its outcome must be reported truthfully.
func (s *Store) submit(ctx context.Context, o *op) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.started.Load() {
		return errNotStarted
	}
	o.done = make(chan error, 1)
	select {
	case s.ops <- o:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stop:
		return ErrClosed
	}
	return <-o.done
}

// signal wakes every goroutine waiting on it. Its zero value is ready.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next broadcast. Take it before
// checking the condition waited for, so no broadcast is missed.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) broadcast() {
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}
