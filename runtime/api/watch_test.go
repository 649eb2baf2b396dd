package api_test

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/svcrun/svc/runtime/api"
)

// countingListener counts the writes of every connection it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestWatchSendsQueuedEventsInOneWrite: events already queued for a
// watcher (here the initial events) leave in a few socket writes, not one
// each, and still arrive as one frame per event, in order.
func TestWatchSendsQueuedEventsInOneWrite(t *testing.T) {
	var writes atomic.Int64
	e := newEnvListening(t, api.Options{}, func(l net.Listener) net.Listener { return countingListener{l, &writes} })
	const n = 200
	for i := range n {
		e.create(fmt.Sprintf(`{"metadata":{"name":"p%03d"},"spec":{"name":"x"}}`, i))
	}
	before := writes.Load()
	c := dial(t, e, base+"?watch=true&sendInitialEvents=true&sort=metadata.name,asc")
	seen := map[string]bool{}
	for range n {
		ev := read(t, c)
		if seen[ev] {
			t.Fatalf("event %s twice", ev)
		}
		seen[ev] = true
	}
	for i := range n {
		if want := fmt.Sprintf("ADDED p%03d", i); !seen[want] {
			t.Errorf("missing %s", want)
		}
	}
	// One write answers the upgrade; 200 events of ~150 bytes fit in one
	// batch, and the stream may have started before all were queued.
	if got := writes.Load() - before; got > 10 {
		t.Errorf("%d events took %d socket writes; want them batched", n, got)
	}
}
