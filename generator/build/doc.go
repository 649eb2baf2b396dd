// Package build makes custom server binaries, the way xcaddy makes custom
// Caddy builds: it writes a throw-away Go module whose main package
// blank-imports the chosen plugin packages (each calls plugin.Register
// from init) and calls server.Main, then runs the go command to resolve
// and compile it.
//
// It holds the Builder, the parsing of svcgen's --with arguments and the
// templates of the generated main.go and go.mod. It never links the
// runtime: import paths are strings, and all compiling is done by a child
// go command. generator/cmd/svcgen ("svcgen build") is its caller.
package build
