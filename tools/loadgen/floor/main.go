// Command floor is an HTTP server that does no work: it answers the load
// tool's person requests on gin and net/http, as svc's server does, but
// stores, decodes and checks nothing. Its CPU per request, measured by the
// load tool (-server-pid), is the floor under any figure svc's own server
// can reach on the same machine (docs/performance.md, "The floor").
//
//	floor -addr 127.0.0.1:18401 &
//	bin/loadgen -url http://127.0.0.1:18401 -objects 100000 -skip-preload \
//	  -scenarios create,update -duration 10s -server-pid $!
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

const coll = "/apis/people.example.com/v1alpha1/persons"

// person is what a get answers, its name in place of %s: a stored person
// of the load tool's size.
var personBefore, personAfter, _ = strings.Cut(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"%s","labels":{"team":"t3"},"version":7,"creationTimestamp":"2026-11-26T23:00:00.123456789Z"},"spec":{"name":"Person 42","email":"p42@example.com","age":42,"friends":["a","b"],"tags":["x","y","z"]},"status":{"friendCount":0}}`, "%s")

func main() {
	addr := flag.String("addr", "127.0.0.1:18401", "listen address")
	flag.Parse()
	gin.SetMode(gin.ReleaseMode)
	log.Fatal(http.ListenAndServe(*addr, handler()))
}

func handler() http.Handler {
	r := gin.New()
	r.GET("/readyz", func(c *gin.Context) { c.Status(http.StatusOK) })
	r.POST(coll, func(c *gin.Context) {
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			c.Status(http.StatusBadRequest)
			return
		}
		c.Header("Location", coll+"/x")
		c.Data(http.StatusCreated, "application/json", body)
	})
	r.GET(coll+"/:name", func(c *gin.Context) {
		b := append([]byte(personBefore), c.Param("name")...) // the load tool's names need no escape
		b = append(b, personAfter...)
		c.Data(http.StatusOK, "application/json", b)
	})
	r.PUT(coll+"/:name", func(c *gin.Context) {
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			c.Status(http.StatusBadRequest)
			return
		}
		c.Data(http.StatusOK, "application/json", body)
	})
	r.DELETE(coll, func(c *gin.Context) {
		c.Data(http.StatusOK, "application/json", []byte(`{"page":0,"size":0,"total":0,"items":[]}`))
	})
	return r
}
