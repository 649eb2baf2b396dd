package server

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/object"
)

// PprofPath is where --pprof serves Go's profiles (net/http/pprof).
// Access needs a rule granting its non-resource URLs: only super-role
// holds one.
const PprofPath = "/debug/pprof/"

// MaxProfileSeconds bounds the seconds parameter of a profile, a trace or
// a delta profile (heap?seconds=N): the request holds its connection that
// long.
const MaxProfileSeconds = 300

// pprofRoutes serves net/http/pprof's handlers under PprofPath: the index,
// profile, trace, cmdline, symbol and every named profile (heap,
// goroutine, allocs, block, mutex, threadcreate). Importing the package
// also registers them on http.DefaultServeMux, which svc never serves.
func pprofRoutes(fail func(c *gin.Context, err error)) api.Routes {
	return func(r gin.IRouter) {
		h := func(c *gin.Context) { servePprof(c, fail) }
		r.GET(PprofPath+"*name", h)
		r.POST(PprofPath+"*name", h) // symbol lookups may post
	}
}

func servePprof(c *gin.Context, fail func(c *gin.Context, err error)) {
	q, err := api.Query(c)
	if err != nil {
		fail(c, err)
		return
	}
	// net/http/pprof answers a bad seconds in plain text and takes any
	// number: this is the API's problem body, and a bound. A profile
	// outlives a shorter --write-timeout: net/http/pprof moves the write
	// deadline out by the seconds asked for, through
	// http.ResponseController, which reaches the connection through the
	// API's response writers (Unwrap).
	if v := q.Get("seconds"); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > MaxProfileSeconds {
			fail(c, &problem.Error{Status: http.StatusBadRequest,
				Detail: fmt.Sprintf("seconds must be a whole number from 1 to %d, not %q", MaxProfileSeconds, v),
				Errors: []object.FieldError{{Field: "seconds", Message: fmt.Sprintf("must be from 1 to %d", MaxProfileSeconds)}}})
			return
		}
	}
	switch strings.TrimPrefix(c.Param("name"), "/") {
	case "profile":
		pprof.Profile(c.Writer, c.Request)
	case "trace":
		pprof.Trace(c.Writer, c.Request)
	case "cmdline":
		pprof.Cmdline(c.Writer, c.Request)
	case "symbol":
		pprof.Symbol(c.Writer, c.Request)
	default:
		pprof.Index(c.Writer, c.Request) // the index, and named profiles by their path
	}
}
