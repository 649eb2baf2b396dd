// Package runtime is the root of svc's runtime: the packages that generated
// plugin code links against.
//
// Dependencies run one way: object ← model ← query ← watch ← store ← (auth,
// rbac, controller) ← api ← plugin ← server. Core kinds that are generated
// (Role, RoleBinding, User, Plugin) are read by the runtime through small
// runtime-owned views decoded from stored JSON, so generated code depends on
// the runtime and never the reverse.
package runtime
