// Package server is the composition root: it reads flags, opens the store,
// registers the models, serves the HTTP API and shuts everything down in
// reverse order on SIGTERM or SIGINT. A custom server binary is a main that
// calls Main.
package server
