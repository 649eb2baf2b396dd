// Package etcd is the store's shared backend: several replicas keep their
// objects in one etcd cluster, which orders every write, and each replica
// keeps the whole state in memory as a cache fed by etcd's watch
// (docs/deployment.md).
//
// Unlike the disk backend, which commits what the one store decided,
// etcd decides: a write is a transaction whose compares are the write's
// preconditions (the name is free, the object is still at the revision
// the writer read, a unique value is unclaimed), so two replicas racing
// for the same object or value get exactly one success. The store then
// waits until its own feed has applied the write's revision before it
// answers, so a replica always reads its own writes.
//
// Layout under the prefix (default /svc/):
//
//	o/<table>/<name>    an object: the store's framed record
//	u/<table>/<index>/<value>   a unique value's claim: the holder's name
//	g/<table>           the last object removed for good from a table, put
//	                    in the removal's transaction so every replica's
//	                    watch event carries the same final state
//	lock/...            leader elections (controllers)
//	claimsync/<table>   a migrated table whose unique claims are still to write
package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// Options configure a connection to an etcd cluster.
type Options struct {
	// Endpoints are host:port or http(s)://host:port.
	Endpoints []string
	// Prefix is the key prefix every key lives under; default "/svc/".
	Prefix string
	// TLS files; any set turns TLS on.
	CAFile, CertFile, KeyFile string
	// Username and Password, if set, authenticate to etcd.
	Username, Password string
	// DialTimeout bounds the first connection; default 5s.
	DialTimeout time.Duration
	// RequestTimeout bounds one write; default 5s.
	RequestTimeout time.Duration
	// MaxValueBytes is the largest value a write may put; default
	// DefaultMaxValueBytes, which fits etcd's default --max-request-bytes
	// (1.5 MiB) with room for the transaction's other operations.
	MaxValueBytes int
	Logger        *slog.Logger
}

// DefaultMaxValueBytes leaves 64 KiB of etcd's default 1.5 MiB request
// limit for keys, claims and the removal's final state.
const DefaultMaxValueBytes = 1536*1024 - 64*1024

// PageSize is how many keys one range request of a load reads.
const PageSize = 1000

// Backend is a connection to the cluster holding one store.
type Backend struct {
	cli    *clientv3.Client
	prefix string
	opts   Options
	log    *slog.Logger
	// group commit (Write): writes queue here, and one loop (group) sends
	// what queued while the last transactions were in flight as one.
	queue   chan *queued
	send    func([]*queued) // sendGroup; tests replace it
	stop    chan struct{}
	stopped chan struct{}
}

// Open connects to the cluster and checks that it answers.
func Open(opts Options) (*Backend, error) {
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	if opts.Prefix == "" {
		opts.Prefix = "/svc/"
	}
	if !strings.HasSuffix(opts.Prefix, "/") {
		opts.Prefix += "/"
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 5 * time.Second
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 5 * time.Second
	}
	if opts.MaxValueBytes <= 0 {
		opts.MaxValueBytes = DefaultMaxValueBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg := clientv3.Config{
		Endpoints:   opts.Endpoints,
		DialTimeout: opts.DialTimeout,
		Username:    opts.Username,
		Password:    opts.Password,
		// Keepalives find a dead member so the client moves to another.
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 3 * time.Second,
		// Our values are at most MaxValueBytes; leave room for the rest.
		MaxCallSendMsgSize: opts.MaxValueBytes + 256*1024,
		// The client's own logger would write zap lines of its retries;
		// failures reach our log through the errors they return.
		Logger: zap.NewNop(),
	}
	if opts.CAFile != "" || opts.CertFile != "" || opts.KeyFile != "" {
		info := transport.TLSInfo{TrustedCAFile: opts.CAFile, CertFile: opts.CertFile, KeyFile: opts.KeyFile}
		tc, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd: TLS: %w", err)
		}
		tc.MinVersion = tls.VersionTLS12
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd: connect to %v: %w", opts.Endpoints, err)
	}
	b := &Backend{cli: cli, prefix: opts.Prefix, opts: opts, log: opts.Logger,
		queue: make(chan *queued, 1024), stop: make(chan struct{}), stopped: make(chan struct{})}
	b.send = b.sendGroup
	ctx, cancel := context.WithTimeout(context.Background(), opts.DialTimeout)
	defer cancel()
	if _, err := b.Revision(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd: %v does not answer: %w", opts.Endpoints, err)
	}
	go b.group()
	return b, nil
}

// Client is the connection, for leader elections and tools.
func (b *Backend) Client() *clientv3.Client { return b.cli }

// Prefix is the key prefix of this store.
func (b *Backend) Prefix() string { return b.prefix }

// MaxValueBytes is the largest value a write may put.
func (b *Backend) MaxValueBytes() int { return b.opts.MaxValueBytes }

// Close stops the group commit and closes the connection.
func (b *Backend) Close() error {
	close(b.stop)
	<-b.stopped
	return b.cli.Close()
}

// ObjectKey is the key of an object.
func (b *Backend) ObjectKey(table, name string) string {
	return b.prefix + "o/" + table + "/" + name
}

// ClaimKey is the key claiming a unique index value in a table.
func (b *Backend) ClaimKey(table, index, value string) string {
	return b.prefix + "u/" + table + "/" + index + "/" + value
}

func (b *Backend) goneKey(table string) string { return b.prefix + "g/" + table }

// Revision is the cluster's current revision, read through a quorum (a
// linearizable count of one key, which costs etcd almost nothing).
func (b *Backend) Revision(ctx context.Context) (int64, error) {
	resp, err := b.cli.Get(ctx, b.prefix+"rev", clientv3.WithCountOnly())
	if err != nil {
		return 0, unavailable(err)
	}
	return resp.Header.Revision, nil
}

// Entry is one stored object as loaded or watched.
type Entry struct {
	Value []byte
	// ModRevision is the revision of the object's last write.
	ModRevision int64
}

// Load reads every object at one revision, a page at a time, and returns
// that revision; the feed then watches from the next one.
func (b *Backend) Load(ctx context.Context, apply func(Entry) error) (int64, error) {
	start := b.prefix + "o/"
	end := clientv3.GetPrefixRangeEnd(start)
	var rev int64
	key := start
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(PageSize)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := b.cli.Get(ctx, key, opts...)
		if err != nil {
			return 0, fmt.Errorf("etcd: load %s at revision %d: %w", key, rev, unavailable(err))
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if err := apply(Entry{Value: kv.Value, ModRevision: kv.ModRevision}); err != nil {
				return 0, fmt.Errorf("etcd: load %s: %w", kv.Key, err)
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Event is one change to an object.
type Event struct {
	// Rev is the revision of the change (its transaction's).
	Rev int64
	// Value is the object as written; nil for a removal.
	Value []byte
	// Table and Name say which object a removal removed (from its key:
	// the watch asks for no previous values, which would cost etcd a
	// read per event and per watcher).
	Table, Name string
	// Final is the removal's final state, from the table's gone key put in
	// the same transaction; nil if the key was removed by other means.
	Final []byte
}

// CompactedError says the feed's revision was compacted away: the
// replica must load again.
type CompactedError struct{ Rev int64 }

func (e *CompactedError) Error() string {
	return fmt.Sprintf("etcd: revision compacted (compact revision %d): reload", e.Rev)
}

// Watch delivers every change to objects after revision from, in
// revision order, until ctx ends or the watch fails: one call per answer
// of etcd's (many revisions when writes come fast), with rev the revision
// everything up to which has been delivered. A progress notification
// calls fn with no events. A compacted start ends it with a
// *CompactedError.
func (b *Backend) Watch(ctx context.Context, from int64, fn func(rev int64, evs []Event) error) error {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	objects, gone := b.prefix+"o/", b.prefix+"g/"
	// Only the keys from g/ to o/ (removals' final states, the elections'
	// locks, objects): a create's or update's unique claims (u/) would
	// double what etcd encodes and every replica decodes, for nothing.
	ch := b.cli.Watch(ctx, gone, clientv3.WithRange(clientv3.GetPrefixRangeEnd(objects)),
		clientv3.WithRev(from+1), clientv3.WithProgressNotify())
	next := from + 1
	for resp := range ch {
		if resp.CompactRevision != 0 {
			return &CompactedError{Rev: resp.CompactRevision}
		}
		if err := resp.Err(); err != nil {
			return fmt.Errorf("etcd: watch from revision %d: %w", next, err)
		}
		if len(resp.Events) == 0 && !resp.IsProgressNotify() {
			// The created answer: its header says nothing of what this
			// watch has delivered.
			continue
		}
		var evs []Event
		// The gone key of a removal is put before it in one transaction,
		// so it is seen first: by table, the latest.
		var finals map[string][]byte
		rev := resp.Header.Revision
		for _, ev := range resp.Events {
			key := string(ev.Kv.Key)
			switch {
			case strings.HasPrefix(key, gone) && ev.Type == mvccpb.PUT:
				if finals == nil {
					finals = map[string][]byte{}
				}
				finals[key[len(gone):]] = ev.Kv.Value
			case strings.HasPrefix(key, objects):
				e := Event{Rev: ev.Kv.ModRevision}
				if ev.Type == mvccpb.PUT {
					e.Value = ev.Kv.Value
				} else {
					suffix := key[len(objects):]
					e.Table = tableOf(suffix)
					e.Name = suffix[len(e.Table)+1:]
					e.Final = finals[e.Table]
				}
				evs = append(evs, e)
			}
		}
		if len(resp.Events) > 0 {
			// Events are complete up to their last revision; the header
			// may be ahead of them.
			rev = resp.Events[len(resp.Events)-1].Kv.ModRevision
		}
		if err := fn(rev, evs); err != nil {
			return err
		}
		next = rev + 1
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("etcd: watch from revision %d closed", next)
}

// tableOf is the table of an object key's suffix <group>/<plural>/<name>
// or <plural>/<name>: everything before the last slash. Names cannot
// contain a slash (metadata.name is a DNS subdomain).
func tableOf(suffix string) string {
	if i := strings.LastIndexByte(suffix, '/'); i >= 0 {
		return suffix[:i]
	}
	return suffix
}

// Write is one object's write, with its preconditions.
type Write struct {
	Table, Name string
	// ExpectRev is the object's mod revision the write was decided
	// against; 0: the name must be free (a create).
	ExpectRev int64
	// Value is the object to put; nil removes it for good, with Final its
	// final state for watchers.
	Value, Final []byte
	// Claim are unique values (ClaimKey) the object must hold after the
	// write: each must be free or already this object's. Release are
	// values it held and gives up.
	Claim, Release []string
}

// ConflictError says a write's precondition failed; the fields say which.
type ConflictError struct {
	// Current is the object as stored (nil: absent) and its mod revision.
	Current    []byte
	CurrentRev int64
	// Claim is a unique value held by Holder, another object.
	Claim, Holder string
	// Rev is the revision the answer was read at.
	Rev int64
}

func (e *ConflictError) Error() string {
	if e.Holder != "" {
		return fmt.Sprintf("etcd: %s is held by %s", e.Claim, e.Holder)
	}
	return fmt.Sprintf("etcd: object changed (now at revision %d)", e.CurrentRev)
}

// TooLargeError says a value exceeds MaxValueBytes.
type TooLargeError struct{ Size, Max int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("etcd: the object is %d bytes stored, more than %d", e.Size, e.Max)
}

// UnavailableError says the cluster could not be reached or has no
// quorum: the write may or may not have happened only if Unknown.
type UnavailableError struct {
	Err error
}

func (e *UnavailableError) Error() string { return "etcd unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var ue *UnavailableError
	if errors.As(err, &ue) || errors.Is(err, context.Canceled) {
		return err
	}
	return &UnavailableError{Err: err}
}

// Commit runs ws as one transaction: all of them or none. Write is the
// same for one write, sharing a transaction with concurrent ones. It returns the
// revision of the write, a *ConflictError naming the first failed
// precondition, a *TooLargeError, or an *UnavailableError.
func (b *Backend) Commit(ctx context.Context, ws ...Write) (int64, error) {
	return b.commit(ctx, ws, true)
}

// commit is Commit; without explain, a failed precondition is a bare
// *ConflictError (the group retries each write alone).
func (b *Backend) commit(ctx context.Context, ws []Write, explain bool) (int64, error) {
	var cmps []clientv3.Cmp
	var then, els []clientv3.Op
	size := 0
	for _, w := range ws {
		key := b.ObjectKey(w.Table, w.Name)
		if len(w.Value) > b.opts.MaxValueBytes {
			return 0, &TooLargeError{Size: len(w.Value), Max: b.opts.MaxValueBytes}
		}
		size += len(w.Value) + len(w.Final)
		if w.ExpectRev == 0 {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", w.ExpectRev))
		}
		if explain {
			els = append(els, clientv3.OpGet(key))
		}
		for _, c := range w.Claim {
			// Free, or held by this object already.
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(c), "=", 0))
			if explain {
				els = append(els, clientv3.OpGet(c))
			}
		}
		if w.Value != nil {
			then = append(then, clientv3.OpPut(key, string(w.Value)))
		} else {
			if w.Final != nil {
				then = append(then, clientv3.OpPut(b.goneKey(w.Table), string(w.Final)))
			}
			then = append(then, clientv3.OpDelete(key))
		}
		for _, c := range w.Claim {
			then = append(then, clientv3.OpPut(c, w.Name))
		}
		for _, c := range w.Release {
			then = append(then, clientv3.OpDelete(c))
		}
	}
	if size > b.opts.MaxValueBytes+64*1024 {
		return 0, &TooLargeError{Size: size, Max: b.opts.MaxValueBytes}
	}
	// A member that has lost its leader (no quorum) fails the write at
	// once rather than after the timeout.
	ctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), b.opts.RequestTimeout)
	defer cancel()
	resp, err := b.cli.Txn(ctx).If(cmps...).Then(then...).Else(els...).Commit()
	if err != nil {
		if errors.Is(err, rpctypes.ErrRequestTooLarge) || errors.Is(err, rpctypes.ErrGRPCRequestTooLarge) {
			return 0, &TooLargeError{Size: size, Max: b.opts.MaxValueBytes}
		}
		return 0, unavailable(err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	if !explain {
		return 0, &ConflictError{Rev: resp.Header.Revision}
	}
	// Which precondition failed: the Else reads answer in order.
	i := 0
	for _, w := range ws {
		r := resp.Responses[i].GetResponseRange()
		i++
		ce := &ConflictError{Rev: resp.Header.Revision}
		if len(r.Kvs) > 0 {
			ce.Current, ce.CurrentRev = r.Kvs[0].Value, r.Kvs[0].ModRevision
		}
		if ce.CurrentRev != w.ExpectRev {
			return 0, ce
		}
		for _, c := range w.Claim {
			r := resp.Responses[i].GetResponseRange()
			i++
			if len(r.Kvs) > 0 && string(r.Kvs[0].Value) != w.Name {
				ce.Claim, ce.Holder = c, string(r.Kvs[0].Value)
				return 0, ce
			}
		}
	}
	// Only claims this object already holds failed: not a conflict, but
	// a claim kept from an earlier version. Ask the caller to retry with
	// them left out (it reads them as held).
	return 0, errHeldClaims
}

// errHeldClaims: a write listed as new a claim its object already holds.
var errHeldClaims = errors.New("etcd: a claimed value is already held by the object")

// IsHeldClaims reports the error Commit returns when only claims the
// object already held failed.
func IsHeldClaims(err error) bool { return errors.Is(err, errHeldClaims) }

// Empty reports whether no object is stored under the prefix.
func (b *Backend) Empty(ctx context.Context) (bool, error) {
	resp, err := b.cli.Get(ctx, b.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return false, unavailable(err)
	}
	return resp.Count == 0, nil
}

// Copy puts objects (table, name, framed value) as they are, a
// transaction of at most batch puts at a time: for a migration into an
// empty prefix (Empty), not for a live store.
func (b *Backend) Copy(ctx context.Context, table string, names []string, values [][]byte) error {
	const batch = 64 // below etcd's default --max-txn-ops (128)
	for i := 0; i < len(names); i += batch {
		var ops []clientv3.Op
		size := 0
		for j := i; j < min(i+batch, len(names)); j++ {
			if len(values[j]) > b.opts.MaxValueBytes {
				return fmt.Errorf("etcd: %s/%s: %w", table, names[j], &TooLargeError{Size: len(values[j]), Max: b.opts.MaxValueBytes})
			}
			// A large object goes alone so a transaction stays under
			// etcd's request limit.
			if size+len(values[j]) > b.opts.MaxValueBytes && len(ops) > 0 {
				if _, err := b.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
					return unavailable(err)
				}
				ops, size = nil, 0
			}
			ops = append(ops, clientv3.OpPut(b.ObjectKey(table, names[j]), string(values[j])))
			size += len(values[j])
		}
		if _, err := b.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			return unavailable(err)
		}
	}
	return nil
}

func (b *Backend) claimSyncKey(table string) string { return b.prefix + "claimsync/" + table }

// MarkClaimSync records that table's unique claims must be written from
// its objects (after a migration) by the next replica that indexes it.
func (b *Backend) MarkClaimSync(ctx context.Context, table string) error {
	_, err := b.cli.Put(ctx, b.claimSyncKey(table), "pending")
	return unavailable(err)
}

// ClaimSyncPending reports whether MarkClaimSync is pending for table.
func (b *Backend) ClaimSyncPending(ctx context.Context, table string) (bool, error) {
	resp, err := b.cli.Get(ctx, b.claimSyncKey(table), clientv3.WithCountOnly())
	if err != nil {
		return false, unavailable(err)
	}
	return resp.Count > 0, nil
}

// SyncClaims writes each claim (key -> holder) that is absent, then
// clears table's pending mark. A claim held by another object is left
// alone and returned in conflicts. Claims go 64 to a transaction, four
// transactions at a time; a transaction that finds one of its claims
// taken is done again claim by claim.
func (b *Backend) SyncClaims(ctx context.Context, table string, claims map[string]string) (written int, conflicts []string, err error) {
	keys := make([]string, 0, len(claims))
	for k := range claims {
		keys = append(keys, k)
	}
	var mu sync.Mutex
	one := func(key string) error {
		holder := claims[key]
		resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, holder)).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return unavailable(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if resp.Succeeded {
			written++
		} else if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 && string(kvs[0].Value) != holder {
			conflicts = append(conflicts, key)
		}
		return nil
	}
	batch := func(ks []string) error {
		cmps := make([]clientv3.Cmp, len(ks))
		ops := make([]clientv3.Op, len(ks))
		for i, k := range ks {
			cmps[i] = clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
			ops[i] = clientv3.OpPut(k, claims[k])
		}
		resp, err := b.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
		if err != nil {
			return unavailable(err)
		}
		if resp.Succeeded {
			mu.Lock()
			written += len(ks)
			mu.Unlock()
			return nil
		}
		// Some are taken (an earlier sync stopped half way): read which,
		// then put the rest together, claim by claim only if that fails.
		gets := make([]clientv3.Op, len(ks))
		for i, k := range ks {
			gets[i] = clientv3.OpGet(k)
		}
		read, err := b.cli.Txn(ctx).Then(gets...).Commit()
		if err != nil {
			return unavailable(err)
		}
		var absent []string
		for i, k := range ks {
			kvs := read.Responses[i].GetResponseRange().Kvs
			switch {
			case len(kvs) == 0:
				absent = append(absent, k)
			case string(kvs[0].Value) != claims[k]:
				mu.Lock()
				conflicts = append(conflicts, k)
				mu.Unlock()
			}
		}
		if len(absent) == 0 {
			return nil
		}
		cmps, ops = cmps[:0], ops[:0]
		for _, k := range absent {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
			ops = append(ops, clientv3.OpPut(k, claims[k]))
		}
		if resp, err = b.cli.Txn(ctx).If(cmps...).Then(ops...).Commit(); err != nil {
			return unavailable(err)
		}
		if resp.Succeeded {
			mu.Lock()
			written += len(absent)
			mu.Unlock()
			return nil
		}
		for _, k := range absent {
			if err := one(k); err != nil {
				return err
			}
		}
		return nil
	}
	const per = 60 // claims per transaction, under --max-txn-ops
	work := make(chan []string)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ks := range work {
				if err := batch(ks); err != nil {
					errs <- err
					for range work {
					}
					return
				}
			}
		})
	}
	for i := 0; i < len(keys); i += per {
		work <- keys[i:min(i+per, len(keys))]
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return written, conflicts, err
	default:
	}
	_, err = b.cli.Delete(ctx, b.claimSyncKey(table))
	return written, conflicts, unavailable(err)
}

// RequestProgress asks etcd to tell the watch how far it has delivered,
// for a reader waiting for a revision no object change reached (a
// revision of another prefix, or of a reload).
func (b *Backend) RequestProgress(ctx context.Context) error {
	// The watch's stream is keyed by its context's metadata: require
	// leader, as Watch does.
	return b.cli.RequestProgress(clientv3.WithRequireLeader(ctx))
}

// Group commit. etcd's cost is mostly per transaction (a gRPC call, a
// raft entry and its fsyncs on every member, an apply, a watch
// notification), so writes that arrive while others are in flight go to
// etcd as one transaction of many writes.
//
// One transaction is in flight at a time, and a second only once
// minSecond writes wait for it: a second slot sent whatever had queued,
// often one write, and etcd spent a transaction on it. On the 2-core
// benchmark of docs/performance.md ("Replicas on etcd"), where etcd's
// members take half the CPU, waiting for 12 took transactions from 7.5
// to 10.5 writes and creates through a replica from 1,790–2,080/s to
// 2,230–2,290/s (4 rounds back to back).
const (
	maxInflight  = 2   // transactions in flight at most
	minSecond    = 12  // writes a second transaction waits for (see above)
	maxGroupOps  = 120 // operations per transaction, under etcd's default --max-txn-ops (128)
	maxGroupSize = 1 << 20
)

type queued struct {
	ctx  context.Context
	w    Write
	keys []string
	done chan result
}

type result struct {
	rev int64
	err error
}

// keys are the keys w touches: one transaction must not name a key twice.
func (b *Backend) keysOf(w Write) []string {
	keys := []string{b.ObjectKey(w.Table, w.Name)}
	if w.Value == nil && w.Final != nil {
		keys = append(keys, b.goneKey(w.Table))
	}
	keys = append(keys, w.Claim...)
	return append(keys, w.Release...)
}

// Write commits one write, grouped with concurrent ones (see Commit for
// its answers).
func (b *Backend) Write(ctx context.Context, w Write) (int64, error) {
	if len(w.Value) > b.opts.MaxValueBytes {
		return 0, &TooLargeError{Size: len(w.Value), Max: b.opts.MaxValueBytes}
	}
	q := &queued{ctx: ctx, w: w, keys: b.keysOf(w), done: make(chan result, 1)}
	select {
	case b.queue <- q:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-b.stop:
		return 0, &UnavailableError{Err: errors.New("closed")}
	}
	select {
	case r := <-q.done:
		return r.rev, r.err
	case <-b.stopped:
		// Queued as the loop stopped: never sent, unless answered just now.
		select {
		case r := <-q.done:
			return r.rev, r.err
		default:
			return 0, &UnavailableError{Err: errors.New("closed")}
		}
	}
}

// group is the next transaction being filled. Writes naming a key it
// already names wait in later, in arrival order, for the next one.
type group struct {
	qs        []*queued
	later     []*queued
	keys      map[string]bool
	ops, size int
}

// add puts q in g, or in later when it cannot share g's transaction.
func (g *group) add(q *queued) {
	n, sz := len(q.keys)+1, len(q.w.Value)+len(q.w.Final)
	fits := len(g.later) == 0 && (len(g.qs) == 0 || g.ops+n <= maxGroupOps && g.size+sz <= maxGroupSize)
	for _, k := range q.keys {
		fits = fits && !g.keys[k]
	}
	if !fits {
		g.later = append(g.later, q)
		return
	}
	if g.keys == nil {
		g.keys = map[string]bool{}
	}
	for _, k := range q.keys {
		g.keys[k] = true
	}
	g.ops, g.size = g.ops+n, g.size+sz
	g.qs = append(g.qs, q)
}

// full: nothing more joins g.
func (g *group) full() bool {
	return len(g.later) > 0 || g.ops >= maxGroupOps || g.size >= maxGroupSize
}

// take returns g's writes and starts the next group with what waited.
func (g *group) take() []*queued {
	qs, later := g.qs, g.later
	*g = group{}
	for _, q := range later {
		g.add(q)
	}
	return qs
}

// group sends what has queued as one transaction when none is in flight,
// or as a second one when it is full or holds minSecond writes.
func (b *Backend) group() {
	defer close(b.stopped)
	done := make(chan struct{}, maxInflight)
	inflight := 0
	var g group
	for {
		if len(g.qs) > 0 && inflight < maxInflight && (inflight == 0 || len(g.qs) >= minSecond || g.full()) {
			qs := g.take()
			inflight++
			go func() {
				b.send(qs)
				done <- struct{}{}
			}()
			continue
		}
		in := b.queue
		if g.full() {
			in = nil // wait for a transaction to return
		}
		select {
		case q := <-in:
			g.add(q)
		case <-done:
			inflight--
		case <-b.stop:
			for _, q := range append(g.qs, g.later...) {
				q.done <- result{err: &UnavailableError{Err: errors.New("closed")}}
			}
			for ; inflight > 0; inflight-- {
				<-done
			}
			return
		}
	}
}

// sendGroup commits a group as one transaction; if any precondition
// fails, each write is tried on its own so each gets its own answer.
func (b *Backend) sendGroup(group []*queued) {
	if len(group) == 1 {
		rev, err := b.Commit(group[0].ctx, group[0].w)
		group[0].done <- result{rev, err}
		return
	}
	ws := make([]Write, len(group))
	for i, q := range group {
		ws[i] = q.w
	}
	rev, err := b.commit(context.Background(), ws, false)
	if err == nil {
		for _, q := range group {
			q.done <- result{rev: rev}
		}
		return
	}
	var ce *ConflictError
	if !errors.As(err, &ce) && !IsHeldClaims(err) {
		for _, q := range group {
			q.done <- result{err: err}
		}
		return
	}
	var wg sync.WaitGroup
	for _, q := range group {
		wg.Go(func() {
			rev, err := b.Commit(q.ctx, q.w)
			q.done <- result{rev, err}
		})
	}
	wg.Wait()
}
