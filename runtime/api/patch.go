package api

import (
	"errors"
	"hash/maphash"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
)

// Patches of one object take one of patchStripes locks, picked by name;
// a version race with another kind of write (an update, a controller) is
// retried up to maxPatchAttempts times before it is a 409.
const (
	patchStripes     = 64
	maxPatchAttempts = 5
)

// patchLock locks the stripe of the object named name of m and returns
// its unlock.
func (s *Server) patchLock(m *model.Model, name string) func() {
	var h maphash.Hash
	h.SetSeed(s.patchSeed)
	h.WriteString(m.Plural)
	h.WriteByte('/')
	h.WriteString(name)
	mu := &s.patching[h.Sum64()%patchStripes]
	mu.Lock()
	return mu.Unlock
}

// patch applies an RFC 6902 JSON Patch or an RFC 7386 merge patch to the
// stored object and stores the result like an update. A patch that sets
// metadata.version is checked against it; one that does not applies to
// the current object: concurrent patches of one object take turns, and a
// race with another writer is retried (maxPatchAttempts).
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
	// The model's write lock (users and bindings: the last super
	// administrator check) is held until access control has settled.
	defer a.lock()()
	rec, err := a.patchStored(c, name, apply)
	if err == nil {
		err = a.settle(c)
	}
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, "application/json", a.out(rec))
	return nil
}

// patchStored applies apply to the stored object named name and stores
// the result, under the object's patch lock.
func (a *modelAPI) patchStored(c *gin.Context, name string, apply codec.Patcher) (*store.Record, error) {
	defer a.s.patchLock(a.m, name)()
	for attempt := 1; ; attempt++ {
		cur, err := a.st().Get(c, a.m, name)
		if err != nil {
			return nil, err
		}
		// The patch applies to the object as the API shows it: a field
		// kept out of responses (a user's password hash) must not be
		// readable through copy, move or test operations either.
		next, err := apply(a.out(cur))
		if err != nil {
			return nil, err
		}
		obj, err := decodeStrict(a.m, next, false)
		if err != nil {
			return nil, err
		}
		if err := samePath(obj, name); err != nil {
			return nil, err
		}
		if err := a.admit(c, name, obj); err != nil {
			return nil, err
		}
		// A patch that leaves the version as it read it did not ask for
		// one: a conflict means another writer came first, and the patch
		// applies again to what that writer stored.
		pinned := obj.GetEnvelope().Metadata.GetVersion() != cur.Version
		rec, err := a.st().Update(c, a.m, obj)
		var race *store.ConflictError // a version race, not a unique clash
		if errors.As(err, &race) && !pinned && attempt < maxPatchAttempts {
			continue
		}
		return rec, err
	}
}
