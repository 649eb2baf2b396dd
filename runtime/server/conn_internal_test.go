package server

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
)

// TestUpgradeAfterSlowHandler: a handler that takes longer than the write
// timeout before upgrading (a sign-in's bcrypt on a busy server) still
// upgrades, and the connection then outlives the timeouts. Without
// upgrades the 101 answer is lost and the client waits for it forever.
func TestUpgradeAfterSlowHandler(t *testing.T) {
	const timeout = 200 * time.Millisecond
	gin.SetMode(gin.ReleaseMode)
	g := gin.New()
	g.GET("/ws", func(c *gin.Context) {
		time.Sleep(2 * timeout)
		conn, err := websocket.Accept(c.Writer, c.Request, nil)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		time.Sleep(2 * timeout)
		conn.Write(context.Background(), websocket.MessageText, []byte("late"))
		conn.Close(websocket.StatusNormalClosure, "")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: upgrades(g), ReadHeaderTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: timeout}
	go srv.Serve(ln)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/ws", nil)
	if err != nil {
		t.Fatalf("dial after a slow handler: %v", err)
	}
	defer ws.CloseNow()
	if _, msg, err := ws.Read(ctx); err != nil || string(msg) != "late" {
		t.Fatalf("read past the timeouts = %q, %v", msg, err)
	}
}

func TestHeaderHasToken(t *testing.T) {
	h := http.Header{"Connection": {"keep-alive, Upgrade"}}
	if !headerHasToken(h, "Connection", "upgrade") || headerHasToken(h, "Connection", "close") {
		t.Fatal("headerHasToken")
	}
}
