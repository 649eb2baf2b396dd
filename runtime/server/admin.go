package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/svcrun/svc/runtime/core"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/dirlock"
)

// adminUsage is the help of the admin subcommand.
const adminUsage = `usage: %[1]s admin reset [--data-dir DIR | --etcd-endpoints E [--etcd-prefix P]] [--user NAME] [--brand-domain DOMAIN]

Offline recovery of a locked-out server: makes NAME (default admin) an
enabled user bound to super-role, creating it if needed, and sets its
password: SVC_ADMIN_PASSWORD, or a random one printed once. On the
embedded store the server must be stopped (its data directory lock is
taken); on etcd the replicas may keep running (docs/deployment.md).
`

// Admin runs the offline administration subcommand ("admin reset") with
// args (those after "admin").
func Admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := func() { fmt.Fprintf(stderr, adminUsage, filepath.Base(os.Args[0])) }
	if len(args) == 0 || args[0] != "reset" {
		usage()
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return flag.ErrHelp
		}
		return errors.New("admin: the only subcommand is reset")
	}
	fs := flag.NewFlagSet("admin reset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage
	brand := os.Getenv("SVC_BRAND_DOMAIN")
	if brand == "" {
		brand = DefaultBrand
	}
	dir := fs.String("data-dir", "./data", "data directory of the stopped server")
	endpoints := fs.String("etcd-endpoints", "", "comma-separated etcd endpoints of the replicas' cluster (instead of --data-dir)")
	prefix := fs.String("etcd-prefix", "/svc/", "the replicas' --etcd-prefix")
	user := fs.String("user", core.AdminUser, "user to make a super administrator")
	fs.StringVar(&brand, "brand-domain", brand, "brand domain of the server (env SVC_BRAND_DOMAIN)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("admin reset: unexpected arguments: %v", fs.Args())
	}
	opts := store.Options{Dir: *dir}
	if *endpoints != "" {
		opts.Dir = ""
		opts.Etcd = &store.EtcdOptions{Endpoints: strings.Split(*endpoints, ","), Prefix: *prefix,
			Username: os.Getenv("SVC_ETCD_USERNAME"), Password: os.Getenv("SVC_ETCD_PASSWORD")}
		*dir = *endpoints + *prefix // for messages
	} else if fi, err := os.Stat(*dir); err != nil || !fi.IsDir() {
		// A mistyped directory must not become a fresh, empty store.
		return fmt.Errorf("admin reset: --data-dir %s is not a data directory", *dir)
	}
	password := os.Getenv("SVC_ADMIN_PASSWORD")
	generated := password == ""
	if generated {
		var err error
		if password, err = core.RandomPassword(); err != nil {
			return err
		}
	}
	st, err := store.Open(opts)
	if errors.Is(err, dirlock.ErrLocked) {
		return fmt.Errorf("admin reset: %s is in use by a running server; stop it first: %w", *dir, err)
	}
	if err != nil {
		return fmt.Errorf("admin reset: open %s: %w", *dir, err)
	}
	created, err := core.ResetAdmin(ctx, st, brand, *user, password)
	if cerr := st.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("admin reset: close the store: %w", cerr)
	}
	if err != nil {
		return fmt.Errorf("admin reset: %w", err)
	}
	what := "reset"
	if created {
		what = "created"
	}
	if generated {
		fmt.Fprintf(stdout, "svc: %s user %q, bound to %s, with password %s (shown once; set SVC_ADMIN_PASSWORD to choose it)\n", what, *user, rbac.SuperRole, password)
	} else {
		fmt.Fprintf(stdout, "svc: %s user %q, bound to %s, with the password from SVC_ADMIN_PASSWORD\n", what, *user, rbac.SuperRole)
	}
	return nil
}
