// Package etcdtest starts etcd clusters for tests (temporary stand-in).
package etcdtest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Cluster is a running etcd cluster.
type Cluster struct {
	endpoints []string
	procs     []*exec.Cmd
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string { return c.endpoints }

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start starts an n-member cluster.
func Start(t testing.TB, n int) *Cluster {
	bin := os.Getenv("SVC_ETCD_BIN")
	if bin == "" {
		bin = "/tmp/etcd-bin"
	}
	c := &Cluster{}
	var peers []string
	var cl, pp []int
	for i := 0; i < n; i++ {
		cl = append(cl, freePort(t))
		pp = append(pp, freePort(t))
		peers = append(peers, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, pp[i]))
	}
	dir := t.TempDir()
	for i := 0; i < n; i++ {
		cu := fmt.Sprintf("http://127.0.0.1:%d", cl[i])
		pu := fmt.Sprintf("http://127.0.0.1:%d", pp[i])
		cmd := exec.Command(bin, "--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(dir, fmt.Sprint(i)),
			"--listen-client-urls", cu, "--advertise-client-urls", cu, "--listen-peer-urls", pu,
			"--initial-advertise-peer-urls", pu, "--initial-cluster", strings.Join(peers, ","), "--log-level", "error")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.procs = append(c.procs, cmd)
		c.endpoints = append(c.endpoints, cu)
	}
	t.Cleanup(func() {
		for _, p := range c.procs {
			p.Process.Kill()
			p.Wait()
		}
	})
	for _, e := range c.endpoints {
		deadline := time.Now().Add(20 * time.Second)
		for {
			resp, err := http.Get(e + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("etcd %s not healthy", e)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}
