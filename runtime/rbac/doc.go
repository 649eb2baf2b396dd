// Package rbac is role-based access control's model and its decision: what
// a request asks (RequestInfo), what a rule allows (PolicyRule, RuleAllows,
// RulesAllow), and which rules a user holds (Resolver) (docs/api.md).
//
//   - requestinfo.go parses a method, path, query and upgrade flag into the
//     Kubernetes-style attributes rules are matched against (ParseRequest,
//     ParseRequestInfo), and carries the one parse of a request on its
//     context (WithRequestInfo, RequestInfoFrom).
//   - rule.go matches rules against request info.
//   - resolve*.go and tokens.go hold the Resolver: each user's bound roles,
//     their effective roles (dependencies and aggregation, to a fixed
//     point), a personal access token's roles, and the decisions made from
//     them (Authorize, AuthorizeRoles), plus what the escalation checks ask
//     (RulesFor, RulesWith, Reached, RulesCover).
//
// It is pure Go on net/http and net/url types and knows nothing of Gin,
// the store or users: the Resolver is told about roles and bindings
// (PutRole, PutBinding, …) by runtime/rbac/rolesync, which follows the
// stored ones.
//
// Callers: the API middleware (runtime/api) parses each request once;
// runtime/authz asks the Resolver on every request and before a write
// hands out roles; the generator's role checks (generator/roles) use the
// same parser and matcher to build the access matrix of a plugin.
//
// Parsing follows Kubernetes' apiserver request info and Halo's
// RequestInfoFactory; matching follows Halo's RbacRequestEvaluation with
// two of its quirks fixed as docs/api.md asks: every resourceNames entry is
// tried, and "*/sub" matches a subresource of any resource.
package rbac
