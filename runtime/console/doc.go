// Package console serves the console API of users, permissions and
// personal access tokens under /apis/api.console.<brand>/v1alpha1, and
// Halo's user-centre token API under
// /apis/uc.api.security.<brand>/v1alpha1/personalaccesstokens, in Halo's
// shapes so that Halo's clients work unmodified (docs/api.md).
//
//   - console.go: users (create, read, password), permissions (read,
//     grant) and the caller's own tokens; console.openapi.yaml documents
//     both APIs and is merged into /openapi.json.
//   - tokens_uc.go: the user-centre token API, and issuing a token for
//     either.
//
// It decides nothing about access: the guard (runtime/authz) has admitted
// each request before a handler runs, and the handlers ask
// authz.Escalation before they grant roles or limit a token to them, and
// authz.LastSuper before a grant unbinds a super administrator. Bindings
// are written by runtime/core (SetRoles), passwords hashed by
// runtime/authn. runtime/access builds the Console and the server mounts
// its Routes.
package console
