// Package example is the reference plugin (docs/plugins.md): the Person
// model of api/openapi.yaml and the role templates of extensions/, turned
// into this package's zz_generated files by the go:generate line below.
package example

//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -schema api/openapi.yaml -extensions extensions -out . -package example -plugin example -register
