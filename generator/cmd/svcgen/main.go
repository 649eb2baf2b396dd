// Command svcgen generates a plugin's Go package from its OpenAPI document
// and role templates. Use it from a //go:generate line in the package:
//
//	//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -schema api/openapi.yaml -extensions extensions -out . -package example
//
// With -check it writes nothing and fails when the files in -out differ
// from what it would generate.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/svcrun/svc/generator"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "svcgen:", strings.ReplaceAll(err.Error(), "\n", "\nsvcgen: "))
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("svcgen", flag.ContinueOnError)
	var cfg generator.Config
	fs.StringVar(&cfg.Schema, "schema", "", "the plugin's OpenAPI 3.0 document (YAML or JSON)")
	fs.StringVar(&cfg.Extensions, "extensions", "", "folder of the plugin's extension files (role templates); empty for none")
	fs.StringVar(&cfg.Out, "out", ".", "folder to write the generated files to")
	fs.StringVar(&cfg.Package, "package", "", "Go package name (default: the output folder's name)")
	fs.StringVar(&cfg.Plugin, "plugin", "", "plugin name that template names and ui-permissions carry (default: the package name)")
	fs.StringVar(&cfg.Brand, "brand-domain", "svc.run", "brand domain whose groups are reserved")
	fs.BoolVar(&cfg.Core, "core", false, "generate the service's own models (reserved groups allowed)")
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
