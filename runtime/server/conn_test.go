package server_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/server/servertest"
)

// stalledBody opens a connection that sends a request declaring a body
// and never sends the body.
func stalledBody(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	c := dialFrom(t, addr, from)
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

func dialFrom(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin fails unless the server ends c within d.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server still holds the connection after %s", d)
	}
}

func basicAuth(user, pw string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))
}

func healthz(t *testing.T, base, from string) (int, time.Duration) {
	t.Helper()
	d := net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	cl := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	defer cl.CloseIdleConnections()
	start := time.Now()
	res, err := cl.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("healthz: %v", err)
	}
	res.Body.Close()
	return res.StatusCode, time.Since(start)
}

func TestStalledClientsAreDropped(t *testing.T) {
	s := servertest.Start(t, servertest.Options{AdminPassword: adminPassword, Flags: func(f *server.Flags) {
		f.ReadHeaderTimeout, f.ReadTimeout = 500*time.Millisecond, time.Second
	}})
	addr := strings.TrimPrefix(s.URL, "http://")
	body := stalledBody(t, addr, "")
	headers := dialFrom(t, addr, "")
	go func() { // headers one line at a time, never finished
		io.WriteString(headers, "GET /healthz HTTP/1.1\r\n")
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			if _, err := io.WriteString(headers, "X-Slow: y\r\n"); err != nil {
				return
			}
		}
	}()
	// Others are served meanwhile.
	if st, took := healthz(t, s.URL, ""); st != 200 || took > 2*time.Second {
		t.Fatalf("healthz beside stalled clients = %d after %s", st, took)
	}
	closedWithin(t, body, 5*time.Second)
	closedWithin(t, headers, 5*time.Second)
}

func TestPerClientConnectionLimit(t *testing.T) {
	const limit = 4
	s := servertest.Start(t, servertest.Options{AdminPassword: adminPassword, Flags: func(f *server.Flags) {
		f.MaxConnsPerClient, f.MaxConns = limit, -1
	}})
	addr := strings.TrimPrefix(s.URL, "http://")
	var held []net.Conn
	for range limit {
		held = append(held, stalledBody(t, addr, "127.0.0.1"))
	}
	// One more from the same address is refused with a problem naming the
	// limit.
	extra := dialFrom(t, addr, "127.0.0.1")
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil {
		t.Fatalf("connection over the limit: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 429 || res.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(b), "max-conns-per-client") || !json.Valid(b) {
		t.Fatalf("connection over the limit = %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	// Another address is served.
	if st, _ := healthz(t, s.URL, "127.0.0.2"); st != 200 {
		t.Fatalf("healthz from another address = %d", st)
	}
	// A place given back is free again.
	held[0].Close()
	servertest.Eventually(t, "a freed place", func() (bool, string) {
		c := dialFrom(t, addr, "127.0.0.1")
		defer c.Close()
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false, err.Error()
		}
		res.Body.Close()
		return res.StatusCode == 200, res.Status
	})
}

// TestConnectionFloodDoesNotStarve: a flood of stalled requests fills
// every connection; a well-behaved client is served once they time out.
func TestConnectionFloodDoesNotStarve(t *testing.T) {
	const limit = 8
	s := servertest.Start(t, servertest.Options{AdminPassword: adminPassword, Flags: func(f *server.Flags) {
		f.MaxConns, f.MaxConnsPerClient = limit, -1
		f.ReadHeaderTimeout, f.ReadTimeout = 500*time.Millisecond, time.Second
	}})
	addr := strings.TrimPrefix(s.URL, "http://")
	for range 3 * limit {
		stalledBody(t, addr, "")
	}
	if st, took := healthz(t, s.URL, "127.0.0.2"); st != 200 || took > 8*time.Second {
		t.Fatalf("healthz after a flood = %d after %s", st, took)
	}
}

// TestWatchOutlivesTimeouts: a watch stays open past every timeout and
// still receives events.
func TestWatchOutlivesTimeouts(t *testing.T) {
	const timeout = 300 * time.Millisecond
	s := servertest.Start(t, servertest.Options{AdminPassword: adminPassword, Flags: func(f *server.Flags) {
		f.ReadHeaderTimeout, f.ReadTimeout, f.WriteTimeout, f.IdleTimeout = timeout, timeout, timeout, timeout
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hdr := http.Header{}
	hdr.Set("Authorization", "Basic "+basicAuth("admin", adminPassword))
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/api/v1alpha1/roles?watch=true", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer ws.CloseNow()
	time.Sleep(5 * timeout)
	req, _ := http.NewRequest("POST", s.URL+"/api/v1alpha1/roles", strings.NewReader(`{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"late"},"rules":[]}`))
	req.SetBasicAuth("admin", adminPassword)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create role = %v %v", res, err)
	}
	res.Body.Close()
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("watch read after %s of timeouts: %v", 5*timeout, err)
		}
		var ev struct {
			Type   string
			Object struct{ Metadata struct{ Name string } }
		}
		json.Unmarshal(msg, &ev)
		if ev.Type == "ADDED" && ev.Object.Metadata.Name == "late" {
			return
		}
	}
}

// TestGuessingIsBraked: guesses from one address beyond the brake get
// 429 with Retry-After and a problem body, before any password check,
// while a valid remembered credential and /healthz are still served.
// Guessed tokens keep it fast under the race detector; the example
// server's end-to-end test guesses passwords.
func TestGuessingIsBraked(t *testing.T) {
	s := servertest.Start(t, servertest.Options{AdminPassword: adminPassword})
	get := func(authz string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"/api/v1alpha1/roles", nil)
		req.Header.Set("Authorization", authz)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, b
	}
	admin := "Basic " + basicAuth("admin", adminPassword)
	if res, _ := get(admin); res.StatusCode != 200 { // remembered from now on
		t.Fatalf("admin = %d", res.StatusCode)
	}
	var (
		mu    sync.Mutex
		codes = map[int]int{}
		last  *http.Response
		body  []byte
		wg    sync.WaitGroup
	)
	for i := range 40 {
		wg.Go(func() {
			res, b := get(fmt.Sprintf("Bearer svc_pat_guess%032d", i))
			mu.Lock()
			defer mu.Unlock()
			codes[res.StatusCode]++
			if res.StatusCode == 429 {
				last, body = res, b
			}
		})
	}
	wg.Wait()
	// 30 failures per address at once, then one a second.
	if n := codes[401]; n < 30 || n > 32 || n+codes[429] != 40 {
		t.Fatalf("40 parallel guesses: %v, want 30 × 401 and the rest 429", codes)
	}
	if last.Header.Get("Retry-After") == "" || last.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(body), "failed sign-ins per client address") {
		t.Fatalf("429 = %v %s", last.Header, body)
	}
	// A password guess from the braked address is refused too, unchecked.
	if res, b := get("Basic " + basicAuth("admin", "guess")); res.StatusCode != 429 {
		t.Fatalf("password guess from a braked address = %d %s", res.StatusCode, b)
	}
	if res, _ := get(admin); res.StatusCode != 200 {
		t.Fatalf("remembered admin credential under attack = %d", res.StatusCode)
	}
	// A public path is served as to anyone, credentials or not.
	req, _ := http.NewRequest("GET", s.URL+"/healthz", nil)
	req.SetBasicAuth("admin", "guess")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz with a guess = %v %v", res, err)
	}
}
