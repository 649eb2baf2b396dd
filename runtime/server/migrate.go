package server

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/svcrun/svc/runtime/store"
)

const migrateUsage = `usage: %[1]s migrate --from-data-dir DIR --to-etcd ENDPOINTS [--etcd-prefix P] [--force]

Copies every object of a stopped server's data directory into etcd, for
a server that moves from the embedded store to replicas on etcd
(docs/deployment.md, Moving to etcd). It refuses a prefix that already
holds data unless --force, and prints how many objects of each model it
copied. TLS: --etcd-ca, --etcd-cert, --etcd-key; user and password from
SVC_ETCD_USERNAME and SVC_ETCD_PASSWORD.
`

// Migrate runs the migrate subcommand with args (those after "migrate").
func Migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, migrateUsage, filepath.Base(os.Args[0])); fs.PrintDefaults() }
	dir := fs.String("from-data-dir", "", "data directory of the stopped server to copy from")
	endpoints := fs.String("to-etcd", "", "comma-separated etcd endpoints to copy into")
	prefix := fs.String("etcd-prefix", "/svc/", "key prefix the servers will use (their --etcd-prefix)")
	ca := fs.String("etcd-ca", "", "CA certificate file to verify etcd's TLS certificates")
	cert := fs.String("etcd-cert", "", "client certificate file for etcd (TLS)")
	key := fs.String("etcd-key", "", "client key file for etcd (TLS)")
	force := fs.Bool("force", false, "write into a prefix that already holds data")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("migrate: unexpected arguments: %v", fs.Args())
	case *dir == "":
		return fmt.Errorf("migrate: --from-data-dir is required")
	case strings.TrimSpace(*endpoints) == "":
		return fmt.Errorf("migrate: --to-etcd is required")
	}
	// A mistyped directory must not be read as an empty store.
	if fi, err := os.Stat(filepath.Join(*dir, "wal")); err != nil || !fi.IsDir() {
		return fmt.Errorf("migrate: --from-data-dir %s is not a data directory (no wal/ in it)", *dir)
	}
	var eps []string
	for _, e := range strings.Split(*endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	counts, err := store.MigrateToEtcd(ctx, *dir, store.EtcdOptions{Endpoints: eps, Prefix: *prefix, CAFile: *ca, CertFile: *cert, KeyFile: *key,
		Username: os.Getenv("SVC_ETCD_USERNAME"), Password: os.Getenv("SVC_ETCD_PASSWORD")}, *force)
	tables := make([]string, 0, len(counts))
	total := 0
	for t, n := range counts {
		tables = append(tables, t)
		total += n
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(stdout, "%8d  %s\n", counts[t], t)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%8d  objects copied from %s to %s on %s\n", total, *dir, *prefix, strings.Join(eps, ","))
	return nil
}
