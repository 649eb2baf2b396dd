// Package templates holds the text templates the generator renders, kept
// as files so they read as what they produce. Generated Go code itself is
// built with jennifer (generator/emit, generator/validators) and type
// declarations come from oapi-codegen's own templates; what is left here
// are the files of a custom server build (svcgen build).
package templates

import _ "embed"

// BuildMain is the main.go of a custom server binary: blank imports of the
// plugins and one call to server.Main.
//
//go:embed build/main.go.tmpl
var BuildMain string

// BuildGoMod is the go.mod of a custom server build module.
//
//go:embed build/go.mod.tmpl
var BuildGoMod string
