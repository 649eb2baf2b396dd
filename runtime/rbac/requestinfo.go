package rbac

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/svcrun/svc/runtime/query"
)

// RequestInfo is what access control knows about a request: either a
// resource request (group, resource, name, verb) or a non-resource request
// (raw path and verb).
type RequestInfo struct {
	// IsResourceRequest is false for paths outside /api and /apis, for
	// paths too short to name a resource, and for POST <plural>/<name>.
	IsResourceRequest bool
	// Path is the request path as received; nonResourceURLs match it.
	Path string
	// Verb is a Kubernetes verb (get, list, watch, create, update, patch,
	// delete, deletecollection, proxy) for resource requests, "" for an
	// unknown method there, and the lower-case HTTP method for
	// non-resource requests, except POST <plural>/<name>, which keeps
	// create.
	Verb string

	APIPrefix  string // "api" or "apis"
	APIGroup   string // "" under /api
	APIVersion string
	Resource   string
	// Subresource is the segment after the name: persons/{name}/status.
	Subresource string
	Name        string
	// SubName is the segment after the subresource (Halo). Rules see it
	// as the second segment of the name, so resourceNames can say
	// "-/check" or "*/refresh". Deeper segments are not part of any name.
	SubName string
	// Parts are the path segments from the resource on.
	Parts []string
	// Query is the request's query as ParseRequestInfo was given it: the
	// one parse of it (ParseRequest), which handlers read too, so that
	// they act on exactly what access control decided on.
	Query url.Values
}

// CombinedResource is the resource as rules name it: "persons" or
// "persons/status".
func (r *RequestInfo) CombinedResource() string {
	if r.Subresource == "" {
		return r.Resource
	}
	return r.Resource + "/" + r.Subresource
}

// ResourceName is the name as resourceNames patterns see it: "<name>" or
// "<name>/<subName>".
func (r *RequestInfo) ResourceName() string {
	if r.SubName == "" {
		return r.Name
	}
	return r.Name + "/" + r.SubName
}

// ParseRequest returns the request info of r: the one the middleware
// stored on r's context (WithRequestInfo), or else r's method, URL path,
// query and WebSocket upgrade headers parsed with ParseRequestInfo. A
// query that does not parse whole (query.ParseRaw) is an error: access
// control must not decide on part of a request.
func ParseRequest(r *http.Request) (RequestInfo, error) {
	if info, ok := RequestInfoFrom(r.Context()); ok {
		return *info, nil
	}
	q, err := query.ParseRaw(r.URL.RawQuery)
	if err != nil {
		return RequestInfo{}, err
	}
	return ParseRequestInfo(r.Method, r.URL.Path, q, IsWebSocketUpgrade(r.Header)), nil
}

// ParseRequestInfo classifies a request for access control. Accepted
// shapes (segments after the version; empty segments are dropped, as Halo
// does):
//
//	/api/{version}/{resource}[/{name}[/{subresource}[/{subName}[/...]]]]
//	/apis/{group}/{version}/{resource}[/{name}[/{subresource}[/{subName}[/...]]]]
//	/api[s/{group}]/{version}/watch/{resource}[/...]  verb watch
//	/api[s/{group}]/{version}/proxy/{resource}/{name}[/...]  verb proxy, no subresource
//
// Verbs come from the method: GET and HEAD → get, POST → create, PUT →
// update, PATCH → patch, DELETE → delete, others → "". Then:
//   - GET of a collection is list, or watch with ?watch=true (or 1);
//   - DELETE of a collection is deletecollection;
//   - a GET with a WebSocket upgrade on a collection or an object is watch;
//   - POST <resource>/<name> without a subresource is a non-resource
//     request that keeps the verb create (Halo: custom actions such as
//     POST themes/install are matched by nonResourceURLs).
//
// Everything else (/healthz, /apis/{group}/{version}, /apis/{version}/x) is
// a non-resource request whose verb is the lower-case method. Namespaces
// are not parsed: svc and Halo have no namespaced paths, so "namespaces" is
// an ordinary resource name here.
func ParseRequestInfo(method, path string, params url.Values, websocketUpgrade bool) RequestInfo {
	info := RequestInfo{Path: path, Verb: lowerMethod(method), Query: params}

	parts := splitPath(path)
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return info
	}
	prefix := parts[0]
	parts = parts[1:]
	group := ""
	if prefix == "apis" {
		// group, version and at least one more segment
		if len(parts) < 3 {
			return info
		}
		group = parts[0]
		parts = parts[1:]
	}
	info.APIPrefix, info.APIGroup, info.APIVersion = prefix, group, parts[0]
	parts = parts[1:]

	verb := ""
	if parts[0] == "watch" || parts[0] == "proxy" {
		// Kubernetes reports an error for a bare special verb; as a
		// non-resource request only nonResourceURLs "*" can grant it.
		if len(parts) < 2 {
			return info
		}
		verb = parts[0]
		parts = parts[1:]
	} else {
		verb = resourceVerb(method)
	}

	info.IsResourceRequest = true
	info.Parts = parts
	info.Resource = parts[0]
	if len(parts) >= 2 {
		info.Name = parts[1]
	}
	// proxy paths carry a sub-path after the name, not a subresource
	if len(parts) >= 3 && verb != VerbProxy {
		info.Subresource = parts[2]
		if len(parts) >= 4 {
			info.SubName = parts[3]
		}
	}

	switch {
	case verb == VerbCreate && info.Name != "" && info.Subresource == "":
		info.IsResourceRequest = false
	case verb == VerbGet && info.Name == "":
		verb = VerbList
		if watchQuery(params) {
			verb = VerbWatch
		}
	case verb == VerbDelete && info.Name == "":
		verb = VerbDeleteCollection
	}
	if websocketUpgrade && info.Subresource == "" && (verb == VerbList || verb == VerbGet) {
		verb = VerbWatch
	}
	info.Verb = verb
	return info
}

// lowerMethod avoids strings.ToLower's allocation for the usual methods.
func lowerMethod(m string) string {
	switch m {
	case http.MethodGet:
		return "get"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	case http.MethodHead:
		return "head"
	case http.MethodOptions:
		return "options"
	}
	return strings.ToLower(m)
}

func resourceVerb(method string) string {
	switch strings.ToUpper(method) {
	case http.MethodGet, http.MethodHead:
		return VerbGet
	case http.MethodPost:
		return VerbCreate
	case http.MethodPut:
		return VerbUpdate
	case http.MethodPatch:
		return VerbPatch
	case http.MethodDelete:
		return VerbDelete
	}
	return ""
}

// watchQuery reads the first watch parameter as runtime/api does
// (strconv.ParseBool). Kubernetes treats every value but false and 0 as
// true; here a value that is not a boolean is a list request that the API
// then refuses with a 400.
func watchQuery(q url.Values) bool {
	v := q["watch"]
	if len(v) == 0 {
		return false
	}
	b, _ := strconv.ParseBool(v[0])
	return b
}

// splitPath splits on "/" and drops empty segments, so /api/v1//posts is
// /api/v1/posts (Halo; Kubernetes keeps the empty segment).
func splitPath(path string) []string {
	n := 0
	for seg := range strings.SplitSeq(path, "/") {
		if seg != "" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	parts := make([]string, 0, n)
	for seg := range strings.SplitSeq(path, "/") {
		if seg != "" {
			parts = append(parts, seg)
		}
	}
	return parts
}

// IsWebSocketUpgrade reports whether h asks for a WebSocket upgrade:
// Connection mentions "upgrade" and Upgrade names "websocket", both
// case-insensitive. It is deliberately no stricter than the handlers'
// check (Gin looks for "upgrade" anywhere in Connection), so whatever a
// handler would stream as a watch is authorised as one.
func IsWebSocketUpgrade(h http.Header) bool {
	conn := false
	for _, v := range h.Values("Connection") {
		if containsFold(v, "upgrade") {
			conn = true
			break
		}
	}
	if !conn {
		return false
	}
	for _, v := range h.Values("Upgrade") {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "websocket") {
				return true
			}
		}
	}
	return false
}

// containsFold is an ASCII case-insensitive strings.Contains for a
// lower-case needle.
func containsFold(s, lowerNeedle string) bool {
	n := len(lowerNeedle)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], lowerNeedle) {
			return true
		}
	}
	return false
}

type requestInfoKey struct{}

// WithRequestInfo returns a copy of ctx carrying info, so middleware parses
// once and access control, handlers and access logs read the same result.
func WithRequestInfo(ctx context.Context, info *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

// RequestInfoFrom returns the request info stored by WithRequestInfo.
func RequestInfoFrom(ctx context.Context) (*RequestInfo, bool) {
	info, ok := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return info, ok && info != nil
}
