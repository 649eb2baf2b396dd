// Package openapi describes the served HTTP API as one OpenAPI 3.0 document
// (docs/api.md, §4, §5, §8).
//
// Build writes, for every registered *model.Model, the generic CRUD paths
// (list, watch, create, delete-collection, get, update, patch, delete and
// the status subresource) with their query parameters, the nine-field list
// shape and the application/problem+json error responses; it adds the core
// endpoints (/healthz, /readyz, /openapi.json), the basicAuth and bearerAuth
// security schemes, and merges in further documents (per-plugin documents
// and custom APIs) without letting one silently overwrite another. JSON
// renders a document deterministically.
//
// Operation ids are lowerCamel, verb first (listPerson, createConsoleUser;
// docs/api.md), and no two are alike once case and punctuation are
// dropped (OperationIDKey): client generators such as oapi-codegen name
// methods that way, and a clash would not compile.
//
// Metadata is described once, by the ObjectMeta component, which is
// schemas/base.yaml's: the generator puts the same schema into every
// model, and a model schema whose metadata is that one refers to the
// component instead of repeating it.
//
// A *model.Model carries no field schema, so an object's spec and status
// are free-form unless the caller supplies the real schema through
// Options.Schemas (the generator will). This package serves nothing and
// caches nothing: the HTTP layer (runtime/api) serves the bytes at
// /openapi.json, and the Swagger UI (runtime/api/swaggerui) reads them from
// there.
package openapi
