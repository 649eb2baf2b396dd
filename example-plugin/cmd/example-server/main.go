// Command example-server is a custom svc server binary: the core (users,
// roles, the console API) plus the plugins it imports, here the example
// plugin. Any server binary has this shape: blank imports of plugins and
// one call to server.Main. `svcgen build --with <plugin>` writes and builds
// such a file for any list of plugins.
package main

import (
	_ "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/server"
)

func main() { server.Main(server.Config{}) }
