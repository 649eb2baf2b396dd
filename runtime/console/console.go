package console

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
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
	"github.com/svcrun/svc/runtime/codec"
	coremodel "github.com/svcrun/svc/runtime/core"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
)

// Console serves the console API of users, permissions and personal access
// tokens under /apis/api.console.<brand>/v1alpha1 (docs/api.md), in Halo's
// shapes. Access to each route is decided by the guard (runtime/authz)
// before it runs.
type Console struct {
	Users    *core.UserClient
	Roles    *core.RoleClient
	Bindings *core.RoleBindingClient
	Tokens   *core.PersonalAccessTokenClient
	Rules    *rbac.Resolver
	Authn    *authn.Authenticator
	// Escalation refuses grants of roles the caller does not hold.
	Escalation *authz.Escalation
	// Settle waits until access control decides with the bindings just
	// written; nil does not wait.
	Settle func(ctx context.Context) error
	Brand  string
	// Fail writes an error as a problem response (api.Server.Fail);
	// access.New sets it to api.Failer of its logger.
	Fail func(c *gin.Context, err error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Supers, if set, keeps a grant from unbinding the last enabled
	// super administrator.
	Supers *authz.LastSuper
}

// Base is where the console API is served.
func (k *Console) Base() string { return "/apis/api.console." + k.Brand + "/v1alpha1" }

//go:embed console.openapi.yaml
var consoleOpenAPI string

// OpenAPI returns the console API's OpenAPI document (YAML) for the
// brand, which the server merges into /openapi.json.
func (k *Console) OpenAPI() []byte {
	doc := strings.ReplaceAll(consoleOpenAPI, "/apis/api.console.svc.run/", "/apis/api.console."+k.Brand+"/")
	return []byte(strings.ReplaceAll(doc, "/apis/uc.api.security.svc.run/", "/apis/uc.api.security."+k.Brand+"/"))
}

// Routes mounts the console API; pass it to api.Server.Mount.
func (k *Console) Routes(r gin.IRouter) {
	g := r.Group(k.Base())
	h := func(f func(c *gin.Context) error) gin.HandlerFunc {
		return func(c *gin.Context) {
			if err := f(c); err != nil {
				k.Fail(c, err)
			}
		}
	}
	g.POST("/users", h(k.createUser))
	g.GET("/users/:name", h(k.getUser))
	g.GET("/users/:name/permissions", h(k.getPermissions))
	g.POST("/users/:name/permissions", h(k.grant))
	g.PUT("/users/:name/password", h(k.changePassword))
	g.GET("/users/:name/personalaccesstokens", h(k.listTokens))
	g.POST("/users/:name/personalaccesstokens", h(k.createToken))
	g.GET("/users/:name/personalaccesstokens/:token", h(k.getToken))
	g.DELETE("/users/:name/personalaccesstokens/:token", h(k.deleteToken))
	g.PUT("/users/:name/personalaccesstokens/:token/revocation", h(k.revocation(true)))
	g.PUT("/users/:name/personalaccesstokens/:token/restoration", h(k.revocation(false)))
	k.userCentreTokenRoutes(r)
}

// user resolves the path's user name: "-" is the caller.
func (k *Console) user(c *gin.Context) (string, error) {
	name := c.Param("name")
	if name != "-" {
		return name, nil
	}
	id := authz.IdentityOf(c)
	if !id.Authenticated {
		return "", authz.Unauthorized("users/- is the signed-in user; sign in first")
	}
	return id.User, nil
}

func (k *Console) hidden(r *core.Role) bool {
	return r.Metadata.Labels[k.Brand+"/hidden"] == "true"
}

// roleObjects returns the named roles that exist and are not hidden, in
// name order.
func (k *Console) roleObjects(ctx context.Context, names []string) ([]*core.Role, error) {
	out := []*core.Role{}
	for _, n := range slices.Sorted(slices.Values(names)) {
		r, err := k.Roles.Get(ctx, n)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !k.hidden(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

type userDetail struct {
	User  *core.User   `json:"user"`
	Roles []*core.Role `json:"roles"`
}

func (k *Console) detail(ctx context.Context, name string) (*userDetail, error) {
	u, err := k.Users.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	roles, err := k.roleObjects(ctx, k.Rules.BoundRoles(name))
	if err != nil {
		return nil, err
	}
	return &userDetail{User: redacted(u), Roles: roles}, nil
}

func (k *Console) getUser(c *gin.Context) error {
	name, err := k.user(c)
	if err != nil {
		return err
	}
	d, err := k.detail(c, name)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, d)
	return nil
}

func (k *Console) getPermissions(c *gin.Context) error {
	name, err := k.user(c)
	if err != nil {
		return err
	}
	if _, err := k.Users.Get(c, name); err != nil {
		return err
	}
	bound, err := k.roleObjects(c, k.Rules.BoundRoles(name))
	if err != nil {
		return err
	}
	// Effective roles exactly as docs/api.md closes them, for the super
	// administrator too (Halo lists every role there; its "*" rules and
	// ui-permission already say it all).
	perms, err := k.roleObjects(c, k.Rules.EffectiveRoles(name))
	if err != nil {
		return err
	}
	ui := map[string]bool{}
	for _, r := range perms {
		var list []string
		if json.Unmarshal([]byte(r.Metadata.Annotations["rbac.authorization."+k.Brand+"/ui-permissions"]), &list) == nil {
			for _, p := range list {
				ui[p] = true
			}
		}
	}
	uiList := make([]string, 0, len(ui))
	for p := range ui {
		uiList = append(uiList, p)
	}
	slices.Sort(uiList)
	c.JSON(http.StatusOK, gin.H{"roles": bound, "permissions": perms, "uiPermissions": uiList})
	return nil
}

type grantRequest struct {
	Roles []string `json:"roles"`
}

func decodeJSON(c *gin.Context, v any) error {
	body, err := api.ReadJSONBody(c)
	if err != nil {
		return err
	}
	// An object and nothing else: null or a second value must not pass
	// for an empty request (a grant of no roles removes them all).
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return problem.Invalid("the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = errors.New("unexpected data after the JSON object")
		}
	}
	var syn *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syn):
		return problem.Invalid(fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn))
	}
	// Every wrong type and unknown field, with its path (encoding/json
	// names the first only), as the generic API reports them.
	var doc any
	gen := json.NewDecoder(bytes.NewReader(body))
	gen.UseNumber()
	if gen.Decode(&doc) == nil {
		t := reflect.TypeOf(v)
		errs := codec.TypeErrors(doc, t, err)
		errs.Merge(codec.UnknownFields(doc, t))
		if len(errs) > 0 {
			return problem.Invalid("the request body is invalid; see errors", errs...)
		}
	}
	return problem.Invalid("cannot decode the request body: " + err.Error())
}

func (k *Console) grant(c *gin.Context) error {
	name, err := k.user(c)
	if err != nil {
		return err
	}
	var req grantRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if _, err := k.Users.Get(c, name); err != nil {
		return err
	}
	if err := k.mayGrant(c, req.Roles); err != nil {
		return err
	}
	if k.Supers != nil {
		k.Supers.Lock()
		defer k.Supers.Unlock()
		if !slices.Contains(req.Roles, rbac.SuperRole) {
			if err := k.Supers.CheckUnbind(c, name); err != nil {
				return err
			}
		}
	}
	if err := coremodel.SetRoles(c, k.Bindings, name, req.Roles); err != nil {
		return err
	}
	if err := k.settle(c); err != nil {
		return err
	}
	d, err := k.detail(c, name)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, d)
	return nil
}

// mayGrant asks Escalation whether the caller may hand out roles.
func (k *Console) mayGrant(c *gin.Context, roles []string) error {
	return k.Escalation.MayGrant(c, authz.IdentityOf(c), roles)
}

func (k *Console) settle(ctx context.Context) error {
	if k.Settle == nil {
		return nil
	}
	return k.Settle(ctx)
}

// createUserRequest is Halo's CreateUserRequest.
type createUserRequest struct {
	Name        string            `json:"name"`
	Email       string            `json:"email"`
	DisplayName string            `json:"displayName"`
	Avatar      string            `json:"avatar"`
	Phone       string            `json:"phone"`
	Password    string            `json:"password"`
	Bio         string            `json:"bio"`
	Annotations map[string]string `json:"annotations"`
	Roles       []string          `json:"roles"`
}

func (k *Console) createUser(c *gin.Context) error {
	var req createUserRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	var errs object.FieldErrors
	if err := object.ValidateName(req.Name); err != nil {
		errs.Add("name", "%s", err)
	}
	if req.Password == "" {
		errs.Add("password", "is required")
	}
	if len(errs) > 0 {
		return problem.Invalid("the user is invalid; see errors", errs...)
	}
	if err := k.mayGrant(c, req.Roles); err != nil {
		return err
	}
	hash, err := authn.HashPassword(req.Password)
	if err != nil {
		return problem.Invalid("the password cannot be used", object.FieldError{Field: "password", Message: err.Error()})
	}
	u := core.NewUser(req.Name)
	u.Spec.DisplayName = req.DisplayName
	if u.Spec.DisplayName == "" {
		u.Spec.DisplayName = req.Name
	}
	for _, f := range []struct {
		dst **string
		v   string
	}{{&u.Spec.Email, req.Email}, {&u.Spec.Avatar, req.Avatar}, {&u.Spec.Phone, req.Phone}, {&u.Spec.Bio, req.Bio}} {
		if f.v != "" {
			*f.dst = &f.v
		}
	}
	if len(req.Annotations) > 0 {
		u.Metadata.Annotations = req.Annotations
	}
	u.Spec.Password = &hash
	now := k.now().UTC()
	u.Spec.RegisteredAt = &now
	created, err := k.Users.Create(c, u)
	if err != nil {
		return err
	}
	if err := coremodel.SetRoles(c, k.Bindings, req.Name, req.Roles); err != nil {
		return err
	}
	if err := k.settle(c); err != nil {
		return err
	}
	c.Header("Location", "/api/v1alpha1/users/"+created.Metadata.Name)
	c.JSON(http.StatusCreated, redacted(created))
	return nil
}

func (k *Console) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

type passwordRequest struct {
	Password    string `json:"password"`
	OldPassword string `json:"oldPassword"`
}

func (k *Console) changePassword(c *gin.Context) error {
	name, err := k.user(c)
	if err != nil {
		return err
	}
	// One's own password, by "-" or by name, needs the old one.
	self := name == authz.IdentityOf(c).User
	var req passwordRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Password == "" {
		return problem.Invalid("a new password is required", object.FieldError{Field: "password", Message: "is required"})
	}
	u, err := k.Users.Get(c, name)
	if err != nil {
		return err
	}
	if self && (u.Spec.Password == nil || !authn.CheckPassword(*u.Spec.Password, req.OldPassword)) {
		return problem.Invalid("the old password is wrong", object.FieldError{Field: "oldPassword", Message: "does not match the current password"})
	}
	hash, err := authn.HashPassword(req.Password)
	if err != nil {
		return problem.Invalid("the password cannot be used", object.FieldError{Field: "password", Message: err.Error()})
	}
	u.Spec.Password = &hash
	updated, err := k.Users.Update(c, u)
	if err != nil {
		return err
	}
	k.Authn.Forget(name)
	c.JSON(http.StatusOK, redacted(updated))
	return nil
}

// tokenOwner is the user whose tokens the path names: only the caller's
// own tokens are reachable.
func (k *Console) tokenOwner(c *gin.Context) (string, error) {
	name, err := k.user(c)
	if err != nil {
		return "", err
	}
	if id := authz.IdentityOf(c); name != id.User {
		return "", problem.New(http.StatusForbidden, "personal access tokens are managed by their owner only (use users/-)")
	}
	return name, nil
}

func (k *Console) ownToken(c *gin.Context) (*core.PersonalAccessToken, error) {
	owner, err := k.tokenOwner(c)
	if err != nil {
		return nil, err
	}
	return k.tokenOf(c, owner, c.Param("token"))
}

func (k *Console) listTokens(c *gin.Context) error {
	owner, err := k.tokenOwner(c)
	if err != nil {
		return err
	}
	res, err := k.Tokens.List(c, client.ListOptions{FieldSelector: []string{core.PersonalAccessTokenIndexSpecUsername + "=" + owner}})
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, res)
	return nil
}

func (k *Console) getToken(c *gin.Context) error {
	t, err := k.ownToken(c)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, t)
	return nil
}

// AccessTokenAnnotation carries a new token in the create response only
// (Halo's shape); the token is never stored or shown again.
func (k *Console) AccessTokenAnnotation() string { return "security." + k.Brand + "/access-token" }

type createTokenRequest struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Name string `json:"name"`
		// DisplayName is the earlier name of Name.
		DisplayName string     `json:"displayName"`
		Description string     `json:"description"`
		Roles       []string   `json:"roles"`
		Scopes      []string   `json:"scopes"`
		ExpiresAt   *time.Time `json:"expiresAt"`
	} `json:"spec"`
}

func (k *Console) createToken(c *gin.Context) error {
	owner, err := k.tokenOwner(c)
	if err != nil {
		return err
	}
	var req createTokenRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	created, err := k.issueToken(c, owner, tokenParams{
		Name: req.Metadata.Name, DisplayName: cmp.Or(req.Spec.Name, req.Spec.DisplayName),
		Description: req.Spec.Description, Roles: req.Spec.Roles, Scopes: req.Spec.Scopes,
		ExpiresAt: req.Spec.ExpiresAt, PinBound: true,
	})
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, created)
	return nil
}

// revocation revokes (true) or restores (false) one of the caller's tokens.
func (k *Console) revocation(revoked bool) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		t, err := k.ownToken(c)
		if err != nil {
			return err
		}
		updated, err := k.setRevoked(c, t, revoked)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, updated)
		return nil
	}
}

func (k *Console) deleteToken(c *gin.Context) error {
	t, err := k.ownToken(c)
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

// redacted returns a copy of u without its password hash.
func redacted(u *core.User) *core.User {
	c := *u
	c.Spec.Password = nil
	return &c
}
