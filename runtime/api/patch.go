package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/store"
)

// patch applies an RFC 6902 JSON Patch or an RFC 7386 merge patch to the
// stored object and stores the result like an update. The stored version
// is the precondition unless the patch itself sets metadata.version; a
// conflict with a concurrent write is retried when the patch did not ask
// for a specific version.
func (a *modelAPI) patch(c *gin.Context) error {
	pt := codec.PatchType(mediaType(c))
	if pt != codec.JSONPatch && pt != codec.MergePatch {
		return problem.New(http.StatusUnsupportedMediaType,
			"PATCH needs Content-Type %s or %s, not %q", codec.JSONPatch, codec.MergePatch, c.GetHeader("Content-Type"))
	}
	if err := a.protected(c.Param("name")); err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	apply, err := codec.ParsePatchLimits(pt, body, codec.PatchLimits{MaxBytes: a.s.opts.MaxBodyBytes})
	if err != nil {
		return err
	}
	name := c.Param("name")
	for attempt := 0; ; attempt++ {
		cur, err := a.st().Get(c, a.m, name)
		if err != nil {
			return err
		}
		// The patch applies to the object as the API shows it: a field
		// kept out of responses (a user's password hash) must not be
		// readable through copy, move or test operations either.
		next, err := apply(a.out(cur))
		if err != nil {
			return err
		}
		obj, err := decodeStrict(a.m, next, false)
		if err != nil {
			return err
		}
		if err := samePath(obj, name); err != nil {
			return err
		}
		if err := a.admit(c, name, obj); err != nil {
			return err
		}
		pinned := obj.GetEnvelope().Metadata.GetVersion() != cur.Version
		rec, err := a.st().Update(c, a.m, obj)
		if err == nil {
			err = a.settle(c)
		}
		if errors.Is(err, store.ErrConflict) && !pinned && attempt < 3 {
			continue
		}
		if err != nil {
			return err
		}
		c.Data(http.StatusOK, "application/json", a.out(rec))
		return nil
	}
}
