// Package api is the HTTP layer: a Gin engine rebuilt and swapped
// atomically whenever the served models or route sets change, the generic
// CRUD routes of every registered model (docs/api.md and §4: list, create,
// get, update, patch, delete, delete-collection, the status subresource
// and watch over WebSocket), strict body decoding with errors that name
// the field, health and readiness, /openapi.json and the Swagger UI.
//
// Errors become RFC 7807 bodies in api/problem, the only place that picks
// status codes. runtime/server composes this with the store; plugins mount
// their custom routes through Server.Mount.
package api
