package server

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
)

// Defaults of the connection flags (docs/operations.md, "Connections and
// sign-ins"). A zero Flags field takes its default; a negative one turns
// the timeout or limit off.
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, headers and body:
	// a body of the largest size accepted (3 MiB) must arrive at about
	// 100 KiB/s.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds handling a request and writing its
	// answer, from the end of its headers.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a kept-alive connection may wait for
	// its next request.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxConns bounds the open connections, watches included;
	// beyond it new connections wait in the kernel's queue.
	DefaultMaxConns = 8192
	// DefaultMaxConnsPerClient bounds the open connections of one client
	// address (an IPv6 client's /64); beyond it a connection is answered
	// 429 and closed. It leaves room for a load test's 1,000 watchers.
	DefaultMaxConnsPerClient = 2048
)

// connDefaults fills the zero connection settings of f with the defaults.
func (f *Flags) connDefaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&f.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&f.ReadTimeout, DefaultReadTimeout)
	def(&f.WriteTimeout, DefaultWriteTimeout)
	def(&f.IdleTimeout, DefaultIdleTimeout)
	if f.MaxConns == 0 {
		f.MaxConns = DefaultMaxConns
	}
	if f.MaxConnsPerClient == 0 {
		f.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
}

// off turns a negative setting into net/http's "none".
func off(d time.Duration) time.Duration { return max(d, 0) }

// limitListener applies --max-conns and --max-conns-per-client to ln.
func limitListener(ln net.Listener, f Flags, log *slog.Logger) net.Listener {
	if f.MaxConnsPerClient > 0 {
		ln = &perClientListener{Listener: ln, max: f.MaxConnsPerClient, open: map[netip.Prefix]int{}, log: log}
	}
	if f.MaxConns > 0 {
		ln = netutil.LimitListener(ln, f.MaxConns)
	}
	return ln
}

// perClientListener refuses a client's connections beyond max open at
// once. Without it, one address could hold every connection the server
// allows (--max-conns), each for up to a read timeout.
type perClientListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu      sync.Mutex
	open    map[netip.Prefix]int
	refused atomic.Int64 // since the last logged refusal
	logged  atomic.Int64 // unix seconds of the last log line
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		k, ok := clientKey(c.RemoteAddr())
		if !ok {
			return c, nil // not TCP over IP: nothing to count by
		}
		l.mu.Lock()
		n := l.open[k]
		if n < l.max {
			l.open[k] = n + 1
		}
		l.mu.Unlock()
		if n < l.max {
			return &clientConn{Conn: c, l: l, key: k}, nil
		}
		l.refuse(c, k)
	}
}

func (l *perClientListener) release(k netip.Prefix) {
	l.mu.Lock()
	if l.open[k]--; l.open[k] <= 0 {
		delete(l.open, k) // the map holds only clients with connections
	}
	l.mu.Unlock()
}

// refuse answers a connection over the limit with a 429 problem and
// closes it. The answer fits a fresh socket's send buffer, so the write
// does not block the accept loop; the deadline covers the odd case.
func (l *perClientListener) refuse(c net.Conn, k netip.Prefix) {
	body := fmt.Sprintf(`{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"too many connections from this client: limit max-conns-per-client (%d) reached","instance":""}`, l.max)
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	c.Close()
	// One line a second at most: a flood must not flood the log.
	l.refused.Add(1)
	if now := time.Now().Unix(); l.logged.Load() != now && l.logged.Swap(now) != now {
		l.log.Warn("connections refused", "limit", "max-conns-per-client", "max", l.max, "client", k.String(), "refusedSinceLastLine", l.refused.Swap(0))
	}
}

// clientConn gives its place back when closed, once.
type clientConn struct {
	net.Conn
	l    *perClientListener
	key  netip.Prefix
	once sync.Once
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}

// clientKey is the address connections are counted by: the IP, or an
// IPv6 client's /64, which one client commonly holds whole.
func clientKey(a net.Addr) (netip.Prefix, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}, false
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	return p, err == nil
}

// upgrades lets a request that asks for a protocol upgrade (a watch over
// WebSocket) be upgraded however long its handler took: net/http clears a
// connection's deadlines when it is hijacked, but the 101 answer written
// just before goes out under the write timeout, and past it is lost
// while the handler believes the upgrade done. Refusals (401, 403) keep
// the timeouts. Upgraded, the watch bounds its own writes and pings the
// client to notice one that went away.
func upgrades(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" && headerHasToken(r.Header, "Connection", "upgrade") {
			w = &upgradeWriter{ResponseWriter: w}
		}
		h.ServeHTTP(w, r)
	})
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// upgradeWriter clears the connection's deadlines when the handler
// answers 101 Switching Protocols, before the answer is written.
type upgradeWriter struct {
	http.ResponseWriter
}

func (w *upgradeWriter) WriteHeader(code int) {
	if code == http.StatusSwitchingProtocols {
		rc := http.NewResponseController(w.ResponseWriter)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
	}
	w.ResponseWriter.WriteHeader(code)
}

// Hijack, Flush and Unwrap keep the wrapped writer's abilities reachable
// (gin asserts Hijacker on the writer it wraps).
func (w *upgradeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *upgradeWriter) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *upgradeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
