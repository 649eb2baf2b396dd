package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// fuzzHandler serves a memory store with one object, "ann", of a model
// with defaults, so creates also fill them in.
func fuzzHandler(f *testing.F) http.Handler {
	m := storetest.PersonModel()
	m.Defaults = &model.Defaults{Props: map[string]*model.Defaults{"spec": {Props: map[string]*model.Defaults{
		"age":  {Value: json.RawMessage(`18`)},
		"tags": {Value: json.RawMessage(`["new"]`)},
	}}}}
	st := storetest.Open(f, store.Options{}, m)
	reg := model.NewRegistry()
	reg.Register(m)
	a := api.New(api.Options{Store: st, Registry: reg})
	req := httptest.NewRequest("POST", base, strings.NewReader(`{"metadata":{"name":"ann","labels":{"a":"b"}},"spec":{"name":"Ann","age":3,"tags":["x"]}}`))
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	if rec.Code != 201 {
		f.Fatalf("seed: %d %s", rec.Code, rec.Body)
	}
	return a
}

// FuzzPatch sends arbitrary patches: whatever the body, the answer is never
// a server error.
func FuzzPatch(f *testing.F) {
	h := fuzzHandler(f)
	f.Add(true, `[{"op":"replace","path":"/spec/age","value":4}]`)
	f.Add(true, `[{"op":"add","path":"/metadata/labels/c","value":"d"},{"op":"remove","path":"/spec/tags/0"}]`)
	f.Add(true, `[{"op":"move","from":"/spec","path":"/status"}]`)
	f.Add(false, `{"spec":{"age":null,"name":"Bob"}}`)
	f.Add(false, `{"metadata":{"version":"x"}}`)
	f.Add(false, `{"kind":"Dog"}`)
	f.Fuzz(func(t *testing.T, jsonPatch bool, body string) {
		ct := "application/merge-patch+json"
		if jsonPatch {
			ct = "application/json-patch+json"
		}
		req := httptest.NewRequest("PATCH", base+"/ann", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("PATCH %s = %d %s", body, rec.Code, rec.Body)
		}
	})
}

// FuzzCreate sends arbitrary bodies to create: never a server error.
func FuzzCreate(f *testing.F) {
	h := fuzzHandler(f)
	f.Add(`{"metadata":{"name":"bob"},"spec":{"name":"Bob"}}`)
	f.Add(`{"metadata":{"generateName":"p-"},"spec":{"name":"Bob","age":1.5}}`)
	f.Add(`{"metadata":{"name":"x","finalizers":["a/b","a/b"]},"spec":{"name":"x","email":"no"}}`)
	f.Add(`{"apiVersion":"a/b/c","metadata":{"name":"y"},"spec":{"name":"y"}}`)
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", base, strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s = %d %s", body, rec.Code, rec.Body)
		}
	})
}
