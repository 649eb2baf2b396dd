package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/object"
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

// WatchSubprotocol is the WebSocket subprotocol a browser offers with its
// credential subprotocol (docs/api.md); the server selects it.
const WatchSubprotocol = "svc.watch"

// watch streams events of the model (or of one object) over a WebSocket as
// JSON text frames {"type":..., "object":...}. Failures before the upgrade
// are returned as problems; once streaming, the stream just ends.
func (a *modelAPI) watch(c *gin.Context, name string, params url.Values) error {
	q, err := a.parseQuery(params)
	if err != nil {
		return err
	}
	initial, err := boolParam(params, "sendInitialEvents")
	if err != nil {
		return err
	}
	after, err := revisionParam(params)
	if err != nil {
		return err
	}
	if !c.IsWebsocket() {
		return problem.New(http.StatusBadRequest, "watch needs a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)")
	}
	if after > a.st().Revision() {
		// A revision seen on another replica: wait until this one has it.
		wctx, cancel := context.WithTimeout(c.Request.Context(), MaxRevisionWait)
		err := a.st().WaitRevision(wctx, after)
		cancel()
		if err != nil {
			return &problem.Error{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"1"}},
				Detail: fmt.Sprintf("this replica has not reached revision %d (it is at %d); retry", after, a.st().Revision())}
		}
	}
	sub, err := a.st().Watch(c, a.m, store.WatchOptions{Query: q, Name: name, SendInitial: initial, After: after})
	if errors.Is(err, watch.ErrTooOld) {
		return &problem.Error{Status: http.StatusGone,
			Detail: fmt.Sprintf("the changes after revision %d are no longer held here: list again, then watch with the list's %s as revision", after, RevisionHeader),
			Errors: []object.FieldError{{Field: "revision", Message: "too old"}}}
	}
	if err != nil {
		return err
	}
	defer sub.Close()
	hw := &hijackWriter{ResponseWriter: c.Writer}
	// A browser that offered the console's subprotocol (its credentials
	// ride in another one, see authz) needs one echoed back.
	conn, err := websocket.Accept(hw, c.Request, &websocket.AcceptOptions{Subprotocols: []string{WatchSubprotocol}})
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
	// One timer bounds every send (a batch of frames) of the stream: a
	// client that stops reading is disconnected after the timeout. (A context with a
	// deadline per write costs a timer and a cancel registration per event
	// per watcher, a quarter of the cost of writing it.)
	s.stall = time.AfterFunc(s.timeout, func() { s.stalled.Store(true); conn.CloseNow() })
	s.stall.Stop()
	defer s.stall.Stop()
	dropped := "" // why the server ends the stream, for the Observer
	if o := a.s.opts.Observer; o != nil {
		o.WatchOpened()
		defer func() {
			// Whichever branch below saw the connection the stall closed
			// (the send, a ping, the read side), the client is the one
			// that stopped reading.
			if s.stalled.Load() {
				dropped = WatchDroppedUnresponsive
			}
			o.WatchClosed(dropped)
		}()
	}
	for {
		select {
		case ev, ok := <-sub.C:
			if ok {
				var err error
				if ok, err = s.send(ev, sub.C); err != nil {
					return nil // the client left, or stalled (above)
				}
			}
			if !ok {
				status, reason := websocket.StatusGoingAway, "watch closed"
				if errors.Is(sub.Err(), watch.ErrSlow) {
					status, reason = websocket.StatusPolicyViolation, "client too slow: events were dropped; watch again"
					dropped = WatchDroppedSlow
				}
				conn.Close(status, reason)
				return nil
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, s.timeout)
			err := conn.Ping(pctx)
			unanswered := errors.Is(pctx.Err(), context.DeadlineExceeded) // else the client left
			cancel()
			if err != nil {
				if unanswered {
					dropped = WatchDroppedUnresponsive
				}
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
	stalled atomic.Bool // stall fired
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
	held := 0
	held, err = s.frame(ev, held)
batch:
	for err == nil && held < maxBatchBytes {
		select {
		case ev, open = <-more:
			if !open {
				break batch
			}
			held, err = s.frame(ev, held)
		default:
			break batch
		}
	}
	if rerr := s.batch.release(); err == nil {
		err = rerr
	}
	return open, err
}

// frame writes ev as one text frame and adds its size to held.
func (s *stream) frame(ev store.Event, held int) (int, error) {
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
	if ev.Rev != 0 {
		// The change's revision: a client that reconnects (to any
		// replica) resumes after the last one it saw (?revision=).
		s.buf.WriteString(`,"revision":`)
		s.buf.WriteString(strconv.FormatInt(ev.Rev, 10))
	}
	s.buf.WriteByte('}')
	// No cancellable context: stall bounds the write, and a connection
	// that fails or closes fails it.
	return held + s.buf.Len(), s.conn.Write(context.Background(), websocket.MessageText, s.buf.Bytes())
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
// and then leave in one write. The library also writes from its reader
// goroutine (pongs, the answer to a client's close); such a write during a
// held batch joins it, so frames keep their order, and Close sends what
// is held first, so the answer to a close is not lost. mu guards the
// held bytes and is never held across socket I/O; sending takes sendMu,
// which orders a batch before any write that follows it.
type batchConn struct {
	net.Conn
	mu      sync.Mutex
	holding bool
	buf     []byte
	sendMu  sync.Mutex
}

// keepBytes is the held-bytes buffer a watcher keeps between batches; a
// larger one (a burst, a large object) is dropped after use.
const keepBytes = 16 << 10

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.holding {
		b.buf = append(b.buf, p...)
		b.mu.Unlock()
		return len(p), nil
	}
	b.sendMu.Lock()
	b.mu.Unlock()
	defer b.sendMu.Unlock()
	return b.Conn.Write(p)
}

func (b *batchConn) hold() {
	b.mu.Lock()
	b.holding = true
	b.mu.Unlock()
}

// release stops holding and writes what was held, in one write.
func (b *batchConn) release() error {
	b.mu.Lock()
	b.holding = false
	if len(b.buf) == 0 {
		b.mu.Unlock()
		return nil
	}
	data := b.buf
	b.buf = nil
	b.sendMu.Lock()
	b.mu.Unlock()
	_, err := b.Conn.Write(data)
	b.sendMu.Unlock()
	if cap(data) <= keepBytes {
		b.mu.Lock()
		if b.buf == nil {
			b.buf = data[:0]
		}
		b.mu.Unlock()
	}
	return err
}

// Close sends what is held (within a second) unless a send is under way,
// which the close then cuts short: the stall timer closes a connection
// whose send is blocked on a client that stopped reading.
func (b *batchConn) Close() error {
	b.mu.Lock()
	data := b.buf
	if !b.holding {
		data = nil
	}
	b.holding, b.buf = false, nil
	b.mu.Unlock()
	if len(data) > 0 && b.sendMu.TryLock() {
		b.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		b.Conn.Write(data)
		b.sendMu.Unlock()
	}
	return b.Conn.Close()
}

// revisionParam reads a watch's revision parameter: resume after it.
func revisionParam(params url.Values) (int64, error) {
	v := params.Get("revision")
	if v == "" {
		return 0, nil
	}
	r, err := strconv.ParseInt(v, 10, 64)
	if err != nil || r < 0 {
		return 0, problem.Invalid("bad watch revision", object.FieldError{Field: "revision", Message: "must be a non-negative integer: the revision of the last event (or list) seen"})
	}
	return r, nil
}
