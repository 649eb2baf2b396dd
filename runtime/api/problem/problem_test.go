package problem

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svcrun/svc/runtime/store"
)

func TestUniqueClashNamesTheField(t *testing.T) {
	err := fmt.Errorf("store: create people.example.com/v1alpha1/Person/bob: %w",
		&store.UniqueError{Kind: "Person", Index: "spec.email", Value: "a@example.com", Holder: "ann"})
	p := From(err)
	if p.Status != http.StatusConflict {
		t.Fatalf("status %d, want 409", p.Status)
	}
	if len(p.Errors) != 1 || p.Errors[0].Field != "spec.email" {
		t.Fatalf("errors %+v, want one naming spec.email", p.Errors)
	}
	if want := `value "a@example.com" is already used by "ann"`; p.Errors[0].Message != want {
		t.Errorf("message %q, want %q", p.Errors[0].Message, want)
	}
	// Other conflicts name no field.
	if p := From(fmt.Errorf("x: %w", &store.ConflictError{})); p.Status != http.StatusConflict || len(p.Errors) != 0 {
		t.Errorf("version conflict: %d %+v", p.Status, p.Errors)
	}
}

// Every 401 carries the Basic challenge, except to a script's request: a
// browser would show its own dialog over the page's sign-in form.
func TestScriptsGetNoChallenge(t *testing.T) {
	for _, tc := range []struct{ xrw, want string }{{"", `Basic realm="svc"`}, {"XMLHttpRequest", ""}} {
		r := httptest.NewRequest(http.MethodGet, "/apis/x/v1/ys", nil)
		if tc.xrw != "" {
			r.Header.Set("X-Requested-With", tc.xrw)
		}
		w := httptest.NewRecorder()
		Write(w, r, "id", From(&Error{Status: http.StatusUnauthorized, Detail: "no", Header: http.Header{"Www-Authenticate": {`Basic realm="svc"`}}}))
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("status %d", w.Code)
		}
		if got := w.Header().Get("WWW-Authenticate"); got != tc.want {
			t.Errorf("X-Requested-With %q: WWW-Authenticate %q, want %q", tc.xrw, got, tc.want)
		}
	}
}
