// Package server is the composition root: it reads flags, opens the store,
// registers the models, serves the HTTP API and shuts everything down in
// reverse order on SIGTERM or SIGINT. A custom server binary is a main that
// calls Main.
//
// Start runs the start-up steps of start.go in dependency order (store,
// access control, models, HTTP API, plugins, serve). Each step builds its
// part from the parts before it, never from a later one, and hands its
// long-running work to a group of Runnables (runnable.go), which stops
// them in reverse at Shutdown, when a later step fails, or when one of
// them fails. flags.go holds the command line, openapi.go the merged
// /openapi.json, conn.go the connection limits, admin.go "admin reset".
package server
