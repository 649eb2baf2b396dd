package etcdtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// DefaultSnapshotCount is the members' --snapshot-count unless
// SnapshotCount says otherwise: small (etcd's default is 10,000), so tests
// that write a few thousand keys see members snapshot and a restarted
// member catch up from a snapshot.
const DefaultSnapshotCount = 1000

// DefaultTimeout is how long Start, Restart, WaitHealthy and Leader wait
// for members to become healthy or agree on a leader, unless Timeout says
// otherwise.
const DefaultTimeout = 60 * time.Second

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// An Option changes how Start runs the members.
type Option func(*config)

type config struct {
	maxRequestBytes     int
	maxTxnOps           int
	compactionMode      string
	compactionRetention string
	snapshotCount       int
	quotaBackendBytes   int64
	fsync               bool
	logLevel            string
	args                []string
	timeout             time.Duration
}

// MaxRequestBytes sets the members' --max-request-bytes, the largest
// request they take (etcd's default is 1.5 MiB).
func MaxRequestBytes(n int) Option { return func(c *config) { c.maxRequestBytes = n } }

// MaxTxnOps sets the members' --max-txn-ops, the most operations in one
// transaction (etcd's default is 128).
func MaxTxnOps(n int) Option { return func(c *config) { c.maxTxnOps = n } }

// AutoCompaction turns on etcd's automatic compaction (off unless given):
// mode "revision" keeps the last retention revisions ("1000"), mode
// "periodic" the revisions of the last retention period ("1m", "1h").
func AutoCompaction(mode, retention string) Option {
	return func(c *config) { c.compactionMode, c.compactionRetention = mode, retention }
}

// SnapshotCount sets the members' --snapshot-count (DefaultSnapshotCount
// unless given).
func SnapshotCount(n int) Option { return func(c *config) { c.snapshotCount = n } }

// QuotaBackendBytes sets the members' --quota-backend-bytes: past it etcd
// raises the NOSPACE alarm and takes no more writes (2 GiB unless given).
func QuotaBackendBytes(n int64) Option { return func(c *config) { c.quotaBackendBytes = n } }

// Fsync keeps etcd's fsync; without it members run with --unsafe-no-fsync
// (see the package comment).
func Fsync() Option { return func(c *config) { c.fsync = true } }

// LogLevel sets the members' --log-level: debug, info, warn (unless
// given) or error.
func LogLevel(level string) Option { return func(c *config) { c.logLevel = level } }

// Args appends flags to every member's command line, after the harness's
// own (for a flag given twice, etcd takes the last).
func Args(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Timeout sets how long Start, Restart, WaitHealthy and Leader wait
// (DefaultTimeout unless given).
func Timeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// A Cluster is a running etcd cluster of Len members, numbered from 0.
// Its methods may be called from several goroutines.
type Cluster struct {
	t       testing.TB
	bin     string
	cfg     config
	token   string
	initial string // --initial-cluster

	mu sync.Mutex
	m  []*member
}

type member struct {
	name   string
	dir    string // data directory
	log    string // log file, appended to at every start
	client string // client URL
	peer   string // peer URL
	p      *proc  // nil while not running
}

// proc is one run of a member's process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

var clusters atomic.Int64

// Start starts an etcd cluster of n members (1 or 3, usually) on free
// loopback ports, each with its own data directory under t.TempDir(), and
// returns once every member reports itself healthy (it has a leader). If
// a port was taken between choosing and binding it, Start starts again
// on other ports (three times at most). Every member is killed when the
// test ends; if the test failed, each member's last log lines are printed
// first.
func Start(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("etcdtest: Start(%d): a cluster has at least one member", n)
	}
	cfg := config{snapshotCount: DefaultSnapshotCount, logLevel: "warn", timeout: DefaultTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	bin := Binary(t)
	base := t.TempDir() // before the Cleanup below, so it is removed after the members stop
	c := &Cluster{t: t, bin: bin, cfg: cfg}
	t.Cleanup(c.cleanup)
	const attempts = 3
	for attempt := 1; ; attempt++ {
		err := c.bootstrap(filepath.Join(base, "try"+strconv.Itoa(attempt)), n)
		if err == nil {
			return c
		}
		clash := c.portClash()
		if !clash || attempt == attempts {
			t.Fatalf("etcdtest: starting %d members: %v", n, err)
		}
		c.killAll()
		t.Logf("etcdtest: a port was taken (%v); starting again on others", err)
	}
}

func (c *Cluster) bootstrap(dir string, n int) error {
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	c.token = fmt.Sprintf("etcdtest-%d-%d", os.Getpid(), clusters.Add(1))
	ms := make([]*member, n)
	initial := make([]string, n)
	for i := range ms {
		name := "m" + strconv.Itoa(i)
		ms[i] = &member{
			name:   name,
			dir:    filepath.Join(dir, name+".etcd"),
			log:    filepath.Join(dir, name+".log"),
			client: "http://127.0.0.1:" + strconv.Itoa(ports[2*i]),
			peer:   "http://127.0.0.1:" + strconv.Itoa(ports[2*i+1]),
		}
		initial[i] = name + "=" + ms[i].peer
	}
	c.mu.Lock()
	c.m = ms
	c.initial = strings.Join(initial, ",")
	c.mu.Unlock()
	all := make([]int, n)
	for i := range all {
		all[i] = i
		if err := c.launch(i); err != nil {
			return err
		}
	}
	return c.waitHealthy(all)
}

// freePorts returns n distinct ports the kernel had free on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close() // all held until every port is chosen, so they differ
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// launch starts member i's process; it must not be running.
func (c *Cluster) launch(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.m[i]
	if m.p != nil {
		return fmt.Errorf("member %d is running", i)
	}
	cfg := c.cfg
	args := []string{
		"--name", m.name,
		"--data-dir", m.dir,
		"--listen-client-urls", m.client,
		"--advertise-client-urls", m.client,
		"--listen-peer-urls", m.peer,
		"--initial-advertise-peer-urls", m.peer,
		// Read at the first start only; a restart finds its data directory.
		"--initial-cluster", c.initial,
		"--initial-cluster-state", "new",
		"--initial-cluster-token", c.token,
		"--snapshot-count", strconv.Itoa(cfg.snapshotCount),
		"--log-level", cfg.logLevel,
		"--log-outputs", "stderr",
	}
	if !cfg.fsync {
		args = append(args, "--unsafe-no-fsync")
	}
	if cfg.maxRequestBytes > 0 {
		args = append(args, "--max-request-bytes", strconv.Itoa(cfg.maxRequestBytes))
	}
	if cfg.maxTxnOps > 0 {
		args = append(args, "--max-txn-ops", strconv.Itoa(cfg.maxTxnOps))
	}
	if cfg.compactionRetention != "" {
		args = append(args, "--auto-compaction-mode", cfg.compactionMode, "--auto-compaction-retention", cfg.compactionRetention)
	}
	if cfg.quotaBackendBytes > 0 {
		args = append(args, "--quota-backend-bytes", strconv.FormatInt(cfg.quotaBackendBytes, 10))
	}
	args = append(args, cfg.args...)

	logf, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== etcdtest %s: %s %s\n", time.Now().Format(time.RFC3339Nano), c.bin, strings.Join(args, " "))
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	// ETCD_* variables are flags to etcd; one of the caller's must not
	// change a member, nor clash with a flag above (etcd refuses both).
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("member %d: %v", i, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	m.p = p
	return nil
}

// get is a copy of member i; it fails the test if there is none.
func (c *Cluster) get(i int) member {
	c.t.Helper()
	c.mu.Lock()
	n := len(c.m)
	var m member
	if i >= 0 && i < n {
		m = *c.m[i]
	}
	c.mu.Unlock()
	if i < 0 || i >= n { // not under c.mu: Fatalf ends the goroutine
		c.t.Fatalf("etcdtest: no member %d in a cluster of %d", i, n)
	}
	return m
}

// proc is member i's running process, or nil.
func (c *Cluster) proc(i int) *proc { return c.get(i).p }

// gone records that p, member i's process, has exited.
func (c *Cluster) gone(i int, p *proc) {
	c.mu.Lock()
	if c.m[i].p == p {
		c.m[i].p = nil
	}
	c.mu.Unlock()
}

// Len is the number of members.
func (c *Cluster) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Endpoints are the members' client URLs (http://127.0.0.1:port), stopped
// members' included, in member order: what a client of the cluster is
// given.
func (c *Cluster) Endpoints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	eps := make([]string, len(c.m))
	for i, m := range c.m {
		eps[i] = m.client
	}
	return eps
}

// Endpoint is member i's client URL.
func (c *Cluster) Endpoint(i int) string {
	return c.get(i).client
}

// DataDir is member i's data directory.
func (c *Cluster) DataDir(i int) string {
	return c.get(i).dir
}

// LogPath is member i's log file: the output of each of its runs, each
// after a line "=== etcdtest TIME: COMMAND LINE".
func (c *Cluster) LogPath(i int) string {
	return c.get(i).log
}

// Running reports whether member i's process is running (it was started
// and has not exited).
func (c *Cluster) Running(i int) bool {
	p := c.proc(i)
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop stops member i as an operator would: SIGTERM, then waits for it to
// exit (SIGKILL after 10 s). Stopping a member that is not running does
// nothing.
func (c *Cluster) Stop(i int) {
	c.t.Helper()
	p := c.proc(i)
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		c.t.Logf("etcdtest: member %d still running %v after SIGTERM; killing it", i, stopGrace)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	c.gone(i, p)
}

// Kill kills member i (SIGKILL) and waits for it to exit: a crash, with
// nothing flushed or closed. Killing a member that is not running does
// nothing.
func (c *Cluster) Kill(i int) {
	p := c.proc(i)
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	c.gone(i, p)
}

// Restart stops member i if it is running (SIGTERM, as Stop), starts it
// again on its data directory and ports, and waits until it is healthy:
// a majority of the members must be running for that.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.Stop(i)
	c.StartMember(i)
	c.WaitHealthy(i)
}

// StartMember starts member i, which must not be running, on its data
// directory and ports, and returns without waiting: to bring back several
// members of a cluster that lost its quorum, start each, then WaitHealthy.
func (c *Cluster) StartMember(i int) {
	c.t.Helper()
	if p := c.proc(i); p != nil {
		select {
		case <-p.done: // exited by itself
			c.gone(i, p)
		default:
			c.t.Fatalf("etcdtest: StartMember(%d): it is running", i)
		}
	}
	if err := c.launch(i); err != nil {
		c.t.Fatalf("etcdtest: starting member %d: %v", i, err)
	}
}

// WaitHealthy waits until the given members, or every running member if
// none is given, report themselves healthy (each has a leader and no
// alarm), and fails the test after the timeout or if one exits.
func (c *Cluster) WaitHealthy(members ...int) {
	c.t.Helper()
	if len(members) == 0 {
		for i := range c.Len() {
			if c.Running(i) {
				members = append(members, i)
			}
		}
	}
	if err := c.waitHealthy(members); err != nil {
		c.t.Fatalf("etcdtest: %v", err)
	}
}

var httpClient = &http.Client{Timeout: 2 * time.Second}

func (c *Cluster) waitHealthy(members []int) error {
	deadline := time.Now().Add(c.cfg.timeout)
	pending := slices.Clone(members)
	for {
		for k := 0; k < len(pending); {
			i := pending[k]
			p := c.proc(i)
			if p == nil {
				return fmt.Errorf("member %d is not running", i)
			}
			select {
			case <-p.done:
				c.gone(i, p)
				return fmt.Errorf("member %d exited: %v (its log: %s)", i, p.err, c.LogPath(i))
			default:
			}
			if healthy(c.Endpoint(i)) {
				pending = slices.Delete(pending, k, k+1)
			} else {
				k++
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("members %v not healthy after %v", pending, c.cfg.timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// healthy asks endpoint's /health, which answers {"health":"true"} when
// the member has a leader, no alarm, and can serve a read.
func healthy(endpoint string) bool {
	resp, err := httpClient.Get(endpoint + "/health")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&h) == nil && h.Health == "true"
}

// Leader is the index of the member the running members agree leads the
// cluster; it waits for them to agree, and fails the test after the
// timeout.
func (c *Cluster) Leader() int {
	c.t.Helper()
	deadline := time.Now().Add(c.cfg.timeout)
	for {
		if l, ok := c.leader(); ok {
			return l
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("etcdtest: the running members agree on no leader after %v", c.cfg.timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) leader() (int, bool) {
	ids := map[string]int{}
	leader := ""
	for i := range c.Len() {
		if !c.Running(i) {
			continue
		}
		st, err := status(c.Endpoint(i))
		if err != nil || st.Leader == "" || st.Leader == "0" || (leader != "" && st.Leader != leader) {
			return 0, false
		}
		leader = st.Leader
		ids[st.Header.MemberID] = i
	}
	l, ok := ids[leader]
	return l, ok
}

// memberStatus is the part of etcd's Maintenance.Status answer (through
// its gRPC gateway, JSON with 64-bit integers as strings) Leader reads.
type memberStatus struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader string `json:"leader"`
}

func status(endpoint string) (memberStatus, error) {
	var st memberStatus
	resp, err := httpClient.Post(endpoint+"/v3/maintenance/status", "application/json", bytes.NewReader([]byte("{}")))
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("status: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// portClash reports whether a member's log says a port was taken.
func (c *Cluster) portClash() bool {
	for i := range c.Len() {
		if b, err := os.ReadFile(c.LogPath(i)); err == nil && bytes.Contains(b, []byte("address already in use")) {
			return true
		}
	}
	return false
}

func (c *Cluster) killAll() {
	var wg sync.WaitGroup
	for i := range c.Len() {
		wg.Go(func() { c.Kill(i) })
	}
	wg.Wait()
}

func (c *Cluster) cleanup() {
	if c.t.Failed() {
		for i := range c.Len() {
			c.t.Logf("etcdtest: member %d (%s), the end of %s:\n%s", i, c.Endpoint(i), c.LogPath(i), tail(c.LogPath(i), 40))
		}
	}
	c.killAll()
}

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.SplitAfter(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}
