package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// withStatus creates ann and gives it status.friendCount 3 through the
// status subresource; it returns the object's version.
func (e *env) withStatus() float64 {
	e.t.Helper()
	e.create(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","labels":{"team":"a"},"annotations":{"note":"x"},"finalizers":["example.com/hold"]},"spec":{"name":"Ann"}}`)
	r := e.do("PUT", base+"/ann/status", "application/json",
		`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","version":0},"spec":{"name":"Ann"},"status":{"friendCount":3}}`)
	if r.status != http.StatusOK {
		e.t.Fatalf("PUT status = %d %s", r.status, r.body)
	}
	return version(r.json(e.t))
}

func version(obj map[string]any) float64 {
	return obj["metadata"].(map[string]any)["version"].(float64)
}

// friendCount is the object's status.friendCount, or -1 without one.
func friendCount(obj map[string]any) float64 {
	st, ok := obj["status"].(map[string]any)
	if !ok {
		return -1
	}
	n, ok := st["friendCount"].(float64)
	if !ok {
		return -1
	}
	return n
}

// TestCreateDropsStatus: a client's status in a create is dropped.
func TestCreateDropsStatus(t *testing.T) {
	for name, e := range map[string]*env{"hand-written model": newEnv(t), "generated model": newGeneratedEnv(t)} {
		obj := e.create(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"},"status":{"friendCount":9}}`)
		if _, ok := obj["status"]; ok {
			t.Errorf("%s: created %v, want no status", name, obj)
		}
	}
}

// TestCreateStatusFromAdmission: the status a model's admission sets on
// create is stored, the client's being dropped before admission sees it.
func TestCreateStatusFromAdmission(t *testing.T) {
	m := storetest.PersonModel()
	var seen *storetest.PersonStatus
	m.Admit = func(_ context.Context, old, obj object.Object) error {
		if p := obj.(*storetest.Person); old == nil {
			seen = p.Status
			p.Status = &storetest.PersonStatus{FriendCount: 2}
		}
		return nil
	}
	e := newEnvOf(t, m, api.Options{}, nil)
	obj := e.create(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"},"status":{"friendCount":9}}`)
	if seen != nil {
		t.Errorf("admission saw the client's status %+v", *seen)
	}
	if friendCount(obj) != 2 {
		t.Errorf("created %v, want the admission's friendCount 2", obj)
	}
}

// TestMainWritesKeepStatus: PUT, merge patch and JSON patch of the object
// change its spec and ignore any change to its status.
func TestMainWritesKeepStatus(t *testing.T) {
	const mergePatch, jsonPatch = "application/merge-patch+json", "application/json-patch+json"
	for _, gen := range []bool{false, true} {
		e := newEnv(t)
		if gen {
			e = newGeneratedEnv(t)
		}
		v := e.withStatus()
		writes := []struct{ method, ct, body string }{
			{"PUT", "application/json", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","version":%v,"labels":{"team":"a"},"annotations":{"note":"x"},"finalizers":["example.com/hold"]},"spec":{"name":"Ann 1"},"status":{"friendCount":99}}`},
			{"PUT", "application/json", `{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","version":%v,"finalizers":["example.com/hold"]},"spec":{"name":"Ann 2"}}`},
			{"PATCH", mergePatch, `{"metadata":{"version":%v},"spec":{"name":"Ann 3"},"status":{"friendCount":99}}`},
			{"PATCH", mergePatch, `{"metadata":{"version":%v},"spec":{"name":"Ann 4"},"status":null}`},
			{"PATCH", jsonPatch, `[{"op":"replace","path":"/metadata/version","value":%v},{"op":"replace","path":"/spec/name","value":"Ann 5"},{"op":"replace","path":"/status/friendCount","value":99}]`},
			{"PATCH", jsonPatch, `[{"op":"replace","path":"/metadata/version","value":%v},{"op":"replace","path":"/spec/name","value":"Ann 6"},{"op":"remove","path":"/status"}]`},
		}
		for i, w := range writes {
			r := e.do(w.method, base+"/ann", w.ct, fmt.Sprintf(w.body, v))
			if r.status != http.StatusOK {
				t.Fatalf("generated %t: %s %s = %d %s", gen, w.method, w.body, r.status, r.body)
			}
			obj := r.json(t)
			name := obj["spec"].(map[string]any)["name"]
			if want := fmt.Sprintf("Ann %d", i+1); name != want || friendCount(obj) != 3 {
				t.Errorf("generated %t: %s %s: spec.name %v, status %v; want %q and friendCount 3", gen, w.method, w.body, name, obj["status"], want)
			}
			v = version(obj)
		}
		// A write that changes the status only changes nothing.
		r := e.do("PATCH", base+"/ann", mergePatch, `{"status":{"friendCount":50}}`)
		if obj := r.json(t); r.status != http.StatusOK || version(obj) != v || friendCount(obj) != 3 {
			t.Errorf("generated %t: a status-only patch = %d %s, want version %v and friendCount 3", gen, r.status, r.body, v)
		}
	}
}

// TestStatusSubresourceKeepsTheRest: PUT .../status changes the status
// only: spec, labels, annotations and finalizers stay as stored, and the
// version is the precondition.
func TestStatusSubresourceKeepsTheRest(t *testing.T) {
	e := newGeneratedEnv(t)
	v := e.withStatus()
	r := e.do("PUT", base+"/ann/status", "application/json", fmt.Sprintf(
		`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","version":%v,"labels":{"team":"b"}},"spec":{"name":"Mallory"},"status":{"friendCount":4}}`, v))
	if r.status != http.StatusOK {
		t.Fatalf("PUT status = %d %s", r.status, r.body)
	}
	obj := r.json(t)
	md := obj["metadata"].(map[string]any)
	if friendCount(obj) != 4 || obj["spec"].(map[string]any)["name"] != "Ann" ||
		md["labels"].(map[string]any)["team"] != "a" || md["annotations"].(map[string]any)["note"] != "x" ||
		fmt.Sprint(md["finalizers"]) != "[example.com/hold]" {
		t.Errorf("PUT status stored %s; want friendCount 4 and everything else as before", r.body)
	}
	if g := e.do("GET", base+"/ann", "", ""); string(g.body) != string(r.body) {
		t.Errorf("GET = %s, want what PUT status answered", g.body)
	}
	for _, body := range []string{
		fmt.Sprintf(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann","version":%v},"spec":{"name":"Ann"},"status":{"friendCount":5}}`, v), // stale
		`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"},"status":{"friendCount":5}}`,                              // none
	} {
		expectProblem(t, e.do("PUT", base+"/ann/status", "application/json", body), http.StatusConflict)
	}
}
