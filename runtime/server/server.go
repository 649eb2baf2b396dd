package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/svcrun/svc/runtime/api"
	_ "github.com/svcrun/svc/runtime/content" // the built-in content module (docs/api.md)
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/server/accesslog"
	"github.com/svcrun/svc/runtime/server/logbuf"
)

// Config is what a server binary bundles.
type Config struct {
	// Models are registered at start; their indexes are built while the
	// server already answers (/readyz says 503 until they are ready).
	Models []*model.Model
	// Routes mount a model's CRUD API in place of the default routes;
	// generated packages provide them (Register<Kind>Routes).
	Routes map[*model.Model]api.ModelRoutes
	// Out receives the first administrator's generated password (once, on
	// an empty store); nil means the process's stdout.
	Out io.Writer
	// Plugins are started and stopped through their Plugin objects; nil
	// means every plugin registered with plugin.Register (the plugins a
	// custom binary blank-imports).
	Plugins []plugin.Plugin
	// accessLog writes the line of each request in place of the logger;
	// Run sets it to a runtime/server/accesslog on its log buffer.
	accessLog api.AccessLog
}

// Main runs the server with the process's arguments and exits.
func Main(cfg Config) {
	// The store keeps every object in memory and allocates on every write;
	// collecting less often buys write throughput for heap. GOGC still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	run := func() error { return Run(ctx, os.Args[1:], os.Stdout, os.Stderr, cfg) }
	if len(os.Args) > 1 && os.Args[1] == "admin" {
		run = func() error { return Admin(ctx, os.Args[2:], os.Stdout, os.Stderr) }
	}
	if len(os.Args) > 1 && os.Args[1] == "migrate" {
		run = func() error { return Migrate(ctx, os.Args[2:], os.Stdout, os.Stderr) }
	}
	if err := run(); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0) // usage was asked for and printed, as the flag package does
		}
		fmt.Fprintln(os.Stderr, "svc:", err)
		os.Exit(1)
	}
}

// Run serves until ctx ends, then shuts down: stop accepting, finish
// requests in flight, close watches, close the store.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, cfg Config) error {
	f, err := ParseFlags(args, stderr)
	if err != nil {
		return err
	}
	if !f.Pprof {
		// Nothing reads a heap profile without --pprof: stop sampling
		// before the start allocates the store. Samples cost a stack walk
		// each and their records ~1.5 MB for a restart of 100k objects.
		runtime.MemProfileRate = 0
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	// Access lines are batched (at most 100 ms late); warnings and errors
	// go out at once.
	logw := logbuf.New(stderr, 100*time.Millisecond)
	defer logw.Close()
	log := slog.New(logbuf.Handler(slog.NewJSONHandler(logw, &slog.HandlerOptions{Level: level}), logw, slog.LevelWarn))
	if f.CPUProfile != "" {
		out, err := os.Create(f.CPUProfile)
		if err != nil {
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			out.Close()
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := out.Close(); err != nil {
				log.Error("writing the CPU profile", "err", err)
			}
		}()
	}
	if f.MemoryLimit > 0 {
		// Process-wide, as GOMEMLIMIT is; the flag wins over it.
		debug.SetMemoryLimit(f.MemoryLimit)
	}
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		log.Info("memory limit", "bytes", limit)
	}
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if cfg.Out == nil {
		cfg.Out = stdout
	}
	if log.Enabled(ctx, slog.LevelInfo) {
		cfg.accessLog = accesslog.New(logw)
	}
	srv, err := Start(ctx, f, cfg, log, ln)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(stdout, "svc listening on http://%s\n", ln.Addr())
	go releaseAfterStart(ctx, srv, time.Minute)
	select {
	case <-ctx.Done():
	case <-srv.failed(): // a part failed and stopped the others
	}
	return srv.Shutdown(defaultGrace)
}

// releaseAfterStart returns the memory the start used and no longer needs
// (the restored log records, the index build's sorting scratch, the
// controllers' first pass over every object: together more than the
// store's live heap) to the operating system, once the start has settled
// (see settled), after wait at the latest. Otherwise it stays in the
// process: the runtime returns only what lies above its heap goal, three
// times the live heap at GOGC=200, so a restarted server's RSS was twice
// its live heap until writes filled the gap. One collection: 0.2 s of CPU
// for 100k objects here (gctrace).
func releaseAfterStart(ctx context.Context, s *Server, wait time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0 // not in this runtime: release after the start alone
		}
		return sample[0].Value.Uint64()
	}
	if settled(ctx, s.started, allocated, settleTick, wait) {
		debug.FreeOSMemory()
	}
}

// settleTick and settleBytes: the start has settled when, with every
// model built and plugin started, less than settleBytes were allocated in
// one tick. A controller's first pass allocates hundreds of MB a second
// for a large store; an idle server a few KB.
const (
	settleTick  = 500 * time.Millisecond
	settleBytes = 4 << 20
)

// settled waits until started reports true and allocated (the bytes
// allocated so far) grew by less than settleBytes over a tick, or until
// wait has passed; it reports false if ctx ended first.
func settled(ctx context.Context, started func() bool, allocated func() uint64, tick, wait time.Duration) bool {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	t := time.NewTicker(tick)
	defer t.Stop()
	last, have := uint64(0), false
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return true
		case <-t.C:
		}
		if !started() {
			have = false
			continue
		}
		n := allocated()
		if have && n-last < settleBytes {
			return true
		}
		last, have = n, true
	}
}

// started reports whether every model's indexes are built and every
// plugin has started (api.Server.Started, as /readyz sees it).
func (s *Server) started() bool { return s.API != nil && s.API.Started() }
