// Package runtime is the root of svc's runtime: the packages that generated
// plugin code links against.
//
// Dependencies run one way: object ← model ← query ← watch ← store ←
// (codec, client, rbac, controller) ← api ← plugin ← server. None of these
// import generated code, so generated packages can depend on them.
//
// The service's own models (Role, RoleBinding, User, PersonalAccessToken,
// Plugin, Post) are generated into generated/core and generated/content
// like any plugin's. The packages that give them behaviour sit beside
// server at the top and use the generated types directly: typed clients
// and compiled validators are the point of the generator, and a
// hand-written mirror of each type would drift. They are core (the core
// models registered, the built-in roles, the first administrator), authn
// (who is calling), rbac/rolesync (roles and bindings into rbac's
// resolver), authz (who may do what: the guard on every request and the
// escalation checks), console (the console API), access (which wires
// those together and runs their long-running part) and content (the
// content module). The plugin manager reads Plugin objects through a
// small view of its own, so plugin stays below them.
package runtime
