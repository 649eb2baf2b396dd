// Command etcd is the standard etcd server (go.etcd.io/etcd/server/v3,
// etcdmain), built from the Go module proxy for svc's etcd tests and the
// local cluster demo (make etcd, make cluster, runtime/store/etcdtest).
//
// It is a module of its own so that etcd's server, and the replace
// directives it carries, stay out of the root module's graph: a plugin
// author's module never sees them.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
