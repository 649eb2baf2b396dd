package authz

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/rbac"
)

const identityKey = "svc.identity"

// Challenge is the WWW-Authenticate header of every 401 (docs/api.md).
const Challenge = `Basic realm="svc"`

// Guard authenticates and authorises every request before routing, so a
// caller who may not ask learns nothing, not even whether a path exists.
type Guard struct {
	Authn *authn.Authenticator
	Rules *rbac.Resolver
	// Used, when set, keeps tokens' spec.lastUsed current.
	Used *authn.TokenUse
}

// Check is the api.Options.Guard hook. It decides on the request info
// the API middleware parsed once and carries on the request context
// (rbac.RequestInfoFrom); a request that did not come through that
// middleware is parsed here.
func (g *Guard) Check(c *gin.Context) error {
	info, err := rbac.ParseRequest(c.Request)
	if err != nil {
		return err // a query that does not parse whole: 400, no decision
	}
	if err := wsCredentials(c.Request); err != nil {
		return err
	}
	id, err := g.Authn.AuthenticateFrom(c.Request.Context(), c.Request.Header, c.Request.RemoteAddr)
	if err != nil {
		// A 401 is for requests that need credentials (docs/api.md): a
		// public path (/healthz for a probe with stale credentials) is
		// served as to anyone, which also makes it no password oracle.
		if anon := (authn.Identity{}); g.allows(anon, &info) {
			c.Set(identityKey, anon)
			return nil
		}
		var terr *authn.ThrottledError
		if errors.As(err, &terr) {
			return throttled(terr)
		}
		return Unauthorized("the credentials are not valid")
	}
	c.Set(identityKey, id)
	if id.TokenName != "" && g.Used != nil {
		g.Used.Note(c.Request.Context(), id.TokenName)
	}
	if g.allows(id, &info) {
		return nil
	}
	if !id.Authenticated {
		return Unauthorized("this request needs credentials: HTTP Basic or a personal access token")
	}
	return problem.New(http.StatusForbidden, "user %q is not allowed to %s %s", id.User, info.Verb, describe(&info))
}

// Allows reports whether the caller of c (as the guard identified it) may
// make the request info describes; custom handlers use it for checks
// beyond the request's own path (may this caller publish?).
func (g *Guard) Allows(c *gin.Context, info *rbac.RequestInfo) bool {
	return g.allows(IdentityOf(c), info)
}

func (g *Guard) allows(id authn.Identity, info *rbac.RequestInfo) bool {
	if id.Roles != nil {
		return g.Rules.AuthorizeRoles(id.User, id.Roles, info)
	}
	return g.Rules.Authorize(id.User, info)
}

func describe(info *rbac.RequestInfo) string {
	if !info.IsResourceRequest {
		return info.Path
	}
	s := info.CombinedResource()
	if info.APIGroup != "" {
		s += " in group " + info.APIGroup
	}
	if n := info.ResourceName(); n != "" {
		s += " named " + n
	}
	return s
}

// Unauthorized is a 401 problem with the Challenge, for a request that
// needs a signed-in caller.
func Unauthorized(detail string) error {
	return &problem.Error{Status: http.StatusUnauthorized, Detail: detail, Header: http.Header{"Www-Authenticate": {Challenge}}}
}

// WSCredentialPrefix starts the WebSocket subprotocol that carries a
// browser's Authorization header value, base64url-encoded without
// padding: a browser cannot set headers on a WebSocket (docs/api.md).
const WSCredentialPrefix = "svc.authorization."

// wsCredentials moves the credential subprotocol of a WebSocket upgrade
// with no Authorization header into that header, so it is checked like
// any other; a malformed one is a 400.
func wsCredentials(r *http.Request) error {
	if r.Header.Get("Authorization") != "" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return nil
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			enc, ok := strings.CutPrefix(strings.TrimSpace(p), WSCredentialPrefix)
			if !ok {
				continue
			}
			cred, err := base64.RawURLEncoding.DecodeString(enc)
			if err != nil || len(cred) == 0 {
				return problem.New(http.StatusBadRequest, "the %s WebSocket subprotocol is not base64url (no padding) of an Authorization header value", WSCredentialPrefix+"…")
			}
			r.Header.Set("Authorization", string(cred))
			return nil
		}
	}
	return nil
}

// throttled is the 429 of a sign-in the brake refused unchecked.
func throttled(terr *authn.ThrottledError) error {
	return &problem.Error{Status: http.StatusTooManyRequests,
		Detail: fmt.Sprintf("too many failed sign-ins: limit %q reached; retry in %d s", terr.Limit, terr.RetryAfterSeconds()),
		Header: http.Header{"Retry-After": {strconv.Itoa(terr.RetryAfterSeconds())}}}
}

// IdentityOf returns the identity the guard established for c.
func IdentityOf(c *gin.Context) authn.Identity {
	v, _ := c.Get(identityKey)
	id, _ := v.(authn.Identity)
	return id
}

// identityFrom returns the identity the guard put on a request context
// (gin's context looks string keys up among its values); false for writes
// that do not come through the HTTP API.
func identityFrom(ctx context.Context) (authn.Identity, bool) {
	id, ok := ctx.Value(identityKey).(authn.Identity)
	return id, ok
}

// HeldRules are the rules the caller holds: its effective roles', or its
// token's roles' for a limited token.
func (g *Guard) HeldRules(id authn.Identity) []rbac.PolicyRule {
	if id.Roles != nil {
		// The same set authorization uses for a token: its roles that are
		// in the owner's effective set now, with what flows into them.
		return g.Rules.RulesFor(g.Rules.TokenRoles(id.User, id.Roles))
	}
	return g.Rules.RulesFor(g.Rules.EffectiveRoles(id.User))
}
