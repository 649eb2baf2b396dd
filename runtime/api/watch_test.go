package api_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/svcrun/svc/runtime/api"
)

// countingListener records the writes of every connection it accepts.
type countingListener struct {
	net.Listener
	writes *writeLog
}

type writeLog struct {
	n       atomic.Int64
	largest atomic.Int64
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
	writes *writeLog
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.n.Add(1)
	for {
		old := c.writes.largest.Load()
		if int64(len(p)) <= old || c.writes.largest.CompareAndSwap(old, int64(len(p))) {
			break
		}
	}
	return c.Conn.Write(p)
}

func newCountingEnv(t *testing.T) (*env, *writeLog) {
	w := &writeLog{}
	return newEnvListening(t, api.Options{}, func(l net.Listener) net.Listener { return countingListener{l, w} }), w
}

// createPadded creates n persons p000… each carrying pad bytes of
// annotation, several at a time.
func createPadded(e *env, n, pad int) {
	e.t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			e.create(fmt.Sprintf(`{"metadata":{"name":"p%03d","annotations":{"pad":%q}},"spec":{"name":"x"}}`, i, strings.Repeat("x", pad)))
		})
	}
	wg.Wait()
}

// TestWatchSendsQueuedEventsInOneWrite: events already queued for a
// watcher (here the initial events, queued before the stream starts) leave
// in one socket write, not one each, and still arrive as one frame per
// event, in order.
func TestWatchSendsQueuedEventsInOneWrite(t *testing.T) {
	e, writes := newCountingEnv(t)
	const n = 200
	createPadded(e, n, 0)
	before := writes.n.Load()
	c := dial(t, e, base+"?watch=true&sendInitialEvents=true")
	for i := range n {
		if got, want := read(t, c), fmt.Sprintf("ADDED p%03d", i); got != want {
			t.Fatalf("event %d = %s, want %s", i, got, want)
		}
	}
	// One write answers the upgrade; 200 events of ~150 bytes fit in one
	// batch.
	if got := writes.n.Load() - before; got > 2 {
		t.Errorf("%d events took %d socket writes; want the upgrade and one batch", n, got)
	}
}

// TestWatchBooleanSpellings: watch and sendInitialEvents take every
// spelling strconv.ParseBool (and Kubernetes) takes.
func TestWatchBooleanSpellings(t *testing.T) {
	e, _ := newCountingEnv(t)
	createPadded(e, 1, 0)
	for _, q := range []string{"?watch=1&sendInitialEvents=T", "?watch=TRUE&sendInitialEvents=1"} {
		if got := read(t, dial(t, e, base+q)); got != "ADDED p000" {
			t.Errorf("%s: first event %s, want the initial ADDED p000", q, got)
		}
	}
}

// TestWatchBatchesAreBounded: a backlog larger than one batch leaves in
// several writes, none much over the batch limit.
func TestWatchBatchesAreBounded(t *testing.T) {
	e, writes := newCountingEnv(t)
	const n, pad = 40, 4 << 10 // ~160 KiB of events: three batches at least
	createPadded(e, n, pad)
	before := writes.n.Load()
	writes.largest.Store(0)
	c := dial(t, e, base+"?watch=true&sendInitialEvents=true")
	c.SetReadLimit(1 << 20)
	for i := range n {
		if got, want := read(t, c), fmt.Sprintf("ADDED p%03d", i); got != want {
			t.Fatalf("event %d = %s, want %s", i, got, want)
		}
	}
	if got := writes.n.Load() - before; got < 1+3 {
		t.Errorf("%d KiB of events took %d socket writes; want batches of at most 64 KiB", n*pad>>10, got)
	}
	// A batch stops once it holds 64 KiB, so it ends with at most one
	// frame beyond that.
	if got := writes.largest.Load(); got > 64<<10+pad+1<<10 {
		t.Errorf("a socket write of %d bytes; want at most 64 KiB and one event", got)
	}
}

// TestWatchAnswersAClientsCloseDuringABacklog: a client that closes while
// the server is still sending a backlog gets the server's close frame,
// though the library writes it while a batch is being held.
func TestWatchAnswersAClientsCloseDuringABacklog(t *testing.T) {
	e := newEnv(t)
	createPadded(e, 300, 2<<10)
	for round := range 20 {
		c := dial(t, e, base+"?watch=true&sendInitialEvents=true")
		c.SetReadLimit(1 << 20)
		for range 5 {
			read(t, c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		done := make(chan error, 1)
		go func() { done <- c.Close(websocket.StatusNormalClosure, "enough") }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round %d: closing during a backlog: %v", round, err)
			}
		case <-ctx.Done():
			t.Fatalf("round %d: close did not complete", round)
		}
		cancel()
	}
}
