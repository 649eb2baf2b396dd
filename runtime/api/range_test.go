package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestRangeTermsOverHTTP: range terms in fieldSelector narrow lists (with
// sort and paging) and watches; bad ones are 400 problems naming the
// parameter and the field.
func TestRangeTermsOverHTTP(t *testing.T) {
	e := newEnv(t)
	for i, age := range []int{5, 17, 18, 40, 64, 65, 90} {
		e.create(fmt.Sprintf(`{"metadata":{"name":"p%d"},"spec":{"name":"n%d","age":%d}}`, i, i, age))
	}
	e.create(`{"metadata":{"name":"ageless"},"spec":{"name":"x"}}`)

	list := func(q string) (string, float64) {
		t.Helper()
		r := e.do("GET", base+"?"+q, "", "")
		if r.status != http.StatusOK {
			t.Fatalf("GET ?%s = %d %s", q, r.status, r.body)
		}
		body := r.json(t)
		var names []string
		for _, it := range body["items"].([]any) {
			names = append(names, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		return strings.Join(names, ","), body["total"].(float64)
	}
	for _, tc := range []struct {
		q     string
		names string
		total float64
	}{
		{"fieldSelector=spec.age%3E%3D18&fieldSelector=spec.age%3C65&sort=spec.age,desc", "p4,p3,p2", 3},
		{"fieldSelector=spec.age%3E%3D18&fieldSelector=spec.age%3C65&sort=spec.age,asc&size=2&page=2", "p4", 3},
		{"fieldSelector=spec.age%3E64&sort=spec.age", "p5,p6", 2},
		{"fieldSelector=spec.age%3C%3D17&sort=spec.age,desc", "p1,p0", 2}, // ageless is in no range
		{"fieldSelector=spec.name%3En4&sort=name", "ageless,p5,p6", 3},    // "x" > "n4"
		{"fieldSelector=name%3C%3Dp1&sort=name", "ageless,p0,p1", 3},
		{"fieldSelector=spec.age%3E100", "", 0},
	} {
		if names, total := list(tc.q); names != tc.names || total != tc.total {
			t.Errorf("GET ?%s = %s (total %v), want %s (total %v)", tc.q, names, total, tc.names, tc.total)
		}
	}

	for _, tc := range []struct{ q, param, detail string }{
		{"fieldSelector=spec.age%3Eabc", "fieldSelector", `field spec.age: \"abc\" is not an integer`},
		{"fieldSelector=spec.gender%3EF", "fieldSelector", "field spec.gender is not indexed"},
		{"fieldSelector=metadata.creationTimestamp%3C%3Dyesterday", "fieldSelector", "is not an RFC 3339 date-time"},
		{"fieldSelector=spec.age%3E%3D(1,2)", "fieldSelector", "a range term takes one value"},
		{"labelSelector=tier%3E1", "labelSelector", `invalid key \"tier\u003e1\"`},
	} {
		r := e.do("GET", base+"?"+tc.q, "", "")
		expectProblem(t, r, http.StatusBadRequest, tc.param)
		if !strings.Contains(string(r.body), tc.detail) {
			t.Errorf("GET ?%s: problem %s, want it to say %s", tc.q, r.body, tc.detail)
		}
	}

	// A watch refuses a bad range before the upgrade.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+base+"?watch=true&fieldSelector=spec.age%3Eabc", nil)
	if err == nil {
		c.CloseNow()
		t.Fatal("watch with spec.age>abc was accepted")
	}
	if res == nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("watch with spec.age>abc: %v, %v; want a 400", res, err)
	}
	body, _ := io.ReadAll(res.Body)
	expectProblem(t, resp{res.StatusCode, res.Header, body}, http.StatusBadRequest, "fieldSelector")
	if !strings.Contains(string(body), `field spec.age: \"abc\" is not an integer`) {
		t.Errorf("watch problem %s does not name the field and the value", body)
	}

	w := dial(t, e, base+"?watch=true&fieldSelector=spec.age%3E%3D18&fieldSelector=spec.age%3C65&sendInitialEvents=true")
	for _, want := range []string{"ADDED p2", "ADDED p3", "ADDED p4"} {
		if got := read(t, w); got != want {
			t.Errorf("initial watch event %s, want %s", got, want)
		}
	}
	e.create(`{"metadata":{"name":"young"},"spec":{"name":"x","age":12}}`)
	e.create(`{"metadata":{"name":"mid"},"spec":{"name":"x","age":50}}`)
	if r := e.do("PUT", base+"/p1", "application/json", `{"metadata":{"name":"p1","version":0},"spec":{"name":"n1","age":18}}`); r.status != http.StatusOK {
		t.Fatalf("update p1 = %d %s", r.status, r.body)
	}
	e.do("DELETE", base+"/p3", "", "")
	for _, want := range []string{"ADDED mid", "ADDED p1", "DELETED p3"} {
		if got := read(t, w); got != want {
			t.Errorf("watch event %s, want %s", got, want)
		}
	}
}
