package main_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Store writes over HTTP: a person with more tags than one object may put
// into an index is refused 400 naming spec.tags, and a person being
// deleted takes no new finalizer (400 naming metadata.finalizers) while
// its finalizers can still be removed, which ends the deletion.
func TestStoreWriteLimits(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)

	tags := make([]string, 1001)
	for i := range tags {
		tags[i] = fmt.Sprintf("%q", fmt.Sprint("t", i))
	}
	body := `{` + envelope + `,"metadata":{"name":"tagged"},"spec":{"name":"T","tags":[` + strings.Join(tags, ",") + `]}}`
	code, res := s.do(admin(req{method: "POST", path: persons, body: body}))
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(res["errors"]), "spec.tags") || !strings.Contains(fmt.Sprint(res["errors"]), "at most 1000") {
		t.Fatalf("create with 1001 tags = %d %v, want 400 naming spec.tags and the limit", code, res)
	}
	body = `{` + envelope + `,"metadata":{"name":"tagged"},"spec":{"name":"T","tags":[` + strings.Join(tags[:1000], ",") + `]}}`
	if code, res := s.do(admin(req{method: "POST", path: persons, body: body})); code != http.StatusCreated {
		t.Fatalf("create with 1000 tags = %d %v", code, res)
	}

	body = `{` + envelope + `,"metadata":{"name":"held","finalizers":["example.com/a"]},"spec":{"name":"H"}}`
	if code, res := s.do(admin(req{method: "POST", path: persons, body: body})); code != http.StatusCreated {
		t.Fatalf("create = %d %v", code, res)
	}
	code, res = s.do(admin(req{method: "DELETE", path: persons + "/held"}))
	if code != http.StatusOK && code != http.StatusAccepted {
		t.Fatalf("delete = %d %v", code, res)
	}
	_, cur := s.do(admin(req{method: "GET", path: persons + "/held"}))
	version := cur["metadata"].(map[string]any)["version"]
	put := func(finalizers string) (int, map[string]any) {
		return s.do(admin(req{method: "PUT", path: persons + "/held", body: `{` + envelope +
			`,"metadata":{"name":"held","version":` + fmt.Sprint(version) + `,"finalizers":[` + finalizers + `]},"spec":{"name":"H"}}`}))
	}
	code, res = put(`"example.com/a","example.com/late"`)
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(res["errors"]), "metadata.finalizers") {
		t.Fatalf("PUT adding a finalizer while deleting = %d %v, want 400 naming metadata.finalizers", code, res)
	}
	if code, res := put(``); code != http.StatusOK {
		t.Fatalf("PUT removing the last finalizer = %d %v, want 200", code, res)
	}
	if code, _ := s.do(admin(req{method: "GET", path: persons + "/held"})); code != http.StatusNotFound {
		t.Fatalf("GET after the last finalizer = %d, want 404", code)
	}
}
