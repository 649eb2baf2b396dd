package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// every architecture Linux exposes to user space through /proc.
const userHZ = 100

// procCPU returns the CPU time (user + system) process pid has used so
// far, read from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("server pid %d: %w", pid, err)
	}
	return parseProcCPU(string(raw))
}

// parseProcCPU reads utime and stime (fields 14 and 15) from the text of
// a /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// hold spaces or parentheses itself, so fields are counted after its last
// closing parenthesis.
func parseProcCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("/proc stat: CPU time %q is not a tick count", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// serverMeter measures the server around one scenario: its CPU time
// (--server-pid) and a CPU profile fetched from its pprof endpoint for
// the scenario's duration (--cpu-profile).
type serverMeter struct {
	pid     int
	cpu0    time.Duration
	cpuErr  error
	profile chan error // the fetch's outcome; nil without --cpu-profile
	file    string
}

// startMeter starts measuring scenario name; stop finishes it.
func startMeter(ctx context.Context, c *client, cfg *config, name string) *serverMeter {
	m := &serverMeter{pid: cfg.ServerPID}
	if m.pid > 0 {
		m.cpu0, m.cpuErr = procCPU(m.pid)
	}
	if cfg.CPUProfile != "" {
		m.file = cfg.CPUProfile + "." + name
		m.profile = make(chan error, 1)
		go func() { m.profile <- c.fetchProfile(ctx, cfg.Duration, m.file) }()
	}
	return m
}

// stop records the server's CPU per request in r (when r counted any)
// and waits for the profile, whose failure is only reported on stderr: the
// scenario's figures stand without it.
func (m *serverMeter) stop(r *result, stderr io.Writer) {
	if m.pid > 0 && m.cpuErr == nil {
		cpu1, err := procCPU(m.pid)
		m.cpuErr = err
		if err == nil && r != nil && r.Requests > 0 {
			r.ServerCPUPerReqUs = float64(cpu1-m.cpu0) / float64(time.Microsecond) / float64(r.Requests)
		}
	}
	if m.cpuErr != nil {
		fmt.Fprintf(stderr, "loadgen: server CPU: %v\n", m.cpuErr)
	}
	if m.profile != nil {
		if err := <-m.profile; err != nil {
			fmt.Fprintf(stderr, "loadgen: CPU profile: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "loadgen: CPU profile written to %s\n", m.file)
		}
	}
}

// fetchProfile asks the server for a CPU profile of the next d (GET
// /debug/pprof/profile?seconds=…, with the run's credentials) and writes
// it to file. It goes through net/http (the WebSocket client's dialer,
// loopback only unless --allow-remote): one long request on a connection
// of its own, so it takes no worker's.
func (c *client) fetchProfile(ctx context.Context, d time.Duration, file string) error {
	secs := max(int((d+time.Second-1)/time.Second), 1)
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), nil)
	if err != nil {
		return err
	}
	req.Header = c.authHeader()
	// The answer's headers come when the profile ends: no header timeout.
	t := c.ws.Transport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 0
	defer t.CloseIdleConnections()
	resp, err := (&http.Client{Transport: t, CheckRedirect: c.ws.CheckRedirect}).Do(req)
	if err != nil {
		return fmt.Errorf("GET /debug/pprof/profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET /debug/pprof/profile: %s: %s (is the server started with --pprof, and are the credentials an administrator's?)", resp.Status, strings.TrimSpace(string(msg)))
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	return f.Close()
}
