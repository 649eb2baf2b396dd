// Command loadgen measures an svc server serving the example plugin's
// Person model: it preloads persons, then runs timed scenarios (get,
// create, update, list, watch, and mixed, all of them at once) and prints
// one line per scenario with the request count, errors, throughput and
// latency percentiles.
//
// It is meant for a server on the same machine: a URL whose host is not a
// loopback address is refused unless --allow-remote is given, and without
// that flag every connection is checked to go to a loopback address.
//
// Example (the second run trusts the persons the first one loaded):
//
//	loadgen --url http://127.0.0.1:8090 --objects 100000 --duration 10s
//	loadgen --url http://127.0.0.1:8090 --objects 100000 --skip-preload --scenarios list --concurrency 4
//
// By default each worker sends its next request as soon as the last is
// answered (a closed loop), which measures the server at saturation. With
// --rate the requests of get, create, update and list go out on a fixed
// schedule instead (an open loop), and latency runs from when a request
// was due: the way to measure latency at a stated load.
//
// With --server-pid (a server on this machine) each scenario also reports
// the server's CPU time per request (srv-cpu/req, from /proc/<pid>/stat);
// with --cpu-profile FILE it fetches the server's CPU profile of each
// scenario (GET /debug/pprof/profile, on a server started with --pprof,
// as an administrator) into FILE.<scenario>:
//
//	loadgen --objects 100000 --skip-preload --scenarios create,update --server-pid 1234 --cpu-profile /tmp/cpu.pprof
//
// The mixed scenario is the soak (`make soak`): get, list, create, update,
// delete and short watches drawn at random at --rate requests/s in all,
// the store's size held by deleting what it creates, --watchers streams
// open throughout, and the server's memory and descriptors sampled:
//
//	loadgen --objects 10000 --scenarios mixed --rate 500 --watchers 20 --duration 10m --server-pid 1234
//
// The tool is a module of its own (tools/loadgen/go.mod, with a replace
// to the repository's root), so that its HTTP client, fasthttp, is no
// requirement of the root go.mod that plugin modules read. `make loadgen`
// builds bin/loadgen; `make test` runs its tests.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// allScenarios are the scenarios in their default order.
var allScenarios = []string{"get", "create", "update", "list", "watch"}

// knownScenarios adds those that run only when named: mixed, the soak's
// scenario, runs every operation at once.
var knownScenarios = append(slices.Clone(allScenarios), "mixed")

// config is the validated command line.
type config struct {
	URL *url.URL
	// WatchURL, when set, is where the watch scenario's watchers connect
	// while its writes go to URL: another replica of a shared store, so
	// the event latency is the replication lag (docs/deployment.md).
	WatchURL    *url.URL
	User        string
	Password    string
	Concurrency int
	Rate        float64 // requests per second of an open loop; 0: closed loop
	Duration    time.Duration
	Objects     int
	Prefix      string
	Scenarios   []string
	Watchers    int
	WatchRate   float64
	JSON        bool
	AllowRemote bool
	SkipPreload bool
	KeepCreated bool
	Mix         string // operation weights of the mixed scenario
	// PreloadSize pads every preloaded person's create body to about this
	// many bytes with an annotation (0: no padding), so memory per object
	// can be measured at a stated object size.
	PreloadSize int
	// The server's process id and its GODEBUG=gctrace=1 output, sampled
	// during the mixed scenario; 0 and "" to leave them out.
	ServerPID     int
	ServerGCTrace string
	// CPUProfile is the file prefix of the server CPU profiles fetched
	// during each scenario ("": none).
	CPUProfile string
	Strict     bool // exit 1 when any scenario saw errors
}

// parseFlags reads and validates the command line.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rawURL := fs.String("url", "http://127.0.0.1:8090", "base URL of the server")
	rawWatchURL := fs.String("watch-url", "", "base URL of another replica for the watch scenario's watchers (writes still go to --url): measures replication lag")
	user := fs.String("user", "", "user name for HTTP Basic authentication (none when empty)")
	password := fs.String("password", "", "password for HTTP Basic authentication")
	concurrency := fs.Int("concurrency", 32, "concurrent workers (and idle keep-alive connections)")
	rate := fs.Float64("rate", 0, "requests per second, across all workers, of get, create, update and list, sent on a fixed schedule with latency measured from when each was due (0: closed loop, each worker sends as soon as it is answered)")
	duration := fs.Duration("duration", 10*time.Second, "how long each scenario runs")
	objects := fs.Int("objects", 100000, "how many persons to preload (existing ones are kept)")
	preloadSize := fs.Int("preload-size", 0, "pad each preloaded person's create body to about this many bytes with an annotation (0: none; unpadded bodies are about 240 bytes, and the server stores about 80 more)")
	skipPreload := fs.Bool("skip-preload", false, "trust that the --objects persons exist (a server preloaded by an earlier run)")
	prefix := fs.String("prefix", "lg", "name prefix of the objects loadgen creates")
	scenarios := fs.String("scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios to run, in order: "+strings.Join(knownScenarios, ", ")+" (mixed: every operation at once, see --mix)")
	mix := fs.String("mix", defaultMix, "weights of the mixed scenario's operations ("+strings.Join(mixOps, ", ")+"); creates and deletes of this run's persons balance, so the store stays at --objects (+ at most 100)")
	serverPID := fs.Int("server-pid", 0, "process id of the server (same machine): each scenario reports the server's CPU time per request (utime+stime from /proc), and the mixed scenario samples its VmRSS and open descriptors")
	cpuProfile := fs.String("cpu-profile", "", "during each scenario, fetch a CPU profile of the server (GET /debug/pprof/profile, which needs the server's --pprof and an administrator's credentials) into this file with the scenario's name as suffix (FILE.create, …)")
	strict := fs.Bool("strict", false, "exit with status 1 when any scenario fails or reports errors (the soak's verdict)")
	serverGCTrace := fs.String("server-gctrace", "", "file receiving the server's stderr under GODEBUG=gctrace=1: the mixed scenario samples its live heap from it")
	watchers := fs.Int("watchers", 1000, "WebSocket watchers opened by the watch scenario")
	watchRate := fs.Float64("watch-rate", 50, "writes per second during the watch scenario")
	jsonOut := fs.Bool("json", false, "also print the results as JSON")
	allowRemote := fs.Bool("allow-remote", false, "allow a server that is not on a loopback address")
	keepCreated := fs.Bool("keep-created", false, "keep the persons the create and watch scenarios made (by default they are deleted after the run, so the store stays at --objects)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	cfg := &config{
		User: *user, Password: *password, Concurrency: *concurrency, Rate: *rate, Duration: *duration,
		Objects: *objects, Prefix: *prefix, Watchers: *watchers, WatchRate: *watchRate,
		JSON: *jsonOut, AllowRemote: *allowRemote, SkipPreload: *skipPreload, KeepCreated: *keepCreated,
		Mix: *mix, PreloadSize: *preloadSize, ServerPID: *serverPID, ServerGCTrace: *serverGCTrace, Strict: *strict, CPUProfile: *cpuProfile,
	}
	var err error
	if cfg.URL, err = parseServerURL(*rawURL, cfg.AllowRemote); err != nil {
		return nil, err
	}
	if *rawWatchURL != "" {
		if cfg.WatchURL, err = parseServerURL(*rawWatchURL, cfg.AllowRemote); err != nil {
			return nil, err
		}
	}
	if cfg.Scenarios, err = parseScenarios(*scenarios); err != nil {
		return nil, err
	}
	if cfg.Password != "" && cfg.User == "" {
		return nil, errors.New("--password needs --user")
	}
	switch {
	case cfg.Concurrency < 1:
		return nil, errors.New("--concurrency must be at least 1")
	case !(cfg.Rate >= 0 && cfg.Rate <= 1e6):
		return nil, errors.New("--rate must be between 0 (closed loop) and 1000000")
	case cfg.Duration <= 0:
		return nil, errors.New("--duration must be positive")
	case cfg.Objects < 0:
		return nil, errors.New("--objects must not be negative")
	case cfg.PreloadSize < 0 || cfg.PreloadSize > 1<<20:
		return nil, errors.New("--preload-size must be between 0 and 1048576")
	case cfg.Watchers < 1:
		return nil, errors.New("--watchers must be at least 1")
	case !(cfg.WatchRate > 0 && cfg.WatchRate <= 10000):
		return nil, errors.New("--watch-rate must be above 0 and at most 10000")
	}
	if err := validatePrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	if _, err := parseMix(cfg.Mix); err != nil {
		return nil, err
	}
	if cfg.ServerPID < 0 {
		return nil, errors.New("--server-pid must not be negative")
	}
	return cfg, nil
}

// parseServerURL accepts an http or https URL without path, query or
// credentials, whose host is a loopback address unless allowRemote.
func parseServerURL(raw string, allowRemote bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("--url %q: scheme must be http or https", raw)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("--url %q: no host", raw)
	case u.User != nil:
		return nil, fmt.Errorf("--url %q: put credentials in --user and --password", raw)
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("--url %q: give the server's base URL only, without path or query", raw)
	}
	if !allowRemote && !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("--url %q: host %q is not a loopback address; pass --allow-remote to load a server elsewhere", raw, u.Hostname())
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// isLoopbackHost reports whether host is a loopback IP literal or the name
// localhost (RFC 6761 reserves it and its subdomains for loopback). Names
// are not resolved here; the dialer checks the address it connects to.
func isLoopbackHost(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

func parseScenarios(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.ToLower(strings.TrimSpace(part))
		if part == "" {
			continue
		}
		if !slices.Contains(knownScenarios, part) {
			return nil, fmt.Errorf("--scenarios: unknown scenario %q (known: %s)", part, strings.Join(knownScenarios, ", "))
		}
		if !seen[part] {
			seen[part] = true
			out = append(out, part)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--scenarios: no scenario given")
	}
	return out, nil
}

// validatePrefix checks that prefix + "-" + suffix is a valid object name.
func validatePrefix(p string) error {
	if p == "" || len(p) > 100 {
		return errors.New("--prefix must be 1 to 100 characters")
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0) {
			return errors.New("--prefix must be lower case alphanumerics or '-', starting with an alphanumeric")
		}
	}
	return nil
}

// report is what --json prints.
type report struct {
	URL         string    `json:"url"`
	Concurrency int       `json:"concurrency"`
	Rate        float64   `json:"rate,omitempty"`
	Duration    string    `json:"duration"`
	Objects     int       `json:"objects"`
	Results     []*result `json:"results"`
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	c := newClient(cfg)
	loop := "closed loop"
	if cfg.Rate > 0 {
		loop = fmt.Sprintf("open loop at %g requests/s", cfg.Rate)
	}
	fmt.Fprintf(stderr, "loadgen: %s, concurrency %d, %s, %s per scenario, %d objects, run id %s\n",
		cfg.URL, cfg.Concurrency, loop, cfg.Duration, cfg.Objects, c.runID)
	if err := c.waitReady(ctx, time.Minute); err != nil {
		return err
	}
	var results []*result
	var mixed *mixedStats
	var failed []string // scenarios that could not run, for --strict
	if cfg.Objects > 0 && !cfg.SkipPreload {
		r, err := preload(ctx, c, cfg, stderr)
		if r != nil {
			results = append(results, r)
		}
		if err != nil {
			printTable(stdout, results)
			return err
		}
	}
	for _, name := range cfg.Scenarios {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "loadgen: scenario %s (%s)\n", name, cfg.Duration)
		var r *result
		var err error
		meter := startMeter(ctx, c, cfg, name)
		switch name {
		case "get":
			r, err = runGet(ctx, c, cfg)
		case "create":
			r, err = runCreate(ctx, c, cfg)
		case "update":
			r, err = runUpdate(ctx, c, cfg)
		case "list":
			r, err = runList(ctx, c, cfg)
		case "watch":
			r, err = runWatch(ctx, c, cfg, stderr)
		case "mixed":
			var rs []*result
			rs, mixed, err = runMixed(ctx, c, cfg, stderr)
			if err == nil {
				meter.stop(rs[0], stderr)
				if cfg.Rate > 0 {
					rs[0].Notes = strings.TrimSuffix(strings.TrimSpace(fmt.Sprintf("offered %g/s across all operations; %s", cfg.Rate, rs[0].Notes)), ";")
				}
				results = append(results, rs...)
				continue
			}
		}
		meter.stop(r, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "loadgen: scenario %s: %v\n", name, err)
			failed = append(failed, name)
			continue
		}
		if cfg.Rate > 0 && name != "watch" {
			r.OfferedPerSec = cfg.Rate
			r.Notes = strings.TrimSpace(fmt.Sprintf("offered %g/s; %s", cfg.Rate, r.Notes))
		}
		results = append(results, r)
	}
	printTable(stdout, results)
	if mixed != nil {
		printSamples(stdout, mixed.Samples)
	}
	if !cfg.KeepCreated && slices.ContainsFunc(cfg.Scenarios, func(s string) bool { return s == "create" || s == "watch" || s == "mixed" }) {
		// Not timed. A store that grows with every run would make the next
		// run measure more objects than --objects.
		n, err := c.deleteRun(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("delete this run's persons (label %s=%s): %w", runLabel, c.runID, err)
		}
		fmt.Fprintf(stderr, "loadgen: deleted the %d persons this run created\n", n)
	}
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report{URL: cfg.URL.String(), Concurrency: cfg.Concurrency, Rate: cfg.Rate,
			Duration: cfg.Duration.String(), Objects: cfg.Objects, Results: results}); err != nil {
			return err
		}
	}
	if cfg.Strict {
		for _, r := range results {
			if r.Errors > 0 {
				failed = append(failed, fmt.Sprintf("%s (%d errors)", r.Scenario, r.Errors))
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("--strict: %s", strings.Join(failed, ", "))
		}
	}
	return ctx.Err()
}
