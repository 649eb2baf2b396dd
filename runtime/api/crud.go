package api

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store"
)

// modelAPI serves the generic CRUD routes of one model (CONTRACT §3).
type modelAPI struct {
	s *Server
	m *model.Model
}

func (a *modelAPI) register(r gin.IRouter) {
	base := BasePath(a.m)
	r.GET(base, a.list)
	r.POST(base, a.create)
	r.DELETE(base, a.deleteCollection)
	r.GET(base+"/:name", a.get)
	r.PUT(base+"/:name", a.update)
	r.PATCH(base+"/:name", a.patch)
	r.DELETE(base+"/:name", a.delete)
	r.PUT(base+"/:name/status", a.updateStatus)
}

func (a *modelAPI) st() *store.Store { return a.s.opts.Store }

// isWatch reports a watch request: a WebSocket upgrade or ?watch=true.
func isWatch(c *gin.Context) bool {
	if v := c.Query("watch"); v == "true" || v == "1" {
		return true
	}
	return c.IsWebsocket()
}

func (a *modelAPI) list(c *gin.Context) {
	if isWatch(c) {
		a.watch(c, "")
		return
	}
	q, err := query.Parse(c.Request.URL.Query())
	if err != nil {
		a.s.fail(c, err)
		return
	}
	res, err := a.st().List(c, a.m, q)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	writeList(c, http.StatusOK, res)
}

func (a *modelAPI) get(c *gin.Context) {
	if isWatch(c) {
		a.watch(c, c.Param("name"))
		return
	}
	rec, err := a.st().Get(c, a.m, c.Param("name"))
	if err != nil {
		a.s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json", rec.Data)
}

func (a *modelAPI) create(c *gin.Context) {
	obj, _, err := decodeBody(c, a.m)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	rec, err := a.st().Create(c, a.m, obj)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	c.Header("Location", BasePath(a.m)+"/"+rec.Name)
	c.Data(http.StatusCreated, "application/json", rec.Data)
}

func (a *modelAPI) update(c *gin.Context) {
	obj, _, err := decodeBody(c, a.m)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	if err := samePath(obj, c.Param("name")); err != nil {
		a.s.fail(c, err)
		return
	}
	rec, err := a.st().Update(c, a.m, obj)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json", rec.Data)
}

func samePath(obj object.Object, name string) error {
	if got := obj.GetEnvelope().Metadata.Name; got != name {
		return problem.Invalid("metadata.name must match the name in the path",
			object.FieldError{Field: "metadata.name", Message: "must be " + strconv.Quote(name) + ", not " + strconv.Quote(got)})
	}
	return nil
}

// updateStatus replaces only the status of the stored object. A version
// in the body is a precondition; without one the current version is used.
func (a *modelAPI) updateStatus(c *gin.Context) {
	obj, raw, err := decodeBody(c, a.m)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	name := c.Param("name")
	if err := samePath(obj, name); err != nil {
		a.s.fail(c, err)
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		a.s.fail(c, problem.New(http.StatusBadRequest, "request body must be a JSON object"))
		return
	}
	cur, err := a.st().Get(c, a.m, name)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	if v := obj.GetEnvelope().Metadata.Version; v != nil && *v != cur.Version {
		a.s.fail(c, &store.ConflictError{Kind: a.m.GVK().String(), Name: name,
			Reason: "metadata.version " + strconv.FormatInt(*v, 10) + " does not match the stored version " + strconv.FormatInt(cur.Version, 10)})
		return
	}
	var stored map[string]json.RawMessage
	if err := json.Unmarshal(cur.Data, &stored); err != nil {
		a.s.fail(c, err)
		return
	}
	if st, ok := fields["status"]; ok {
		stored["status"] = st
	} else {
		delete(stored, "status")
	}
	next, err := json.Marshal(stored)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	updated, err := decodeStrict(a.m, next)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	rec, err := a.st().Update(c, a.m, updated)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json", rec.Data)
}

func (a *modelAPI) delete(c *gin.Context) {
	rec, err := a.st().Delete(c, a.m, c.Param("name"))
	if err != nil {
		a.s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json", rec.Data)
}

func (a *modelAPI) deleteCollection(c *gin.Context) {
	q, err := query.Parse(c.Request.URL.Query())
	if err != nil {
		a.s.fail(c, err)
		return
	}
	recs, err := a.st().DeleteCollection(c, a.m, q)
	if err != nil {
		a.s.fail(c, err)
		return
	}
	writeList(c, http.StatusOK, query.NewListResult(1, 0, int64(len(recs)), recs))
}

// writeList writes a ListResult whose items are the stored JSON, without
// decoding or re-encoding them.
func writeList(c *gin.Context, status int, res query.ListResult[*store.Record]) {
	var b bytes.Buffer
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
	for i, r := range res.Items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r.Data)
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
	c.Data(status, "application/json", b.Bytes())
}

// Patch media types (CONTRACT §3).
const (
	jsonPatch  = "application/json-patch+json"
	mergePatch = "application/merge-patch+json"
)

func mediaType(c *gin.Context) string {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}
