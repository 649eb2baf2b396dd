// Package rbac decides whether a request is allowed by a set of role rules
// (docs/api.md).
//
// It holds the wire type of a role rule (PolicyRule), the request-info
// parser that turns a method, path, query and upgrade flag into the
// Kubernetes-style attributes rules are matched against (RequestInfo), and
// the rule matcher (RuleAllows, RulesAllow). It is pure Go on net/http and
// net/url types and knows nothing of Gin, the store or users: resolving
// which roles a requester holds (bindings, dependencies, aggregation) is
// the caller's job, and the caller hands the resulting rules in.
//
// Callers: the API middleware parses each request once (ParseRequest) and
// asks RulesAllow; the generator's role checks (generator/roles) use the
// same parser and matcher to build the access matrix of a plugin.
//
// Parsing follows Kubernetes' apiserver request info and Halo's
// RequestInfoFactory; matching follows Halo's RbacRequestEvaluation with
// two of its quirks fixed as docs/api.md asks: every resourceNames entry is
// tried, and "*/sub" matches a subresource of any resource.
package rbac
