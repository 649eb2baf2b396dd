package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	gen "github.com/svcrun/svc/generated/content"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/authz"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
)

// userCentre serves /apis/uc.api.content.<brand>/v1alpha1/posts: the
// caller's own posts only.
type userCentre struct {
	h     *plugin.Host
	m     *model.Model
	posts *gen.PostClient
	// base is the API's prefix, /apis/uc.api.content.<brand>/v1alpha1.
	base string
}

func newUserCentre(h *plugin.Host, m *model.Model) *userCentre {
	return &userCentre{
		h:     h,
		m:     m,
		posts: gen.NewPostClient(h.Store(), m),
		base:  "/apis/" + UserCentreGroup(h.Brand()) + "/" + Version,
	}
}

func (u *userCentre) routes(r gin.IRouter) {
	r.GET("/posts", u.handle(u.list))
	r.POST("/posts", u.handle(u.create))
	r.GET("/posts/:name", u.handle(u.get))
	r.PUT("/posts/:name", u.handle(u.update))
	r.DELETE("/posts/:name", u.handle(u.delete))
	r.PUT("/posts/:name/publish", u.handle(func(c *gin.Context) error { return u.setPublished(c, true) }))
	r.PUT("/posts/:name/unpublish", u.handle(func(c *gin.Context) error { return u.setPublished(c, false) }))
}

// handle writes a handler's error as a problem, like the generated APIs.
func (u *userCentre) handle(fn func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := fn(c); err != nil {
			u.h.Fail(c, err)
		}
	}
}

// caller is the signed-in user. Access control already refuses anonymous
// requests (no role grants them these routes); this guards against a
// role template that makes them public.
func (u *userCentre) caller(c *gin.Context) (string, error) {
	user, ok := u.h.Caller(c)
	if !ok || user == "" {
		return "", authz.Unauthorized("the user-centre API acts on the caller's own posts and needs credentials")
	}
	return user, nil
}

func (u *userCentre) list(c *gin.Context) error {
	user, err := u.caller(c)
	if err != nil {
		return err
	}
	v, err := api.Query(c)
	if err != nil {
		return err
	}
	// Parse first: bad parameters are 400s, and page and size come back
	// normalised.
	q, err := query.Parse(v)
	if err != nil {
		return err
	}
	res, err := u.posts.List(c.Request.Context(), client.ListOptions{
		LabelSelector: v["labelSelector"],
		FieldSelector: append(slices.Clone(v["fieldSelector"]), gen.PostIndexSpecOwner+"="+user),
		Sort:          v["sort"],
		Page:          q.Page,
		Size:          q.Size,
	})
	if err != nil {
		return fmt.Errorf("content: list posts of %s: %w", user, err)
	}
	return writeJSON(c, http.StatusOK, res)
}

func (u *userCentre) get(c *gin.Context) error {
	user, err := u.caller(c)
	if err != nil {
		return err
	}
	p, err := u.own(c.Request.Context(), user, c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, p)
}

// create stores a draft owned by the caller, whatever the body says about
// owner, publish state or status.
func (u *userCentre) create(c *gin.Context) error {
	user, err := u.caller(c)
	if err != nil {
		return err
	}
	p, err := u.decode(c)
	if err != nil {
		return err
	}
	p.Spec.Owner = &user
	p.Spec.Publish = new(false)
	p.Status = &gen.PostStatus{Phase: new(gen.PostStatusPhaseDRAFT)}
	created, err := u.posts.Create(c.Request.Context(), p)
	if err != nil {
		return fmt.Errorf("content: create post of %s: %w", user, hideHolder(err))
	}
	c.Header("Location", u.base+"/posts/"+created.Metadata.Name)
	return writeJSON(c, http.StatusCreated, created)
}

// update replaces the caller's post except its owner, publish state and
// status, which stay as stored.
func (u *userCentre) update(c *gin.Context) error {
	user, err := u.caller(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	p, err := u.decode(c)
	if err != nil {
		return err
	}
	if got := p.Metadata.Name; got != name {
		return problem.Invalid("metadata.name must match the name in the path",
			object.FieldError{Field: "metadata.name", Message: "must be " + strconv.Quote(name) + ", not " + strconv.Quote(got)})
	}
	// The body's own faults (apiVersion, kind, metadata) first, as the
	// generic update reports them.
	if err := store.Validate(u.m, p).Err(); err != nil {
		return err
	}
	ctx := c.Request.Context()
	cur, err := u.own(ctx, user, name)
	if err != nil {
		return err
	}
	// The checks below judge cur, so the write must replace exactly cur:
	// the store refuses it if the post changed since.
	if err := store.CheckVersion(u.m.GVK().String(), name, p.Metadata.Version, cur.Metadata.GetVersion()); err != nil {
		return err
	}
	if published(cur) && !u.mayPublish(c, name) {
		return problem.New(http.StatusForbidden, "user %q may not change post %q: it is published, and changing a published post needs the right to publish", user, name)
	}
	p.Spec.Owner = cur.Spec.Owner
	p.Spec.Publish = cur.Spec.Publish
	p.Status = cur.Status
	updated, err := u.posts.Update(ctx, p)
	if err != nil {
		return fmt.Errorf("content: update post %s: %w", name, hideHolder(err))
	}
	return writeJSON(c, http.StatusOK, updated)
}

func (u *userCentre) delete(c *gin.Context) error {
	user, err := u.caller(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	ctx := c.Request.Context()
	if _, err := u.own(ctx, user, name); err != nil {
		return err
	}
	deleted, err := u.posts.Delete(ctx, name)
	if err != nil {
		return fmt.Errorf("content: delete post %s: %w", name, err)
	}
	return writeJSON(c, http.StatusOK, deleted)
}

// setPublished publishes or unpublishes the caller's post. Access control
// has already checked posts/publish or posts/unpublish; the body is
// ignored. Doing it twice changes nothing the second time.
func (u *userCentre) setPublished(c *gin.Context, publish bool) error {
	user, err := u.caller(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	ctx := c.Request.Context()
	phase := gen.PostStatusPhaseDRAFT
	if publish {
		phase = gen.PostStatusPhasePUBLISHED
	}
	for attempt := 0; ; attempt++ {
		p, err := u.own(ctx, user, name)
		if err != nil {
			return err
		}
		if p.Status == nil {
			p.Status = &gen.PostStatus{}
		}
		if published(p) == publish && p.Status.Phase != nil && *p.Status.Phase == phase {
			return writeJSON(c, http.StatusOK, p)
		}
		// Two writes, as Kubernetes would make them: spec.publish through
		// the object, the phase through its status (an update keeps the
		// stored status). A retry after either decides again from what
		// is stored, so a half-done change is completed.
		updated := p
		var stale *store.ConflictError
		if published(p) != publish {
			p.Spec.Publish = &publish
			updated, err = u.posts.Update(ctx, p)
			if errors.As(err, &stale) && attempt < 3 {
				continue // written meanwhile: decide again on the new state
			}
			if err != nil {
				return fmt.Errorf("content: set publish=%t on post %s: %w", publish, name, err)
			}
		}
		if updated.Status == nil {
			updated.Status = &gen.PostStatus{}
		}
		if updated.Status.Phase == nil || *updated.Status.Phase != phase {
			updated.Status.Phase = &phase
			if publish {
				// Unpublishing keeps it: the time of the last publication.
				updated.Status.PublishTime = object.Timestamp(time.Now())
			}
			updated, err = u.posts.UpdateStatus(ctx, updated)
			if errors.As(err, &stale) && attempt < 3 {
				continue
			}
			if err != nil {
				return fmt.Errorf("content: set the phase of post %s to %s: %w", name, phase, err)
			}
		}
		return writeJSON(c, http.StatusOK, updated)
	}
}

// own returns the named post if the caller owns it. Another user's post is
// reported exactly like a missing one, so its existence stays hidden.
func (u *userCentre) own(ctx context.Context, user, name string) (*gen.Post, error) {
	p, err := u.posts.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("content: get post %s: %w", name, err)
	}
	if p.Spec.Owner == nil || *p.Spec.Owner != user {
		return nil, &store.NotFoundError{Kind: u.m.GVK().String(), Name: name}
	}
	return p, nil
}

// mayPublish reports whether the caller may publish the named post, which
// is also what changing a published post takes.
func (u *userCentre) mayPublish(c *gin.Context, name string) bool {
	info := rbac.ParseRequestInfo(http.MethodPut, u.base+"/posts/"+name+"/publish", nil, false)
	return u.h.Allowed(c, &info)
}

func published(p *gen.Post) bool { return p.Spec.Publish != nil && *p.Spec.Publish }

// decode reads the body as a Post, held to the model's schema like a
// generic create or update (unknown fields, types, constraints: 400).
func (u *userCentre) decode(c *gin.Context) (*gen.Post, error) {
	obj, err := api.DecodeBody(c, u.m)
	if err != nil {
		return nil, err
	}
	p, ok := obj.(*gen.Post)
	if !ok {
		return nil, fmt.Errorf("content: model %s decodes to %T, not *Post", u.m.GVK(), obj)
	}
	return p, nil
}

// hideHolder keeps a unique-index clash from naming the post that holds
// the value, which may be another user's.
func hideHolder(err error) error {
	var ue *store.UniqueError
	if !errors.As(err, &ue) {
		return err
	}
	field := ue.Index
	return &problem.Error{Status: http.StatusConflict, Detail: fmt.Sprintf("%s %q is already used by another post", field, ue.Value),
		Errors: []object.FieldError{{Field: field, Message: "is already used by another post"}}}
}

// writeJSON writes v as the generated APIs do (application/json, no
// charset).
func writeJSON(c *gin.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("content: encode response: %w", err)
	}
	c.Data(status, "application/json", b)
	return nil
}
