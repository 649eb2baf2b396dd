// Package generated holds the code the generator emits for the service's
// own models (schemas/core.yaml, schemas/content.yaml, schemas/kinds.yaml);
// `make generate` rewrites it and `make test` fails when it is out of date.
package generated

//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -core -schema ../schemas/core.yaml -out core -package core
//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -core -schema ../schemas/content.yaml -out content -package content
//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -core -schema ../schemas/kinds.yaml -out kinds -package kinds
