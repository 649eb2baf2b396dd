package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// The Person collection of the example plugin.
const collectionPath = "/apis/people.example.com/v1alpha1/persons"

// Label and annotation keys loadgen puts on the objects it writes.
const (
	runLabel       = "loadgen.example.com/run"
	sentAnnotation = "loadgen.example.com/sent-unix-nano"
)

// client talks to one server. Requests go through fasthttp's client: the
// load tool shares two cores with the server it measures, and net/http's
// client costs about twice the CPU per request (68 against 37 µs here),
// which the server would not get. WebSocket handshakes use net/http, whose
// connections the WebSocket library takes over.
type client struct {
	base  string // scheme://host
	coll  string // base + collectionPath
	wcoll string // the collection watchers open (coll, or --watch-url's)
	fast  *fasthttp.Client
	ws    *http.Client
	auth  string // Authorization header value; empty without --user
	runID string // tells this run's objects and events apart
}

func newClient(cfg *config) *client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !cfg.AllowRemote {
		dialer.Control = loopbackOnly
	}
	wsTransport := &http.Transport{
		Proxy:                 nil, // never detour through a proxy from the environment
		DialContext:           dialer.DialContext,
		MaxIdleConns:          1,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true,
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	base := cfg.URL.String()
	c := &client{
		base:  base,
		coll:  base + collectionPath,
		wcoll: base + collectionPath,
		fast: &fasthttp.Client{
			Dial:                      func(addr string) (net.Conn, error) { return dialer.Dial("tcp", addr) },
			MaxConnsPerHost:           cfg.Concurrency + 4,
			MaxConnWaitTimeout:        requestTimeout,
			MaxIdleConnDuration:       90 * time.Second,
			MaxIdemponentCallAttempts: 1, // a failed request is counted, never retried
			NoDefaultUserAgentHeader:  true,
		},
		ws:    &http.Client{Transport: wsTransport, CheckRedirect: noRedirect},
		runID: newRunID(),
	}
	if cfg.User != "" {
		c.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.User+":"+cfg.Password))
	}
	if cfg.WatchURL != nil {
		c.wcoll = cfg.WatchURL.String() + collectionPath
	}
	return c
}

// loopbackOnly is a dialer Control function: it refuses to connect to an
// address that is not loopback, whatever a host name resolved to.
func loopbackOnly(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing to connect to %s: not a loopback address (use --allow-remote)", address)
	}
	return nil
}

// newRunID returns 6 random lower case alphanumerics.
func newRunID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [6]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// authHeader returns the headers every request carries.
func (c *client) authHeader() http.Header {
	h := http.Header{}
	if c.auth != "" {
		h.Set("Authorization", c.auth)
	}
	return h
}

// do sends one request, copying the response body into out when out is
// not nil. ctx's deadline bounds it (requestTimeout without one); a
// request in flight when ctx is cancelled runs to its deadline.
func (c *client) do(ctx context.Context, method, url string, body []byte, out *bytes.Buffer) (int, error) {
	deadline, ok := ctx.Deadline()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if !ok {
		deadline = time.Now().Add(requestTimeout)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	req.Header.SetMethod(method)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if err := c.fast.DoDeadline(req, resp, deadline); err != nil {
		// ctx's timer may fire a little after its deadline on a busy
		// machine (and a request past it fails at once): wait for it, so
		// that callers see ctx ended rather than a timeout.
		if ok && !time.Now().Before(deadline) {
			<-ctx.Done()
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, err
	}
	if out != nil {
		out.Reset()
		out.Write(resp.Body())
	}
	return resp.StatusCode(), nil
}

// deleteRun deletes every person this run created, by its run label, and
// returns how many there were.
func (c *client) deleteRun(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	sel := url.Values{"labelSelector": {runLabel + "=" + c.runID}}
	var out bytes.Buffer
	status, err := c.do(ctx, http.MethodDelete, c.coll+"?"+sel.Encode(), nil, &out)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("status %d: %.300s", status, out.Bytes())
	}
	var res struct {
		Total int64 `json:"total"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return 0, fmt.Errorf("decode the delete-collection result: %w", err)
	}
	return res.Total, nil
}

// waitReady polls /readyz until the server answers 200 (its indexes are
// built) or limit passes.
func (c *client) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		status, err := c.do(rctx, http.MethodGet, c.base+"/readyz", nil, nil)
		cancel()
		if err == nil && status == http.StatusOK {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("status %d", status)
			}
			return fmt.Errorf("server at %s is not ready after %s: %w", c.base, limit, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// preloadName is the name of the i-th preloaded person.
func preloadName(prefix string, i int) string {
	return prefix + "-" + strconv.Itoa(i)
}

// personBody returns a Person to create. Its email is derived from its
// unique name, so it satisfies the unique index on spec.email.
func personBody(name string, i int, labels, annotations map[string]string) []byte {
	age := int64(18 + i%60)
	p := map[string]any{
		"apiVersion": "people.example.com/v1alpha1",
		"kind":       "Person",
		"metadata":   map[string]any{"name": name, "labels": labels, "annotations": annotations},
		"spec": map[string]any{
			"name":  "Person " + name,
			"age":   age,
			"email": name + "@loadgen.example.com",
			"tags":  []string{"loadgen", "group-" + strconv.Itoa(i%7)},
		},
	}
	if annotations == nil {
		delete(p["metadata"].(map[string]any), "annotations")
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // only maps of strings and numbers
	}
	return b
}

// padAnnotation is the annotation that pads preloaded persons to
// --preload-size.
const padAnnotation = "loadgen.example.com/pad"

// preloadBody is the create body of the i-th preloaded person, padded to
// about size bytes when it is shorter (size 0: not padded).
func preloadBody(name string, i, size int) []byte {
	labels := map[string]string{"team": "t" + strconv.Itoa(i%10)}
	body := personBody(name, i, labels, nil)
	// The annotation adds its member and its name around the padding.
	pad := size - len(body) - len(`,"annotations":{"":""}`) - len(padAnnotation)
	if pad <= 0 {
		return body
	}
	return personBody(name, i, labels, map[string]string{padAnnotation: strings.Repeat("x", pad)})
}

// errKind names a failure for the error breakdown: the HTTP status, or
// the kind of transport error.
func errKind(status int, err error) string {
	if err == nil {
		return strconv.Itoa(status)
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "conn-refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "conn-reset"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, fasthttp.ErrTimeout):
		return "timeout"
	}
	return "transport"
}
