// Package runtime is the root of svc's runtime: the packages that generated
// plugin code links against.
//
// Dependencies run one way: object ← model ← query ← watch ← store ←
// (codec, client, rbac, controller) ← api ← plugin ← server. None of these
// import generated code, so generated packages can depend on them.
//
// The service's own models (Role, RoleBinding, User, PersonalAccessToken,
// Plugin, Post) are generated into generated/core and generated/content
// like any plugin's. The packages that give them behaviour — authn (users
// and tokens), authz (roles and bindings into the resolver), security (built-in roles, the first
// admin, the console API, escalation checks) and content (the content
// module) — sit beside server at the top and use the generated types
// directly: typed clients and compiled validators are the point of the
// generator, and a hand-written mirror of each type would drift. The
// plugin manager reads Plugin objects through a small view of its own, so
// plugin stays below them.
package runtime
