package etcd

import (
	"context"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"
)

// LeaseTTL is how long a leader that stopped renewing (a killed replica)
// keeps leadership: another replica takes over within it.
const LeaseTTL = 3 // seconds

// Lead runs fn while this process leads the election name, one leader
// among the replicas at a time: it campaigns, runs fn with a context that
// ends when leadership is lost (the lease expired: etcd unreachable) or
// ctx ends, then campaigns again, until ctx ends. id names this replica
// to the others (etcdctl get --prefix <prefix>lock/ shows who leads).
func (b *Backend) Lead(ctx context.Context, name, id string, fn func(ctx context.Context)) {
	key := b.prefix + "lock/" + name
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		// The session outlives ctx by a moment so that Close can revoke
		// its lease (a handover without waiting for the TTL).
		sctx, scancel := context.WithCancel(context.Background())
		sess, err := concurrency.NewSession(b.cli, concurrency.WithTTL(LeaseTTL), concurrency.WithContext(sctx))
		if err != nil {
			scancel()
			b.log.Warn("leader election: no session; retrying", "election", name, "err", err)
			sleep(ctx, backoff)
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		e := concurrency.NewElection(sess, key)
		if err := e.Campaign(ctx, id); err != nil {
			sess.Close()
			scancel()
			if ctx.Err() == nil {
				b.log.Warn("leader election: campaign failed; retrying", "election", name, "err", err)
				sleep(ctx, backoff)
			}
			continue
		}
		b.log.Info("leading", "election", name, "id", id)
		lctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-sess.Done(): // the lease is gone: someone else may lead now
			case <-lctx.Done():
			}
			cancel()
		}()
		fn(lctx)
		cancel()
		// Hand over at once rather than when the lease runs out.
		rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
		e.Resign(rctx)
		rcancel()
		sess.Close()
		scancel()
		if ctx.Err() == nil {
			b.log.Warn("leadership lost; campaigning again", "election", name, "id", id)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
