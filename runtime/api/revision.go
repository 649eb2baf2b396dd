package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// Revisions let a client read its own writes across replicas of a shared
// store (docs/deployment.md, Consistency): every answer carries the
// revision the replica had applied when it answered, and a request that
// names a revision it saw elsewhere waits until this replica has it.
const (
	// RevisionHeader is on every answer: the store's applied revision.
	RevisionHeader = "X-Svc-Revision"
	// MinRevisionHeader asks for at least a revision; so does the query
	// parameter MinRevisionParam (for clients that cannot set headers,
	// such as a browser opening a WebSocket).
	MinRevisionHeader = "X-Svc-Min-Revision"
	MinRevisionParam  = "minRevision"
)

// MaxRevisionWait bounds how long a request waits for its minimum
// revision before it is answered 503.
const MaxRevisionWait = 5 * time.Second

// revisionWriter stamps the applied revision on the answer when its
// headers go out, so an answer to a write carries at least the write's.
//
// A read is stamped with the revision at its start instead: what it
// answers holds at least everything up to there, so a client that lists
// and then watches from the list's revision misses nothing (it may see a
// change twice, as a modification of what it listed).
type revisionWriter struct {
	gin.ResponseWriter
	st      *store.Store
	at      int64 // a read's revision at its start; 0 for a write
	stamped bool
}

func (w *revisionWriter) stamp() {
	if !w.stamped {
		w.stamped = true
		rev := w.at
		if rev == 0 {
			rev = w.st.Revision()
		}
		w.Header().Set(RevisionHeader, strconv.FormatInt(rev, 10))
	}
}

func (w *revisionWriter) WriteHeader(code int) { w.stamp(); w.ResponseWriter.WriteHeader(code) }
func (w *revisionWriter) WriteHeaderNow()      { w.stamp(); w.ResponseWriter.WriteHeaderNow() }
func (w *revisionWriter) Write(b []byte) (int, error) {
	w.stamp()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the
// profiling endpoint extends its write deadline).
func (w *revisionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *revisionWriter) WriteString(s string) (int, error) {
	w.stamp()
	return w.ResponseWriter.WriteString(s)
}

// minRevision reads the revision a request asks for (0: none); a value
// that is not a non-negative integer names its source in a 400.
func minRevision(c *gin.Context) (int64, error) {
	name, v := MinRevisionHeader, c.GetHeader(MinRevisionHeader)
	if v == "" {
		if q, err := Query(c); err == nil {
			name, v = MinRevisionParam, q.Get(MinRevisionParam)
		}
	}
	if v == "" {
		return 0, nil
	}
	r, err := strconv.ParseInt(v, 10, 64)
	if err != nil || r < 0 {
		return 0, problem.Invalid("bad minimum revision", object.FieldError{Field: name, Message: "must be a non-negative integer revision, as an earlier answer's " + RevisionHeader + " header gave"})
	}
	return r, nil
}

// awaitRevision waits, bounded, until the store has applied what the
// request asks for.
func (s *Server) awaitRevision(c *gin.Context) error {
	want, err := minRevision(c)
	if err != nil || want == 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), MaxRevisionWait)
	defer cancel()
	if err := s.opts.Store.WaitRevision(ctx, want); err != nil {
		return &problem.Error{Status: http.StatusServiceUnavailable,
			Detail: "this replica has not reached revision " + strconv.FormatInt(want, 10) + " (it is at " + strconv.FormatInt(s.opts.Store.Revision(), 10) + "); retry, here or on another replica",
			Header: http.Header{"Retry-After": {"1"}}}
	}
	if s.opts.Settle != nil {
		return s.opts.Settle(ctx)
	}
	return nil
}
