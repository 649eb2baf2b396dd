package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// runFlags starts the binary in memory with extra flags and waits until
// /readyz answers 200.
func runFlags(t *testing.T, flags ...string) *server {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary, append([]string{"--addr", addr, "--memory"}, flags...)...)
	cmd.Env = append(os.Environ(), "SVC_ADMIN_PASSWORD="+adminPW)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, url: "http://" + addr, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(s.kill)
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(s.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server on %s not ready: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dialAs(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestServerTimeoutsAndConnectionLimits: stalled clients are dropped in
// bounded time while others are served, one address cannot hold more
// than its share of connections, and a watch outlives every timeout.
func TestServerTimeoutsAndConnectionLimits(t *testing.T) {
	s := runFlags(t, "--read-header-timeout", "500ms", "--read-timeout", "1s", "--write-timeout", "1s",
		"--idle-timeout", "1s", "--max-conns-per-client", "6")
	addr := strings.TrimPrefix(s.url, "http://")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+persons+"?watch=true", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Basic " + basic("admin", adminPW)}}})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer ws.CloseNow()

	// A request that declares a body and sends none, from 127.0.0.2.
	stalled := dialAs(t, addr, "127.0.0.2")
	io.WriteString(stalled, "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
	start := time.Now()
	if res, err := http.Get(s.url + "/healthz"); err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz beside a stalled client = %v %v", res, err)
	}
	stalled.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, stalled); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("a stalled client still held its connection after 5 s")
	}
	t.Logf("stalled client dropped after %s", time.Since(start).Round(10*time.Millisecond))

	// 127.0.0.3 holds its six connections; a seventh is refused with a
	// problem naming the limit; 127.0.0.1 is still served.
	for range 6 {
		io.WriteString(dialAs(t, addr, "127.0.0.3"), "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
	}
	extra := dialAs(t, addr, "127.0.0.3")
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil {
		t.Fatalf("seventh connection: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 429 || res.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(b), "max-conns-per-client") {
		t.Fatalf("seventh connection = %d %s", res.StatusCode, b)
	}
	if st, _ := s.do(req{method: "GET", path: "/healthz"}); st != 200 {
		t.Fatalf("healthz from another address = %d", st)
	}

	// The watch, open for seconds past every timeout, still gets events.
	time.Sleep(2 * time.Second)
	if st, body := s.do(admin(req{method: "POST", path: persons, body: person("late", "Late", "")})); st != 201 {
		t.Fatalf("create = %d %v", st, body)
	}
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("watch read past the timeouts: %v", err)
		}
		var ev struct {
			Type   string
			Object struct{ Metadata struct{ Name string } }
		}
		json.Unmarshal(msg, &ev)
		if ev.Type == "ADDED" && ev.Object.Metadata.Name == "late" {
			break
		}
	}
}

// TestServerPasswordGuessing: 32 clients guessing the administrator's
// password get 429 with Retry-After after the brake's allowance, and
// meanwhile /healthz and the administrator's remembered credential stay
// fast.
func TestServerPasswordGuessing(t *testing.T) {
	s := runFlags(t)
	if st, _ := s.do(admin(req{method: "GET", path: persons})); st != 200 { // remembered from now on
		t.Fatalf("admin = %d", st)
	}
	var (
		mu      sync.Mutex
		codes   = map[int]int{}
		retry   string
		problem map[string]any
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	guess := func(i int) {
		hr, _ := http.NewRequest("GET", s.url+persons, nil)
		hr.SetBasicAuth("admin", fmt.Sprintf("guess-%d", i))
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		codes[res.StatusCode]++
		if res.StatusCode == 429 && problem == nil {
			retry = res.Header.Get("Retry-After")
			json.Unmarshal(b, &problem)
		}
	}
	for w := range 32 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				guess(w*1_000_000 + i)
			}
		})
	}
	// Time /healthz (with the same bad credentials, as a probe might) and
	// the administrator while the guessing goes on.
	var health, adm []time.Duration
	for range 50 {
		start := time.Now()
		hr, _ := http.NewRequest("GET", s.url+"/healthz", nil)
		hr.SetBasicAuth("admin", "stale")
		res, err := http.DefaultClient.Do(hr)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("healthz under attack = %v %v", res, err)
		}
		res.Body.Close()
		health = append(health, time.Since(start))
		start = time.Now()
		if st, _ := s.do(admin(req{method: "GET", path: persons + "?limit=1"})); st != 200 {
			t.Fatalf("admin under attack = %d", st)
		}
		adm = append(adm, time.Since(start))
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	slices.Sort(health)
	slices.Sort(adm)
	t.Logf("guesses: %v; /healthz p50 %s max %s; admin p50 %s max %s", codes, health[25], health[49], adm[25], adm[49])
	// The brake's allowance: 10 per user name at once, then one per 6 s;
	// the probes' stale credentials may spend some of it.
	if codes[401] < 1 || codes[401] > 12 || codes[429] == 0 || len(codes) != 2 {
		t.Errorf("guesses answered %v, want about 10 × 401 and the rest 429", codes)
	}
	if retry == "" || problem["status"] != float64(429) || !strings.Contains(fmt.Sprint(problem["detail"]), "failed sign-ins per user name") {
		t.Errorf("429: Retry-After %q, body %v", retry, problem)
	}
	// Medians: the machine these tests share may stall any one request.
	if health[25] > 100*time.Millisecond || adm[25] > 100*time.Millisecond {
		t.Errorf("valid requests slowed by guessing: /healthz p50 %s, admin p50 %s", health[25], adm[25])
	}
}
