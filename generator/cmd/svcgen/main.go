// Command svcgen generates a plugin's Go package from its OpenAPI document
// and role templates. Use it from a //go:generate line in the package:
//
//	//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -schema api/openapi.yaml -extensions extensions -out . -package example
//
// With -check it writes nothing and fails when the files in -out differ
// from what it would generate.
//
// "svcgen build" makes a custom server binary with plugins compiled in,
// like xcaddy does for Caddy (see generator/build):
//
//	svcgen build --with example.com/my/plugin@v1.2.3 --with ./local/plugin -o myserver
//
// See "svcgen build -h" for its flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/svcrun/svc/generator"
)

func main() {
	// Interrupting a build cancels the go commands and still removes the
	// temporary module.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "svcgen:", strings.ReplaceAll(err.Error(), "\n", "\nsvcgen: "))
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	// Generation takes only flags, so a first argument "build" cannot be
	// one of its command lines.
	if len(args) > 0 && args[0] == "build" {
		return runBuild(ctx, args[1:], stderr)
	}
	fs := flag.NewFlagSet("svcgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: svcgen -schema <file> [flags]   generate a plugin's Go package\n"+
			"       svcgen build [flags]             build a custom server binary (svcgen build -h)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	var cfg generator.Config
	fs.StringVar(&cfg.Schema, "schema", "", "the plugin's OpenAPI 3.0 document (YAML or JSON)")
	fs.StringVar(&cfg.Extensions, "extensions", "", "folder of the plugin's extension files (role templates); empty for none")
	fs.StringVar(&cfg.Out, "out", ".", "folder to write the generated files to")
	fs.StringVar(&cfg.Package, "package", "", "Go package name (default: the output folder's name)")
	fs.StringVar(&cfg.Plugin, "plugin", "", "plugin name that template names and ui-permissions carry (default: the package name)")
	fs.StringVar(&cfg.Brand, "brand-domain", "svc.run", "brand domain whose groups are reserved")
	fs.BoolVar(&cfg.Core, "core", false, "generate the service's own models (reserved groups allowed)")
	fs.BoolVar(&cfg.Lenient, "lenient", false, "report role templates' soft issues as warnings, not errors: breaches of the plugin conventions of docs/plugins.md (name prefix, rules on resources the plugin does not serve, foreign dependencies and UI permissions) and parts that grant nothing (rules that never match, label keys as annotations); for templates ported from Halo")
	fs.BoolVar(&cfg.Register, "register", false, "also generate a Plugin type (name, extension files, document) registered from init; the package then writes only its Start method")
	cfg.Warn = func(msg string) { fmt.Fprintln(stderr, "svcgen: warning:", msg) }
	check := fs.Bool("check", false, "write nothing; fail when the generated files are out of date")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.Schema == "" {
		return fmt.Errorf("-schema is required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *check {
		return generator.Check(cfg)
	}
	return generator.Write(cfg)
}
