package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store"
)

// modelAPI serves the generic CRUD routes of one model (docs/api.md).
type modelAPI struct {
	s *Server
	m *model.Model
}

// Handlers are one model's CRUD operations (docs/api.md). Route
// functions, generated or DefaultRoutes, mount them; each reads the
// object name from the :name path parameter.
type Handlers struct {
	List, Create, DeleteCollection           gin.HandlerFunc
	Get, Update, Patch, Delete, UpdateStatus gin.HandlerFunc
}

// ModelRoutes mounts a model's handlers on a router.
type ModelRoutes func(r gin.IRouter, h Handlers)

// DefaultRoutes mounts h at base, base/:name and base/:name/status. List
// and Get also serve watches (WebSocket upgrade or ?watch=true).
func DefaultRoutes(base string) ModelRoutes {
	return func(r gin.IRouter, h Handlers) {
		r.GET(base, h.List)
		r.POST(base, h.Create)
		r.DELETE(base, h.DeleteCollection)
		r.GET(base+"/:name", h.Get)
		r.PUT(base+"/:name", h.Update)
		r.PATCH(base+"/:name", h.Patch)
		r.DELETE(base+"/:name", h.Delete)
		r.PUT(base+"/:name/status", h.UpdateStatus)
	}
}

func (a *modelAPI) handlers() Handlers {
	h := a.s.handle
	return Handlers{
		List: h(a.list), Create: h(a.create), DeleteCollection: h(a.deleteCollection),
		Get: h(a.get), Update: h(a.update), Patch: h(a.patch), Delete: h(a.delete), UpdateStatus: h(a.updateStatus),
	}
}

func (a *modelAPI) st() *store.Store { return a.s.opts.Store }

// isWatch reports a watch request: a WebSocket upgrade or ?watch=true.
func isWatch(c *gin.Context, params url.Values) (bool, error) {
	w, err := boolParam(params, "watch")
	return w || c.IsWebsocket(), err
}

// boolParam reads a boolean query parameter as Kubernetes parses one
// (strconv.ParseBool: 1, t, true, 0, f, false, in upper or lower case);
// absent or empty is false, and anything else is a bad parameter rather
// than a silent false.
func boolParam(params url.Values, name string) (bool, error) {
	v := params.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &query.ParamError{Param: name, Value: v, Reason: "must be true or false"}
	}
	return b, nil
}

func (a *modelAPI) list(c *gin.Context) error {
	params, err := Query(c)
	if err != nil {
		return err
	}
	watch, err := isWatch(c, params)
	if err != nil {
		return err
	}
	if watch {
		return a.watch(c, "", params)
	}
	q, err := a.parseQuery(params)
	if err != nil {
		return err
	}
	res, err := a.st().List(c, a.m, q)
	if err != nil {
		return err
	}
	a.writeList(c, res)
	return nil
}

func (a *modelAPI) get(c *gin.Context) error {
	// One object is watched with an upgrade only (docs/api.md): access
	// control reads ?watch=true on a collection alone, so here it asked
	// for get, and a get it is.
	if c.IsWebsocket() {
		params, err := Query(c)
		if err != nil {
			return err
		}
		return a.watch(c, c.Param("name"), params)
	}
	rec, err := a.st().Get(c, a.m, c.Param("name"))
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, "application/json", a.out(rec))
	return nil
}

func (a *modelAPI) create(c *gin.Context) error {
	obj, err := DecodeNewBody(c, a.m)
	if err != nil {
		return err
	}
	// The status is the server's: a client's is dropped (docs/api.md,
	// Status), and the model's admission may set the first one.
	if err := object.SetStatus(obj, nil); err != nil {
		return err
	}
	defer a.lock()() // after the body is read: a slow sender holds no lock
	if err := a.admit(c, "", obj); err != nil {
		return err
	}
	rec, err := a.st().Create(c, a.m, obj)
	if err == nil {
		err = a.settle(c)
	}
	if err != nil {
		return err
	}
	c.Header("Location", BasePath(a.m)+"/"+rec.Name)
	c.Data(http.StatusCreated, "application/json", a.out(rec))
	return nil
}

func (a *modelAPI) update(c *gin.Context) error {
	if err := a.protected(c.Param("name")); err != nil {
		return err
	}
	obj, _, err := a.decodeFor(c, c.Param("name"), true)
	if err != nil {
		return err
	}
	defer a.lock()()
	if err := a.admit(c, c.Param("name"), obj); err != nil {
		return err
	}
	rec, err := a.st().Update(c, a.m, obj)
	if err == nil {
		err = a.settle(c)
	}
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, "application/json", a.out(rec))
	return nil
}

// protected refuses a write of an object the model protects.
func (a *modelAPI) protected(name string) error {
	if a.m.Protected == nil || !a.m.Protected(name) {
		return nil
	}
	return problem.New(http.StatusForbidden, "%s %s is built in: it cannot be changed or deleted", a.m.Kind, name)
}

// lock takes the model's write lock, if any, and returns its release,
// which may be called more than once.
func (a *modelAPI) lock() func() {
	if a.m.WriteLock == nil {
		return func() {}
	}
	a.m.WriteLock.Lock()
	var once sync.Once
	return func() { once.Do(a.m.WriteLock.Unlock) }
}

// admitDelete runs the model's delete admission hook on the stored
// records a delete is about to remove.
func (a *modelAPI) admitDelete(c *gin.Context, recs []*store.Record) error {
	if a.m.AdmitDelete == nil || len(recs) == 0 {
		return nil
	}
	olds := make([]object.Object, len(recs))
	for i, rec := range recs {
		var err error
		if olds[i], err = store.Decode(a.m, rec); err != nil {
			return err
		}
	}
	return a.m.AdmitDelete(c, olds)
}

// settle runs the model's Settled hook after a write, before the answer.
func (a *modelAPI) settle(c *gin.Context) error {
	if a.m.Settled == nil {
		return nil
	}
	return a.m.Settled(c)
}

// out is a stored object as the API returns it.
func (a *modelAPI) out(rec *store.Record) []byte {
	if a.m.Present != nil {
		return a.m.Present(rec.Data)
	}
	return rec.Data
}

// admit runs the model's admission hook against the stored object named
// name ("" on create).
func (a *modelAPI) admit(c *gin.Context, name string, obj object.Object) error {
	if a.m.Admit == nil {
		return nil
	}
	var old object.Object
	if name != "" {
		rec, err := a.st().Get(c, a.m, name)
		if err != nil {
			return err
		}
		if old, err = store.Decode(a.m, rec); err != nil {
			return err
		}
	}
	return a.m.Admit(c, old, obj)
}

func samePath(obj object.Object, name string) error {
	if errs := pathMismatch(obj.GetEnvelope().Metadata.Name, name); len(errs) > 0 {
		return problem.Invalid("metadata.name must match the name in the path", errs...)
	}
	return nil
}

// pathMismatch reports a body's metadata.name (got) that is not the name
// in the path.
func pathMismatch(got, name string) object.FieldErrors {
	if got == name {
		return nil
	}
	return object.FieldErrors{{Field: "metadata.name", Message: "must be " + strconv.Quote(name) + ", not " + strconv.Quote(got)}}
}

// decodeFor reads and decodes the body of a write to the object named
// name: its metadata.name must be name. A mismatch is reported with every
// other violation of the body (docs/api.md), whether the body decodes or
// not; stored is whether the body is what gets stored (not so for the
// status subresource), so that the store's checks apply to it.
func (a *modelAPI) decodeFor(c *gin.Context, name string, stored bool) (object.Object, []byte, error) {
	obj, raw, err := decodeBody(c, a.m, false)
	if err != nil {
		if got, ok := bodyName(raw); ok {
			addViolations(err, pathMismatch(got, name))
		}
		return nil, nil, err
	}
	if mismatch := pathMismatch(obj.GetEnvelope().Metadata.Name, name); len(mismatch) > 0 {
		var errs object.FieldErrors
		if stored {
			errs = store.Validate(a.m, obj) // what the store would say next
		}
		if len(errs) == 0 {
			return nil, nil, problem.Invalid("metadata.name must match the name in the path", mismatch...)
		}
		return nil, nil, problem.Invalid("the object is invalid; see errors", append(errs, mismatch...)...)
	}
	return obj, raw, nil
}

// bodyName returns the metadata.name a body gives ("" for none); false
// when the body is not an object with an object metadata, or the name is
// not a string: the decode has reported that.
func bodyName(raw []byte) (string, bool) {
	var b struct {
		Metadata struct {
			Name json.RawMessage `json:"name"`
		} `json:"metadata"`
	}
	if raw == nil || json.Unmarshal(raw, &b) != nil {
		return "", false
	}
	var name string
	if b.Metadata.Name != nil && json.Unmarshal(b.Metadata.Name, &name) != nil {
		return "", false
	}
	return name, true
}

// addViolations adds extra to the violations an invalid body was refused
// with; an error without a list of them (malformed JSON) stays as it is.
func addViolations(err error, extra object.FieldErrors) {
	var (
		ce *codec.Error
		pe *problem.Error
	)
	switch {
	case errors.As(err, &ce) && len(ce.Fields) > 0:
		ce.Fields = append(ce.Fields, extra...)
	case errors.As(err, &pe) && pe.Status == http.StatusBadRequest && len(pe.Errors) > 0:
		pe.Errors = append(pe.Errors, extra...)
	}
}

// updateStatus replaces only the status of the stored object; the body's
// version is the precondition. Admission sees the stored object with the
// new status, which is what the store's status write makes of it.
func (a *modelAPI) updateStatus(c *gin.Context) error {
	if err := a.protected(c.Param("name")); err != nil {
		return err
	}
	name := c.Param("name")
	obj, raw, err := a.decodeFor(c, name, false)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return problem.New(http.StatusBadRequest, "request body must be a JSON object")
	}
	cur, err := a.st().Get(c, a.m, name)
	if err != nil {
		return err
	}
	var stored map[string]json.RawMessage
	if err := json.Unmarshal(cur.Data, &stored); err != nil {
		return err
	}
	if st, ok := fields["status"]; ok {
		stored["status"] = st
	} else {
		delete(stored, "status")
	}
	next, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	updated, err := decodeStrict(a.m, next, false)
	if err != nil {
		return err
	}
	// The body's version is the precondition, as for any update (docs/api.md:
	// a missing one is a conflict); the store checks it.
	v := obj.GetEnvelope().Metadata.Version
	if v == nil {
		return &store.ConflictError{Kind: a.m.GVK().String(), Name: name, Reason: "metadata.version is required for an update"}
	}
	updated.GetEnvelope().Metadata.SetVersion(*v)
	defer a.lock()()
	if err := a.admit(c, name, updated); err != nil {
		return err
	}
	rec, err := a.st().UpdateStatus(c, a.m, updated)
	if err == nil {
		err = a.settle(c)
	}
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, "application/json", a.out(rec))
	return nil
}

func (a *modelAPI) delete(c *gin.Context) error {
	defer a.lock()()
	if err := a.protected(c.Param("name")); err != nil {
		return err
	}
	if a.m.AdmitDelete != nil {
		cur, err := a.st().Get(c, a.m, c.Param("name"))
		if err != nil {
			return err
		}
		if err := a.admitDelete(c, []*store.Record{cur}); err != nil {
			return err
		}
	}
	rec, err := a.st().Delete(c, a.m, c.Param("name"))
	if err == nil {
		err = a.settle(c)
	}
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, "application/json", a.out(rec))
	return nil
}

// parseQuery reads a list request's parameters and names every bad one
// at once: each one's syntax, and the indexes of those that parsed.
func (a *modelAPI) parseQuery(params url.Values) (query.Query, error) {
	q, err := query.Parse(params)
	if err != nil {
		return q, query.Join(err, store.CheckQuery(a.m, q))
	}
	return q, nil
}

func (a *modelAPI) deleteCollection(c *gin.Context) error {
	params, err := Query(c)
	if err != nil {
		return err
	}
	// A list ignores parameters it does not know, as Kubernetes does; a
	// delete does not, since a misspelt selector would otherwise delete
	// the whole collection.
	var unknown query.Errors
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if k != "labelSelector" && k != "fieldSelector" {
			unknown = append(unknown, &query.ParamError{Param: k, Value: params.Get(k),
				Reason: "a collection delete takes only labelSelector and fieldSelector; nothing was deleted"})
		}
	}
	// Every bad parameter is named at once.
	q, err := a.parseQuery(params)
	if err != nil {
		return query.Join(unknown, err)
	}
	if len(unknown) > 0 {
		return query.Join(unknown, store.CheckQuery(a.m, q))
	}
	unlock := a.lock()
	defer unlock()
	if a.m.Protected != nil || a.m.AdmitDelete != nil {
		// Refuse the whole request if it would reach a protected object,
		// or its admission refuses what it would delete.
		all := q
		all.Page, all.Size = 1, 0
		res, err := a.st().List(c, a.m, all)
		if err != nil {
			return err
		}
		for _, r := range res.Items {
			if err := a.protected(r.Name); err != nil {
				return err
			}
		}
		if err := a.admitDelete(c, res.Items); err != nil {
			return err
		}
	}
	recs, err := a.st().DeleteCollection(c, a.m, q)
	if err == nil {
		err = a.settle(c)
	}
	if err != nil {
		return err
	}
	unlock() // a slow reader of a long answer holds no lock
	a.writeList(c, query.NewListResult(1, 0, int64(len(recs)), recs))
	return nil
}

// maxPooledList is the largest list buffer kept for reuse, so one huge
// unpaged list does not pin its memory for good.
const maxPooledList = 1 << 20

// writeList writes a ListResult whose items are the stored JSON, without
// decoding or re-encoding them, from a recycled buffer: the response
// writer copies what it is given and keeps none of it.
func (a *modelAPI) writeList(c *gin.Context, res query.ListResult[*store.Record]) {
	b := a.s.listBufs.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= maxPooledList {
			b.Reset()
			a.s.listBufs.Put(b)
		}
	}()
	n := 160
	for _, r := range res.Items {
		n += len(r.Data) + 1
	}
	b.Grow(n)
	b.WriteString(`{"page":`)
	b.WriteString(strconv.Itoa(res.Page))
	b.WriteString(`,"size":`)
	b.WriteString(strconv.Itoa(res.Size))
	b.WriteString(`,"total":`)
	b.WriteString(strconv.FormatInt(res.Total, 10))
	b.WriteString(`,"items":[`)
	present := a.m.Present
	for i, r := range res.Items {
		if i > 0 {
			b.WriteByte(',')
		}
		if present != nil {
			b.Write(present(r.Data))
		} else {
			b.Write(r.Data)
		}
	}
	b.WriteString(`],"first":`)
	b.WriteString(strconv.FormatBool(res.First))
	b.WriteString(`,"last":`)
	b.WriteString(strconv.FormatBool(res.Last))
	b.WriteString(`,"hasNext":`)
	b.WriteString(strconv.FormatBool(res.HasNext))
	b.WriteString(`,"hasPrevious":`)
	b.WriteString(strconv.FormatBool(res.HasPrevious))
	b.WriteString(`,"totalPages":`)
	b.WriteString(strconv.FormatInt(res.TotalPages, 10))
	b.WriteByte('}')
	c.Data(http.StatusOK, "application/json", b.Bytes())
}

func mediaType(c *gin.Context) string {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}
