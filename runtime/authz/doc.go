// Package authz decides who may do what (docs/api.md, "Authorization"):
// every request, and every write that hands out permissions.
//
//   - guard.go is the Guard in front of every request (api.Options.Guard):
//     it asks runtime/authn who is calling and the resolver (runtime/rbac)
//     whether that caller's roles allow the request info the API
//     middleware parsed once and carries on the request context. It
//     answers 401 (with the Challenge), 403 or 429 before routing, so a
//     caller who may not ask learns nothing, and leaves the identity on
//     the request (IdentityOf) for the handlers.
//   - escalation.go lets no one hand out a permission they lack: writes of
//     roles and bindings through the generic API, the console's grants and
//     a token's roles (Escalation).
//   - supers.go keeps at least one enabled user bound to super-role
//     (LastSuper).
//
// It decides from the resolver and the stored roles and starts nothing;
// runtime/access wires it to the core models and the console API.
package authz
