// Package rolesync keeps an rbac.Resolver in step with the Role and
// RoleBinding objects of the store (Sync), so that a change to a role or a
// binding takes effect on the next request (docs/api.md), and lets writers
// wait until it has (Progress.WaitCurrent).
//
// It watches both models with initial events, turns each object into the
// resolver's view (ToRole, rbac.Binding) and applies it; a watch dropped
// for falling behind is opened again and the resolver reconciled with the
// fresh snapshot. It holds no state of its own beyond the watches and
// makes no decisions: those are the resolver's (runtime/rbac).
//
// It is a package of its own, not a file of rbac, because it reads the
// generated core models, which import the HTTP layer, which imports rbac.
//
// Caller: runtime/access, whose Start runs Sync for as long as the server
// runs; the server's "access control" start-up step waits for its ready
// callback before serving.
package rolesync
