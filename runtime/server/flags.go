package server

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
)

// DefaultBrand is the brand domain when none is configured (docs/operations.md).
const DefaultBrand = model.DefaultBrand

// Flags are the command-line settings (docs/operations.md).
type Flags struct {
	Addr        string
	DataDir     string
	BrandDomain string
	LogLevel    string
	// Memory keeps everything in memory (nothing persisted); for demos.
	Memory bool
	// CPUProfile names a file to write a CPU profile to, from start to
	// shutdown (diagnostics; empty for none).
	CPUProfile string
	// MemoryLimit is the Go runtime's soft memory limit in bytes
	// (debug.SetMemoryLimit); 0 leaves the runtime's own, which is
	// GOMEMLIMIT if set, else none (docs/operations.md, Memory).
	MemoryLimit int64
	// Pprof serves Go's profiles under /debug/pprof/ (PprofPath), to
	// holders of super-role only.
	Pprof bool
	// Connection timeouts and limits; zero takes the Default..., a
	// negative value turns one off.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxConns          int
	MaxConnsPerClient int
	// Etcd: with Endpoints set, the store is a replica of objects kept in
	// an etcd cluster instead of the data directory (docs/deployment.md).
	Etcd EtcdFlags
}

// EtcdFlags select and reach the etcd backend.
type EtcdFlags struct {
	Endpoints      []string
	Prefix         string
	CA, Cert, Key  string
	Username       string // env SVC_ETCD_USERNAME
	Password       string // env SVC_ETCD_PASSWORD; never a flag (ps shows flags)
	MaxObjectBytes int
}

// Enabled reports whether the etcd backend is selected.
func (e EtcdFlags) Enabled() bool { return len(e.Endpoints) > 0 }

// minMemoryLimit is the smallest --memory-limit taken: below it the
// server would do little but collect garbage.
const minMemoryLimit = 32 << 20

// parseMemoryLimit reads a size such as 512MiB, 2GB or 1.5GiB (bytes
// without a unit); units are IEC (KiB, MiB, GiB) or SI (kB, MB, GB).
func parseMemoryLimit(v string) (int64, error) {
	n, err := humanize.ParseBytes(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("not a size such as 512MiB or 2GB: %q", v)
	case n < minMemoryLimit:
		return 0, fmt.Errorf("%s is below the smallest limit taken, 32MiB", v)
	case n > math.MaxInt64:
		return 0, fmt.Errorf("%s is too large", v)
	}
	return int64(n), nil
}

// ParseFlags reads args; the environment variable SVC_BRAND_DOMAIN is the
// default of --brand-domain.
func ParseFlags(args []string, stderr io.Writer) (Flags, error) {
	var f Flags
	fs := flag.NewFlagSet("svc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	brand := os.Getenv("SVC_BRAND_DOMAIN")
	if brand == "" {
		brand = DefaultBrand
	}
	fs.StringVar(&f.Addr, "addr", "127.0.0.1:8090", "address to listen on")
	fs.StringVar(&f.DataDir, "data-dir", "./data", "data directory (write-ahead log, snapshots)")
	fs.StringVar(&f.BrandDomain, "brand-domain", brand, "brand domain of labels, annotations and reserved groups (env SVC_BRAND_DOMAIN)")
	fs.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&f.Memory, "memory", false, "keep data in memory only (nothing is persisted)")
	fs.StringVar(&f.CPUProfile, "cpu-profile", "", "write a CPU profile (go tool pprof) to this file until shutdown")
	fs.Func("memory-limit", "soft limit of the Go runtime's memory, e.g. 512MiB or 2GB: the heap is collected more often as it nears it (default: GOMEMLIMIT, else none)", func(v string) error {
		n, err := parseMemoryLimit(v)
		f.MemoryLimit = n
		return err
	})
	fs.BoolVar(&f.Pprof, "pprof", false, "serve Go's profiles (net/http/pprof) under /debug/pprof/ to holders of super-role")
	fs.DurationVar(&f.ReadHeaderTimeout, "read-header-timeout", DefaultReadHeaderTimeout, "time allowed to read a request's headers (negative: none)")
	fs.DurationVar(&f.ReadTimeout, "read-timeout", DefaultReadTimeout, "time allowed to read a whole request, headers and body (negative: none)")
	fs.DurationVar(&f.WriteTimeout, "write-timeout", DefaultWriteTimeout, "time allowed to handle a request and write the answer, from the end of its headers; watches are exempt (negative: none)")
	fs.DurationVar(&f.IdleTimeout, "idle-timeout", DefaultIdleTimeout, "time a kept-alive connection may wait for its next request (negative: none)")
	fs.IntVar(&f.MaxConns, "max-conns", DefaultMaxConns, "open connections at most, watches included; more wait to be accepted (negative: no limit)")
	fs.IntVar(&f.MaxConnsPerClient, "max-conns-per-client", DefaultMaxConnsPerClient, "open connections at most from one client address (IPv6: one /64); more are answered 429 (negative: no limit)")
	var endpoints string
	fs.StringVar(&endpoints, "etcd-endpoints", "", "comma-separated etcd endpoints (host:port or http(s)://host:port): keep objects in etcd, shared by every replica started with the same endpoints and prefix, instead of --data-dir")
	fs.StringVar(&f.Etcd.Prefix, "etcd-prefix", "/svc/", "key prefix of this service's objects in etcd")
	fs.StringVar(&f.Etcd.CA, "etcd-ca", "", "CA certificate file to verify etcd's TLS certificates")
	fs.StringVar(&f.Etcd.Cert, "etcd-cert", "", "client certificate file for etcd (TLS)")
	fs.StringVar(&f.Etcd.Key, "etcd-key", "", "client key file for etcd (TLS)")
	fs.IntVar(&f.Etcd.MaxObjectBytes, "etcd-max-object-bytes", store.DefaultEtcdMaxValueBytes, "largest stored object the etcd backend takes; keep it below etcd's --max-request-bytes")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if endpoints = strings.TrimSpace(endpoints); endpoints != "" {
		for _, e := range strings.Split(endpoints, ",") {
			if e = strings.TrimSpace(e); e != "" {
				f.Etcd.Endpoints = append(f.Etcd.Endpoints, e)
			}
		}
		f.Etcd.Username = os.Getenv("SVC_ETCD_USERNAME")
		f.Etcd.Password = os.Getenv("SVC_ETCD_PASSWORD")
		if f.Memory {
			return f, fmt.Errorf("--memory and --etcd-endpoints exclude each other")
		}
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return f, nil
}
