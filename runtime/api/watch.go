package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/watch"
)

// Watch stream timing defaults; see Options.WatchPingInterval and
// Options.WatchWriteTimeout.
const (
	defaultPingInterval = 30 * time.Second
	defaultWriteTimeout = 10 * time.Second
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
	conn, err := websocket.Accept(c.Writer, c.Request, nil)
	if err != nil {
		return nil // Accept has answered the client; the stream is over
	}
	defer conn.CloseNow()
	// The server only writes; CloseRead handles pings and notices when the
	// client goes away.
	ctx := conn.CloseRead(context.WithoutCancel(c.Request.Context()))
	ping := time.NewTicker(a.s.opts.WatchPingInterval)
	defer ping.Stop()
	// One timer bounds every write of the stream: a client that stops
	// reading is disconnected after the timeout. (A context with a
	// deadline per write costs a timer and a cancel registration per event
	// per watcher, a quarter of the cost of writing it.)
	timeout := a.s.opts.WatchWriteTimeout
	stall := time.AfterFunc(timeout, func() { conn.CloseNow() })
	stall.Stop()
	defer stall.Stop()
	var buf bytes.Buffer
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				status, reason := websocket.StatusGoingAway, "watch closed"
				if errors.Is(sub.Err(), watch.ErrSlow) {
					status, reason = websocket.StatusPolicyViolation, "client too slow: events were dropped; watch again"
				}
				conn.Close(status, reason)
				return nil
			}
			if err := write(conn, stall, timeout, &buf, ev, a.m.Present); err != nil {
				return nil
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, timeout)
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

// write sends ev as one text frame, built in buf (reused: the connection
// copies the frame before Write returns), with stall armed meanwhile.
func write(conn *websocket.Conn, stall *time.Timer, timeout time.Duration, buf *bytes.Buffer, ev store.Event, present func([]byte) []byte) error {
	data := ev.Object.Data
	if present != nil {
		data = present(data)
	}
	buf.Reset()
	buf.Grow(len(data) + 32)
	buf.WriteString(`{"type":"`)
	buf.WriteString(string(ev.Type))
	buf.WriteString(`","object":`)
	buf.Write(data)
	buf.WriteByte('}')
	stall.Reset(timeout)
	defer stall.Stop()
	// No cancellable context: stall bounds the write, and a connection
	// that fails or closes fails it.
	return conn.Write(context.Background(), websocket.MessageText, buf.Bytes())
}
