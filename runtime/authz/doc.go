// Package authz keeps an rbac.Resolver in step with the Role and
// RoleBinding objects of the store (Sync), so that a change to a role or a
// binding takes effect on the next request (docs/api.md).
//
// It watches both models with initial events, turns each object into the
// resolver's view (rbac.Role, rbac.Binding) and applies it; a watch dropped
// for falling behind is opened again and the resolver reconciled with the
// fresh snapshot. It holds no state of its own beyond the watches and
// makes no decisions: those are the resolver's.
//
// Caller: the security setup of runtime/server, which starts Sync at boot
// and waits for its ready callback before serving.
package authz
