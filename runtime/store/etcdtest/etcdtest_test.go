package etcdtest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/store/etcdtest"
)

// The harness's tests talk to etcd through its gRPC gateway (JSON over
// HTTP, keys and values in base64), so the package needs no etcd client.

var client = &http.Client{Timeout: 10 * time.Second}

func call(endpoint, path string, req, resp any) error {
	body, _ := json.Marshal(req)
	r, err := client.Post(endpoint+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", path, r.Status, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, resp)
}

func put(endpoint, key, value string) error {
	var resp struct{}
	return call(endpoint, "/v3/kv/put", map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString([]byte(value)),
	}, &resp)
}

// get is a linearizable read of key: through the leader, so it sees every
// acknowledged put.
func get(endpoint, key string) (string, error) {
	var resp struct {
		Kvs []struct {
			Value []byte `json:"value"` // base64 in JSON
		} `json:"kvs"`
	}
	if err := call(endpoint, "/v3/kv/range", map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))}, &resp); err != nil {
		return "", err
	}
	if len(resp.Kvs) != 1 {
		return "", fmt.Errorf("get %q: %d values", key, len(resp.Kvs))
	}
	return string(resp.Kvs[0].Value), nil
}

func mustPut(t *testing.T, endpoint, key, value string) {
	t.Helper()
	if err := put(endpoint, key, value); err != nil {
		t.Fatalf("put %q at %s: %v", key, endpoint, err)
	}
}

func mustGet(t *testing.T, endpoint, key, want string) {
	t.Helper()
	got, err := get(endpoint, key)
	if err != nil || got != want {
		t.Fatalf("get %q at %s = %q, %v; want %q", key, endpoint, got, err, want)
	}
}

func healthy(endpoint string) bool {
	r, err := client.Get(endpoint + "/health")
	if err != nil {
		return false
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"health":"true"`))
}

func TestOneMember(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1, etcdtest.MaxRequestBytes(8<<10))
	if eps := c.Endpoints(); len(eps) != 1 || !strings.HasPrefix(eps[0], "http://127.0.0.1:") || eps[0] != c.Endpoint(0) {
		t.Fatalf("Endpoints() = %q", eps)
	}
	ep := c.Endpoint(0)
	mustPut(t, ep, "k", "v1")
	mustGet(t, ep, "k", "v1")
	if l := c.Leader(); l != 0 {
		t.Errorf("Leader() = %d, want 0", l)
	}
	// MaxRequestBytes reaches the member: a 16 KiB put is refused.
	if err := put(ep, "big", strings.Repeat("x", 16<<10)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("16 KiB put with --max-request-bytes 8192: %v, want request too large", err)
	}

	c.Stop(0)
	if c.Running(0) || healthy(ep) {
		t.Fatalf("after Stop: running %v, healthy %v", c.Running(0), healthy(ep))
	}
	c.Restart(0)
	if !c.Running(0) || c.Endpoint(0) != ep {
		t.Fatalf("after Restart: running %v, endpoint %s (was %s)", c.Running(0), c.Endpoint(0), ep)
	}
	mustGet(t, ep, "k", "v1") // the same data directory

	c.Kill(0) // no fsync, and nothing lost: the writes were in the page cache
	c.Restart(0)
	mustGet(t, ep, "k", "v1")
	if b, err := os.ReadFile(c.LogPath(0)); err != nil || bytes.Count(b, []byte("=== etcdtest ")) != 3 {
		t.Errorf("log %s: %d runs recorded (%v), want 3", c.LogPath(0), bytes.Count(b, []byte("=== etcdtest ")), err)
	}
	if _, err := os.Stat(filepath.Join(c.DataDir(0), "member")); err != nil {
		t.Errorf("data directory: %v", err)
	}
}

func TestThreeMembers(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 3)
	eps := c.Endpoints()
	if len(eps) != 3 || eps[0] == eps[1] || eps[1] == eps[2] || eps[0] == eps[2] {
		t.Fatalf("Endpoints() = %q", eps)
	}
	for i, ep := range eps {
		if !healthy(ep) {
			t.Fatalf("member %d (%s) not healthy after Start", i, ep)
		}
	}
	mustPut(t, eps[0], "a", "1")
	mustGet(t, eps[2], "a", "1")

	// Kill the leader: the other two keep the quorum and elect another.
	l := c.Leader()
	c.Kill(l)
	if c.Running(l) {
		t.Fatalf("member %d running after Kill", l)
	}
	c.WaitHealthy()
	if nl := c.Leader(); nl == l {
		t.Fatalf("Leader() = %d, the killed member", nl)
	}
	live := eps[(l+1)%3]
	mustPut(t, live, "b", "2")
	mustGet(t, eps[(l+2)%3], "b", "2")

	// Back on its data directory and ports, it catches up.
	c.Restart(l)
	mustGet(t, eps[l], "a", "1")
	mustGet(t, eps[l], "b", "2")

	// Two of three gone (one stopped, one killed): no quorum, no health.
	x, y := (l+1)%3, (l+2)%3
	c.Stop(x)
	c.Kill(y)
	// /health's linearizable read waits for a quorum (etcd's request
	// timeout, ~5 s) before it says so; a member keeps its last leader
	// (pre-vote), so a serializable check would not tell.
	deadline := time.Now().Add(20 * time.Second)
	for healthy(eps[l]) {
		if time.Now().After(deadline) {
			t.Fatalf("member %d still healthy 20 s after the others stopped", l)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.StartMember(x)
	c.StartMember(y)
	c.WaitHealthy()
	for _, ep := range eps {
		mustGet(t, ep, "b", "2")
	}
}

// Binary builds from tools/etcd, whose go.mod must require the etcd
// release the package says it builds (Version, also used outside the
// repository).
func TestVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "tools", "etcd", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "go.etcd.io/etcd/server/v3 " + etcdtest.Version; !bytes.Contains(b, []byte(want)) {
		t.Errorf("tools/etcd/go.mod does not require %s", want)
	}
}
