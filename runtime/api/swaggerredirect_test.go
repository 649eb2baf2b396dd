package api_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/problem"
)

// /swagger-ui without its slash redirects every caller to the public
// /swagger-ui/, before access control: a guard that refuses everything
// (as for an anonymous caller on a path no role names) is not asked.
func TestSwaggerUIRedirectNeedsNoAccess(t *testing.T) {
	asked := 0
	e := newEnvWith(t, api.Options{
		SwaggerUI: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }),
		Guard: func(c *gin.Context) error {
			asked++
			return problem.New(http.StatusUnauthorized, "no")
		},
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(e.srv.URL + "/swagger-ui")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/swagger-ui/" {
		t.Fatalf("GET /swagger-ui = %d Location %q, want 301 to /swagger-ui/", res.StatusCode, res.Header.Get("Location"))
	}
	if asked != 0 {
		t.Errorf("the guard was asked %d times for the redirect", asked)
	}
	// Anything else still goes through the guard.
	if r := e.do("POST", "/swagger-ui", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("POST /swagger-ui = %d, want the guard's 401", r.status)
	}
}
