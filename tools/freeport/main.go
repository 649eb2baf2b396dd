// Command freeport prints a free TCP port on the loopback interface, or,
// with -wait URL, waits until URL answers 200: for scripts that start
// servers (tools/etcd-matrix.sh, tools/cluster.sh) on machines that may
// have no curl.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	wait := flag.String("wait", "", "URL to poll until it answers 200 (and contains -body)")
	body := flag.String("body", "", "text the answer must contain")
	timeout := flag.Duration("timeout", 10*time.Second, "how long -wait waits")
	flag.Parse()
	if *wait != "" {
		os.Exit(waitFor(*wait, *body, *timeout))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "freeport:", err)
		os.Exit(1)
	}
	defer l.Close()
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
}

func waitFor(url, body string, timeout time.Duration) int {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		if res, err := c.Get(url); err == nil {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
			res.Body.Close()
			if res.StatusCode == http.StatusOK && strings.Contains(string(b), body) {
				return 0
			}
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "freeport: %s did not answer 200 within %v\n", url, timeout)
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
}
