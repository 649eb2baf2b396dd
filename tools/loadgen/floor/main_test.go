package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The floor answers each request of the load tool's create and update
// scenarios as svc does: the status they expect and a person to read.
func TestFloorAnswersTheLoadToolsRequests(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	do := func(method, path, body string) (int, http.Header, []byte) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	if st, h, b := do(http.MethodPost, coll, `{"metadata":{"name":"a"}}`); st != http.StatusCreated || h.Get("Location") == "" || string(b) != `{"metadata":{"name":"a"}}` {
		t.Errorf("create: %d %q %s", st, h.Get("Location"), b)
	}
	st, _, b := do(http.MethodGet, coll+"/lg-7", "")
	var p struct {
		Metadata struct {
			Name    string `json:"name"`
			Version int64  `json:"version"`
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(b, &p); st != http.StatusOK || err != nil || p.Metadata.Name != "lg-7" || p.Spec["age"] == nil {
		t.Errorf("get: %d %v %s", st, err, b)
	}
	if st, _, b := do(http.MethodPut, coll+"/lg-7", `{"x":1}`); st != http.StatusOK || string(b) != `{"x":1}` {
		t.Errorf("update: %d %s", st, b)
	}
	if st, _, b := do(http.MethodDelete, coll+"?labelSelector=x%3Dy", ""); st != http.StatusOK || !strings.Contains(string(b), `"total":0`) {
		t.Errorf("delete the run: %d %s", st, b)
	}
}
