package console

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/authz"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// UserCentreTokenBase is where Halo's user-scoped token API is served for
// brand: /apis/uc.api.security.<brand>/v1alpha1/personalaccesstokens.
func UserCentreTokenBase(brand string) string {
	return "/apis/uc.api.security." + brand + "/v1alpha1/personalaccesstokens"
}

// userCentreTokenRoutes mounts Halo's user-scoped token API (its
// PatEndpoint): the caller's own tokens only, in Halo's shapes, so that
// Halo's api-client manages them unmodified.
func (k *Console) userCentreTokenRoutes(r gin.IRouter) {
	h := func(f func(c *gin.Context) error) gin.HandlerFunc {
		return func(c *gin.Context) {
			if err := f(c); err != nil {
				k.Fail(c, err)
			}
		}
	}
	g := r.Group(UserCentreTokenBase(k.Brand))
	g.POST("", h(k.ucGenerate))
	g.GET("", h(k.ucList))
	g.GET("/:name", h(k.ucGet))
	g.PUT("/:name/actions/revocation", h(k.ucRevoke))
	g.PUT("/:name/actions/restoration", h(k.ucRestore))
	g.DELETE("/:name", h(k.ucDelete))
}

// signedIn is the caller's name. No role grants these routes to anonymous
// callers; this guards against a role that would.
func signedIn(c *gin.Context) (string, error) {
	id := authz.IdentityOf(c)
	if !id.Authenticated || id.User == "" {
		return "", authz.Unauthorized("personal access tokens belong to a signed-in user; sign in first")
	}
	return id.User, nil
}

// optionalTime is a date-time where "" and null mean absent: Halo's
// console sends "expiresAt": "" for a token that never expires.
type optionalTime struct{ t *time.Time }

func (o *optionalTime) UnmarshalJSON(b []byte) error {
	if s := string(b); s == "null" || s == `""` {
		o.t = nil
		return nil
	}
	var t time.Time
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	o.t = &t
	return nil
}

// ucTokenRequest is the PersonalAccessToken Halo's clients post. Like
// Halo, fields it sets itself (spec.username, tokenId, revoked, …) and
// unknown ones are ignored.
type ucTokenRequest struct {
	Metadata struct {
		Name         string            `json:"name"`
		GenerateName string            `json:"generateName"`
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Name        string       `json:"name"`
		Description string       `json:"description"`
		ExpiresAt   optionalTime `json:"expiresAt"`
		Roles       []string     `json:"roles"`
		Scopes      []string     `json:"scopes"`
	} `json:"spec"`
}

// tokenParams is a token to issue, from either token API.
type tokenParams struct {
	Name, GenerateName  string
	Labels, Annotations map[string]string
	DisplayName         string
	Description         string
	// Roles nil is "absent": see PinBound.
	Roles  []string
	Scopes []string
	// PinBound makes absent Roles the creator's bound roles (the console
	// API's rule); otherwise absent Roles are none, as in Halo.
	PinBound  bool
	ExpiresAt *time.Time
}

func (k *Console) ucGenerate(c *gin.Context) error {
	owner, err := signedIn(c)
	if err != nil {
		return err
	}
	body, err := api.ReadJSONBody(c)
	if err != nil {
		return err
	}
	var req ucTokenRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return problem.Invalid("cannot decode the personal access token: " + err.Error())
	}
	if strings.TrimSpace(req.Spec.Name) == "" {
		return problem.Invalid("the personal access token is invalid; see errors", object.FieldError{Field: "spec.name", Message: "is required"})
	}
	t, err := k.issueToken(c, owner, tokenParams{
		Name: req.Metadata.Name, GenerateName: req.Metadata.GenerateName,
		Labels: req.Metadata.Labels, Annotations: req.Metadata.Annotations,
		DisplayName: req.Spec.Name, Description: req.Spec.Description,
		Roles: req.Spec.Roles, Scopes: req.Spec.Scopes, ExpiresAt: req.Spec.ExpiresAt.t,
	})
	if err != nil {
		return err
	}
	// Halo answers 200 here, not 201.
	c.JSON(http.StatusOK, t)
	return nil
}

// issueToken creates a token of owner and returns it with the token in
// the access-token annotation, the only time it is ever shown.
func (k *Console) issueToken(c *gin.Context, owner string, p tokenParams) (*core.PersonalAccessToken, error) {
	if err := k.Escalation.MayLimitTo(c, authz.IdentityOf(c), owner, p.Roles); err != nil {
		return nil, err
	}
	if p.ExpiresAt != nil && !p.ExpiresAt.After(k.now()) {
		return nil, problem.Invalid("the token request is invalid; see errors", object.FieldError{Field: "spec.expiresAt", Message: "must be in the future"})
	}
	roles := p.Roles
	if roles == nil && p.PinBound {
		// Pinned to what the creator is bound to today, not to roles
		// granted later; a request made with a token keeps to its roles.
		roles = k.Rules.BoundRoles(owner)
		if id := authz.IdentityOf(c); id.Roles != nil {
			roles = slices.DeleteFunc(roles, func(r string) bool { return !slices.Contains(id.Roles, r) })
		}
	}
	if roles == nil {
		roles = []string{}
	}
	token, hash, err := authn.NewToken()
	if err != nil {
		return nil, err
	}
	id, err := authn.NewTokenID()
	if err != nil {
		return nil, err
	}
	t := &core.PersonalAccessToken{}
	t.Metadata.Name = p.Name
	t.Metadata.GenerateName = p.GenerateName
	if p.Name == "" && p.GenerateName == "" {
		t.Metadata.GenerateName = "pat-" + owner + "-"
	}
	t.Metadata.Labels = p.Labels
	t.Metadata.Annotations = p.Annotations
	// Never store a token, not even one a client made up.
	delete(t.Metadata.Annotations, k.AccessTokenAnnotation())
	t.Spec.Name = &p.DisplayName
	if p.DisplayName == "" {
		t.Spec.Name = nil
	}
	if p.Description != "" {
		t.Spec.Description = &p.Description
	}
	t.Spec.Username = owner
	t.Spec.TokenID = &id
	t.Spec.TokenHash = hash
	t.Spec.Roles = roles
	t.Spec.Scopes = p.Scopes
	t.Spec.ExpiresAt = p.ExpiresAt
	created, err := k.Tokens.Create(c, t)
	if err != nil {
		return nil, err
	}
	if created.Metadata.Annotations == nil {
		created.Metadata.Annotations = map[string]string{}
	}
	created.Metadata.Annotations[k.AccessTokenAnnotation()] = token
	return created, nil
}

// tokenOf returns owner's token called name; another user's is not found,
// so that names say nothing about others' tokens.
func (k *Console) tokenOf(c *gin.Context, owner, name string) (*core.PersonalAccessToken, error) {
	t, err := k.Tokens.Get(c, name)
	if err != nil {
		return nil, err
	}
	if t.Spec.Username != owner {
		return nil, &store.NotFoundError{Kind: core.PersonalAccessTokenKind, Name: name}
	}
	return t, nil
}

// ucToken is the signed-in caller's token named in the path.
func (k *Console) ucToken(c *gin.Context) (*core.PersonalAccessToken, error) {
	owner, err := signedIn(c)
	if err != nil {
		return nil, err
	}
	return k.tokenOf(c, owner, c.Param("name"))
}

func (k *Console) ucList(c *gin.Context) error {
	owner, err := signedIn(c)
	if err != nil {
		return err
	}
	res, err := k.Tokens.List(c, client.ListOptions{FieldSelector: []string{core.PersonalAccessTokenIndexSpecUsername + "=" + owner}})
	if err != nil {
		return fmt.Errorf("console: list tokens of %s: %w", owner, err)
	}
	// Halo answers a plain array, newest first.
	items := append([]*core.PersonalAccessToken{}, res.Items...)
	slices.SortStableFunc(items, func(a, b *core.PersonalAccessToken) int {
		return cmp.Or(timeOf(b).Compare(timeOf(a)), strings.Compare(a.Metadata.Name, b.Metadata.Name))
	})
	c.JSON(http.StatusOK, items)
	return nil
}

func timeOf(t *core.PersonalAccessToken) time.Time {
	if ts := t.Metadata.CreationTimestamp; ts != nil {
		return *ts
	}
	return time.Time{}
}

func (k *Console) ucGet(c *gin.Context) error {
	t, err := k.ucToken(c)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, t)
	return nil
}

func (k *Console) ucRevoke(c *gin.Context) error  { return k.ucSetRevoked(c, true) }
func (k *Console) ucRestore(c *gin.Context) error { return k.ucSetRevoked(c, false) }
func (k *Console) ucSetRevoked(c *gin.Context, revoked bool) error {
	t, err := k.ucToken(c)
	if err != nil {
		return err
	}
	// Halo refuses a revocation of a revoked token and a restoration of
	// one that is not.
	if isRevoked(t) == revoked {
		if revoked {
			return problem.Invalid("the token has been revoked before")
		}
		return problem.Invalid("the token has not been revoked")
	}
	updated, err := k.setRevoked(c, t, revoked)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, updated)
	return nil
}

func isRevoked(t *core.PersonalAccessToken) bool { return t.Spec.Revoked != nil && *t.Spec.Revoked }

// setRevoked revokes or restores t; authn refuses a revoked token on its
// next use and accepts a restored one again.
// It changes nothing when t already is so.
func (k *Console) setRevoked(c *gin.Context, t *core.PersonalAccessToken, revoked bool) (*core.PersonalAccessToken, error) {
	if isRevoked(t) == revoked {
		return t, nil
	}
	t.Spec.Revoked = &revoked
	t.Spec.RevokesAt = nil
	if revoked {
		now := k.now().UTC()
		t.Spec.RevokesAt = &now
	}
	updated, err := k.Tokens.Update(c, t)
	if err != nil {
		return nil, fmt.Errorf("console: revoke token %s: %w", t.Metadata.Name, err)
	}
	return updated, nil
}

func (k *Console) ucDelete(c *gin.Context) error {
	t, err := k.ucToken(c)
	if err != nil {
		return err
	}
	deleted, err := k.Tokens.Delete(c, t.Metadata.Name)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, deleted)
	return nil
}
