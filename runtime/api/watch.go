package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/watch"
)

// Watch stream defaults; see Options.WatchPingInterval and
// Options.WatchWriteTimeout.
const (
	defaultPingInterval = 30 * time.Second
	defaultWriteTimeout = 10 * time.Second
	// maxBatchBytes bounds the queued events one socket write carries.
	maxBatchBytes = 64 << 10
)

// watch streams events of the model (or of one object) over a WebSocket as
// JSON text frames {"type":..., "object":...}. Failures before the upgrade
// are returned as problems; once streaming, the stream just ends.
func (a *modelAPI) watch(c *gin.Context, name string) error {
	if !c.IsWebsocket() {
		return problem.New(http.StatusBadRequest, "watch needs a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)")
	}
	q, err := query.Parse(c.Request.URL.Query())
	if err != nil {
		return err
	}
	sub, err := a.st().Watch(c, a.m, store.WatchOptions{Query: q, Name: name, SendInitial: c.Query("sendInitialEvents") == "true"})
	if err != nil {
		return err
	}
	defer sub.Close()
	hw := &hijackWriter{ResponseWriter: c.Writer}
	conn, err := websocket.Accept(hw, c.Request, nil)
	if err != nil {
		return nil // Accept has answered the client; the stream is over
	}
	defer conn.CloseNow()
	// The server only writes; CloseRead handles pings and notices when the
	// client goes away.
	ctx := conn.CloseRead(context.WithoutCancel(c.Request.Context()))
	ping := time.NewTicker(a.s.opts.WatchPingInterval)
	defer ping.Stop()
	s := &stream{conn: conn, batch: hw.conn, timeout: a.s.opts.WatchWriteTimeout, present: a.m.Present}
	// One timer bounds every write of the stream: a client that stops
	// reading is disconnected after the timeout. (A context with a
	// deadline per write costs a timer and a cancel registration per event
	// per watcher, a quarter of the cost of writing it.)
	s.stall = time.AfterFunc(s.timeout, func() { conn.CloseNow() })
	s.stall.Stop()
	defer s.stall.Stop()
	for {
		select {
		case ev, ok := <-sub.C:
			if ok {
				var err error
				if ok, err = s.send(ev, sub.C); err != nil {
					return nil
				}
			}
			if !ok {
				status, reason := websocket.StatusGoingAway, "watch closed"
				if errors.Is(sub.Err(), watch.ErrSlow) {
					status, reason = websocket.StatusPolicyViolation, "client too slow: events were dropped; watch again"
				}
				conn.Close(status, reason)
				return nil
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, s.timeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return nil
			}
		case <-a.s.closing:
			conn.Close(websocket.StatusGoingAway, "server shutting down")
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// stream is the sending side of one watch.
type stream struct {
	conn    *websocket.Conn
	batch   *batchConn
	stall   *time.Timer // closes conn when a send outlasts timeout
	timeout time.Duration
	present func([]byte) []byte
	buf     bytes.Buffer // one frame; the connection copies it
}

// send writes ev, then every event already queued on more (up to
// maxBatchBytes), each as its own text frame, and puts them on the socket
// with one write. The library flushes after each frame; with a thousand
// watchers a write per frame was most of the server's CPU, and a watcher
// that has fallen behind catches up with fewer writes. open is false when
// more turned out to be closed.
func (s *stream) send(ev store.Event, more <-chan store.Event) (open bool, err error) {
	s.stall.Reset(s.timeout)
	defer s.stall.Stop()
	s.batch.hold()
	open = true
	err = s.frame(ev)
batch:
	for err == nil && s.batch.held() < maxBatchBytes {
		select {
		case ev, open = <-more:
			if !open {
				break batch
			}
			err = s.frame(ev)
		default:
			break batch
		}
	}
	if rerr := s.batch.release(); err == nil {
		err = rerr
	}
	return open, err
}

// frame writes ev as one text frame.
func (s *stream) frame(ev store.Event) error {
	data := ev.Object.Data
	if s.present != nil {
		data = s.present(data)
	}
	s.buf.Reset()
	s.buf.Grow(len(data) + 32)
	s.buf.WriteString(`{"type":"`)
	s.buf.WriteString(string(ev.Type))
	s.buf.WriteString(`","object":`)
	s.buf.Write(data)
	s.buf.WriteByte('}')
	// No cancellable context: stall bounds the write, and a connection
	// that fails or closes fails it.
	return s.conn.Write(context.Background(), websocket.MessageText, s.buf.Bytes())
}

// hijackWriter hands the WebSocket library a connection whose writes can
// be held and sent together (batchConn).
type hijackWriter struct {
	gin.ResponseWriter
	conn *batchConn
}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, rw, err := w.ResponseWriter.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := rw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("flush before hijack: %w", err)
	}
	w.conn = &batchConn{Conn: nc}
	return w.conn, bufio.NewReadWriter(rw.Reader, bufio.NewWriterSize(w.conn, 4<<10)), nil
}

// batchConn is a connection whose writes, while held, collect in memory
// and then leave in one write. Writes from other goroutines (the library
// answers pings) queue behind a held batch, so frames keep their order.
type batchConn struct {
	net.Conn
	mu      sync.Mutex
	holding bool
	buf     []byte
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holding {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	return b.Conn.Write(p)
}

func (b *batchConn) hold() {
	b.mu.Lock()
	b.holding = true
	b.mu.Unlock()
}

// held returns the bytes waiting for release.
func (b *batchConn) held() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf)
}

// release writes what was held, in one write, and stops holding.
func (b *batchConn) release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = false
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(b.buf)
	b.buf = b.buf[:0]
	if cap(b.buf) > maxBatchBytes*2 {
		b.buf = nil // a huge object passed; do not keep its buffer
	}
	return err
}
