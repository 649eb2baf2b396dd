package rolesync

import (
	"context"
	"sync"
	"time"

	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// Progress records how far Sync has applied the stored roles and
// bindings, so that a write of either can wait until the resolver decides
// with it (docs/api.md: changes take effect on the next request).
type Progress struct {
	mu      sync.Mutex
	applied map[string]map[string]mark // kind → name → state applied
	changed chan struct{}              // closed and replaced on every apply
}

// NewProgress returns an empty Progress to hand to SyncWithProgress.
func NewProgress() *Progress {
	return &Progress{applied: map[string]map[string]mark{}, changed: make(chan struct{})}
}

func (p *Progress) put(kind string, md *object.Metadata) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.applied[kind] == nil {
		p.applied[kind] = map[string]mark{}
	}
	p.applied[kind][md.Name] = markOf(md)
	p.signal()
}

func (p *Progress) del(kind, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.applied[kind], name)
	p.signal()
}

func (p *Progress) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// MaxWait bounds WaitCurrent; the resolver normally follows a write within
// microseconds.
const MaxWait = 2 * time.Second

// WaitCurrent returns once every role and binding stored now has been
// applied at its current version and none that is gone is still applied,
// or after MaxWait, or when ctx ends. Handlers that write roles or
// bindings call it before answering.
func (p *Progress) WaitCurrent(ctx context.Context, roles *core.RoleClient, bindings *core.RoleBindingClient) error {
	deadline := time.NewTimer(MaxWait)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		wake := p.changed
		p.mu.Unlock()
		ok, err := p.current(ctx, roles, bindings)
		if err != nil || ok {
			return err
		}
		select {
		case <-wake:
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *Progress) current(ctx context.Context, roles *core.RoleClient, bindings *core.RoleBindingClient) (bool, error) {
	rs, err := roles.ListRecords(ctx, client.ListOptions{})
	if err != nil {
		return false, err
	}
	bs, err := bindings.ListRecords(ctx, client.ListOptions{})
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return caughtUp(p.applied[roles.Model().Kind], rs.Items) && caughtUp(p.applied[bindings.Model().Kind], bs.Items), nil
}

func caughtUp(applied map[string]mark, items []*store.Record) bool {
	if len(applied) != len(items) {
		return false
	}
	for _, r := range items {
		m, ok := applied[r.Name]
		if !ok || m.version != r.Version || !m.created.Equal(r.Created()) {
			return false
		}
	}
	return true
}
