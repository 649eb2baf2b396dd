package authz

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svcrun/svc/runtime/api/problem"
)

func TestWSCredentials(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString([]byte("Basic YWxpY2U6cHc="))
	req := func(upgrade, protocols, auth string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/apis/x/v1/ys?watch=true", nil)
		if upgrade != "" {
			r.Header.Set("Upgrade", upgrade)
		}
		if protocols != "" {
			r.Header.Set("Sec-WebSocket-Protocol", protocols)
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	r := req("websocket", "svc.watch, "+WSCredentialPrefix+enc, "")
	if err := wsCredentials(r); err != nil || r.Header.Get("Authorization") != "Basic YWxpY2U6cHc=" {
		t.Fatalf("upgrade with credential subprotocol: err %v, Authorization %q", err, r.Header.Get("Authorization"))
	}
	// An explicit header wins; a plain GET never reads the subprotocol.
	r = req("websocket", WSCredentialPrefix+enc, "Bearer abc")
	if wsCredentials(r); r.Header.Get("Authorization") != "Bearer abc" {
		t.Errorf("explicit header replaced: %q", r.Header.Get("Authorization"))
	}
	r = req("", WSCredentialPrefix+enc, "")
	if wsCredentials(r); r.Header.Get("Authorization") != "" {
		t.Errorf("non-upgrade request got credentials %q", r.Header.Get("Authorization"))
	}
	var p *problem.Error
	if err := wsCredentials(req("websocket", WSCredentialPrefix+"!!", "")); !errors.As(err, &p) || p.Status != http.StatusBadRequest {
		t.Errorf("malformed credential subprotocol: %v, want a 400", err)
	}
}
