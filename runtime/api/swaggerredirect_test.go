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

// The console's slashless path redirects the same way; its files are served
// under /console/ through the guard.
func TestConsoleRedirectNeedsNoAccess(t *testing.T) {
	asked := 0
	e := newEnvWith(t, api.Options{
		Console: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }),
		Guard: func(c *gin.Context) error {
			asked++
			return nil
		},
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(e.srv.URL + "/console")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/console/" || asked != 0 {
		t.Fatalf("GET /console = %d Location %q (guard asked %d times), want 301 to /console/ unasked", res.StatusCode, res.Header.Get("Location"), asked)
	}
	if r := e.do("GET", "/console/app.js", "", ""); r.status != http.StatusTeapot || asked != 1 {
		t.Errorf("GET /console/app.js = %d (guard asked %d times), want the handler's 418 after the guard", r.status, asked)
	}
}
