package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"

	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

// TestGeneratedCodecChangesNoAnswer sends the same requests to a model
// with the generated codecs and to one without (the generic decode and
// encoding/json): every answer is the same, successes and problems alike,
// and a bad body is refused naming every unknown field and every value
// of the wrong type at once, whatever path it came through.
func TestGeneratedCodecChangesNoAnswer(t *testing.T) {
	fast := example.PersonModel()
	generic := example.PersonModel()
	generic.DecodeJSON, generic.EncodeJSON, generic.SetStatusJSON = nil, nil, nil
	if fast.DecodeJSON == nil || fast.EncodeJSON == nil || fast.SetStatusJSON == nil {
		t.Fatal("the example model has no generated codec")
	}
	const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
	reqs := []struct {
		method, path, ct, body string
		fields                 []string // for a 400: every field it must name
	}{
		{"POST", base, "application/json", `{` + id + `"metadata":{"name":"ann","labels":{"a":"b"},"annotations":{"n":"<b>\u2028"}},"spec":{"name":"Ann & co","age":30,"tags":["x"]}}`, nil},
		{"POST", base, "application/json", `{` + id + `"metadata":{"name":"bob","x":1},"spec":{"name":7,"age":"old","agee":1,"tags":[1,"t"]},"extra":true}`,
			[]string{"extra", "metadata.x", "spec.age", "spec.agee", "spec.name", "spec.tags[0]"}},
		{"POST", base, "application/json", `{` + id + `"metadata":{"name":"Bad_Name"},"spec":{"name":"B","age":200,"gender":"X"}}`,
			[]string{"metadata.name", "spec.age", "spec.gender"}},
		{"POST", base, "application/json", `{"apiVersion":"x/v1","kind":"","metadata":{"name":"cy"},"spec":{"name":"C"}}`, []string{"apiVersion", "kind"}},
		// time.Time reads a one-digit hour and a +24:00 offset; the
		// date-time format does not.
		{"POST", base, "application/json", `{` + id + `"metadata":{"name":"dee","creationTimestamp":"2026-01-02T3:04:05Z"},"spec":{"name":"D"}}`, []string{"metadata.creationTimestamp"}},
		{"POST", base, "application/json", `{` + id + `"metadata":{"name":"eve","creationTimestamp":"2026-01-02T03:04:05+24:00"},"spec":{"name":"D"}}`, []string{"metadata.creationTimestamp"}},
		{"POST", base, "application/json", `{` + id + `"metadata":{"name":"cy"},"spec":{"name":"C"}} {}`, nil},
		{"PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"ann","version":0},"spec":{"name":"Ann","age":"x","nope":1}}`,
			[]string{"spec.age", "spec.nope"}},
		{"PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"other","version":0},"spec":{"name":"Ann","agee":1}}`,
			[]string{"metadata.name", "spec.agee"}},
		{"PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"ann","version":0},"spec":{"name":"Ann","age":31,"tags":["x","y"]},"status":{"friendCount":9}}`, nil},
		{"PUT", base + "/ann", "application/json", `{` + id + `"metadata":{"name":"ann","version":1},"spec":{"name":"Ann","age":31,"tags":["x","y"]}}`, nil},
		{"PATCH", base + "/ann", "application/merge-patch+json", `{"spec":{"age":"x","zzz":1}}`, []string{"spec.age", "spec.zzz"}},
		{"PATCH", base + "/ann", "application/merge-patch+json", `{"spec":{"email":"ann@example.com"}}`, nil},
		{"PUT", base + "/ann/status", "application/json", `{` + id + `"metadata":{"name":"ann","version":2},"spec":{"name":"Ann"},"status":{"friendCount":"x"}}`, []string{"status.friendCount"}},
		{"PUT", base + "/ann/status", "application/json", `{` + id + `"metadata":{"name":"ann","version":2},"spec":{"name":"Ann"},"status":{"friendCount":2}}`, nil},
		{"GET", base + "/ann", "", "", nil},
		{"DELETE", base + "/ann", "", "", nil},
	}
	envs := []*env{newEnvOf(t, fast, api.Options{}, nil), newEnvOf(t, generic, api.Options{}, nil)}
	for _, rq := range reqs {
		var answers [2]map[string]any
		var statuses [2]int
		for i, e := range envs {
			r := e.do(rq.method, rq.path, rq.ct, rq.body)
			statuses[i], answers[i] = r.status, r.json(t)
			delete(answers[i], "requestId")
			if md, ok := answers[i]["metadata"].(map[string]any); ok {
				delete(md, "creationTimestamp") // two stores, two clocks
				delete(md, "deletionTimestamp")
			}
			if rq.fields != nil {
				got := fields(t, r)
				for _, f := range rq.fields {
					if !got[f] {
						t.Errorf("%s %s %s: errors %v lack %s", rq.method, rq.path, rq.body, got, f)
					}
				}
			}
		}
		if statuses[0] != statuses[1] || !reflect.DeepEqual(answers[0], answers[1]) {
			a, _ := json.Marshal(answers[0])
			b, _ := json.Marshal(answers[1])
			t.Errorf("%s %s %s:\ngenerated %d %s\n  generic %d %s", rq.method, rq.path, rq.body, statuses[0], a, statuses[1], b)
		}
	}
}

// fields returns the fields a problem body names.
func fields(t *testing.T, r resp) map[string]bool {
	out := map[string]bool{}
	errs, _ := r.json(t)["errors"].([]any)
	for _, e := range errs {
		out[e.(map[string]any)["field"].(string)] = true
	}
	return out
}

// A create of a model with defaults takes the generated decoder and fills
// the defaults into the typed value; its answers are those of the generic
// decode, which fills them into the JSON document — a default the schema
// refuses (an enum's non-member) included.
func TestTypedDefaultsChangeNoAnswer(t *testing.T) {
	defaults := func(gender string) *model.Defaults {
		return &model.Defaults{Props: map[string]*model.Defaults{
			"spec": {Props: map[string]*model.Defaults{
				"age":    {Value: json.RawMessage(`30`)},
				"gender": {Value: json.RawMessage(gender)},
				"tags":   {Value: json.RawMessage(`["new"]`)},
			}},
		}}
	}
	const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
	for _, gender := range []string{`"FEMALE"`, `"X"`} {
		fast, generic := example.PersonModel(), example.PersonModel()
		fast.Defaults, generic.Defaults = defaults(gender), defaults(gender)
		generic.DecodeJSON = nil
		if codec.TypedDefaults(fast) == nil {
			t.Fatal("no typed defaults for the example model")
		}
		envs := []*env{newEnvOf(t, fast, api.Options{}, nil), newEnvOf(t, generic, api.Options{}, nil)}
		for i, body := range []string{
			`{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`,
			`{` + id + `"metadata":{"name":"bob"},"spec":{"name":"Bob","age":41,"gender":"MALE"}}`,
			`{` + id + `"metadata":{"name":"cy"},"spec":{"name":"Cy","age":null}}`,
			`{` + id + `"metadata":{"name":"dee"},"spec":{"name":"Dee","age":500}}`,
		} {
			var answers [2]map[string]any
			var statuses [2]int
			for i, e := range envs {
				r := e.do("POST", base, "application/json", body)
				statuses[i], answers[i] = r.status, r.json(t)
				delete(answers[i], "requestId")
				if md, ok := answers[i]["metadata"].(map[string]any); ok {
					delete(md, "creationTimestamp")
				}
			}
			if statuses[0] != statuses[1] || !reflect.DeepEqual(answers[0], answers[1]) {
				a, _ := json.Marshal(answers[0])
				b, _ := json.Marshal(answers[1])
				t.Errorf("default gender %s, %s:\ngenerated %d %s\n  generic %d %s", gender, body, statuses[0], a, statuses[1], b)
			}
			if gender == `"FEMALE"` && i == 0 && statuses[0] != http.StatusCreated {
				t.Errorf("create with defaults: %d", statuses[0])
			}
		}
	}
}

// A create of a model with defaults takes the generated decoder, the
// defaults filled into the typed value (TestTypedDefaultsChangeNoAnswer
// checks the answers are the generic decode's).
func TestCreateWithDefaultsDecodesTyped(t *testing.T) {
	m := example.PersonModel()
	m.Defaults = &model.Defaults{Props: map[string]*model.Defaults{
		"spec": {Props: map[string]*model.Defaults{"age": {Value: json.RawMessage(`30`)}}},
	}}
	body := []byte(`{"apiVersion":"people.example.com/v1alpha1","kind":"Person","metadata":{"name":"ann"},"spec":{"name":"Ann"}}`)
	obj, ok := api.DecodeFast(m, body, true)
	if !ok {
		t.Fatal("a create of a model with defaults took the generic decode")
	}
	if p := obj.(*example.Person); p.Spec.Age == nil || *p.Spec.Age != 30 {
		t.Fatalf("age %v, want the default 30", p.Spec.Age)
	}
}

// A status write and an update that keeps the stored status take the
// model's generated status setter (TestGeneratedCodecChangesNoAnswer
// checks that their answers are the reflection path's).
func TestStatusWritesUseTheGeneratedSetter(t *testing.T) {
	m := example.PersonModel()
	set := m.SetStatusJSON
	var calls atomic.Int64
	m.SetStatusJSON = func(obj object.Object, data []byte) bool {
		calls.Add(1)
		return set(obj, data)
	}
	e := newEnvOf(t, m, api.Options{}, nil)
	const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
	for _, rq := range []struct {
		method, path, body string
		status             int
		calls              int64 // the setter's calls so far
	}{
		{"POST", base, `{` + id + `"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`, http.StatusCreated, 0},
		{"PUT", base + "/ann/status", `{` + id + `"metadata":{"name":"ann","version":0},"spec":{"name":"Ann"},"status":{"friendCount":2}}`, http.StatusOK, 1},
		{"PUT", base + "/ann", `{` + id + `"metadata":{"name":"ann","version":1},"spec":{"name":"Ann","age":3},"status":{"friendCount":9}}`, http.StatusOK, 2},
	} {
		if r := e.do(rq.method, rq.path, "application/json", rq.body); r.status != rq.status {
			t.Fatalf("%s %s: %d, want %d", rq.method, rq.path, r.status, rq.status)
		}
		if got := calls.Load(); got != rq.calls {
			t.Errorf("after %s %s: the generated setter ran %d times, want %d", rq.method, rq.path, got, rq.calls)
		}
	}
	r := e.do("GET", base+"/ann", "", "")
	if st, _ := r.json(t)["status"].(map[string]any); st["friendCount"] != 2.0 {
		t.Errorf("status after the update: %v, want the stored friendCount 2", st)
	}
}
