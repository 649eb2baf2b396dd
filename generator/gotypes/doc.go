// Package gotypes turns a plugin's OpenAPI 3.0 component schemas into Go
// types, using oapi-codegen as a library. Models (the components carrying
// x-svc-model) embed object.Envelope, so that they are runtime Objects.
//
// Before oapi-codegen sees the document, Build works on a copy of it:
// every inline object schema is hoisted into a component of its own, so
// that every JSON object of a model has a named Go struct (and so a
// Validate method; see generator/validators), and every component gets
// its Go type name from TypeName. Build also reports what it declared
// (Result), which the validator generator reads instead of guessing
// oapi-codegen's naming and pointer rules.
//
// Which schema constructs are supported is decided by
// generator/validators.Check; callers run it first. The generator
// (cmd/svcgen) calls this package; nothing at run time does.
package gotypes
