package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/rbac"
)

// TestConcurrentPatchesWithoutVersion: patches that carry no version apply
// to the current object, however many arrive at once (20 at once gave ten
// 409s).
func TestConcurrentPatchesWithoutVersion(t *testing.T) {
	e := newEnv(t)
	e.create(`{"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`)
	const n = 20
	statuses := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"metadata":{"annotations":{"a%d":"x"}}}`, i)
			req, _ := http.NewRequest("PATCH", e.srv.URL+base+"/ann", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/merge-patch+json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses[i] = err.Error()
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			statuses[i] = fmt.Sprintf("%d %s", res.StatusCode, b)
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if !strings.HasPrefix(s, "200 ") {
			t.Errorf("patch %d = %s, want 200", i, s)
		}
	}
	md := e.do("GET", base+"/ann", "", "").json(t)["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	for i := range n {
		if ann[fmt.Sprintf("a%d", i)] != "x" {
			t.Errorf("annotation a%d is missing: %v", i, ann)
		}
	}
	if md["version"].(float64) != n {
		t.Errorf("version = %v, want %d", md["version"], n)
	}
}

// TestPatchWithVersionIsChecked: a patch that names a version is refused
// when the object has moved on, as before.
func TestPatchWithVersionIsChecked(t *testing.T) {
	e := newEnv(t)
	e.create(`{"metadata":{"name":"ann"},"spec":{"name":"Ann"}}`)
	if r := e.do("PATCH", base+"/ann", "application/merge-patch+json", `{"spec":{"age":1}}`); r.status != 200 {
		t.Fatalf("patch = %d %s", r.status, r.body)
	}
	r := e.do("PATCH", base+"/ann", "application/merge-patch+json", `{"metadata":{"version":0},"spec":{"age":2}}`)
	expectProblem(t, r, http.StatusConflict)
	r = e.do("PATCH", base+"/ann", "application/json-patch+json", `[{"op":"replace","path":"/metadata/version","value":0},{"op":"replace","path":"/spec/age","value":2}]`)
	expectProblem(t, r, http.StatusConflict)
	if r := e.do("PATCH", base+"/ann", "application/merge-patch+json", `{"metadata":{"version":1},"spec":{"age":3}}`); r.status != 200 {
		t.Errorf("patch at the current version = %d %s", r.status, r.body)
	}
}

// TestHostilePatches: patches that would cost the server unbounded memory
// or that RFC 6902 forbids are refused with a problem naming the limit or
// the path.
func TestHostilePatches(t *testing.T) {
	e := newEnv(t)
	e.create(`{"metadata":{"name":"ann"},"spec":{"name":"Ann","tags":["a","b"]}}`)
	copyBomb := []string{`{"op":"add","path":"/spec/tags/-","value":"` + strings.Repeat("t", 1000) + `"}`}
	for range 12 { // 4 MiB of tags: past the 3 MiB limit, yet harmless without it
		copyBomb = append(copyBomb, `{"op":"copy","from":"/spec/tags","path":"/spec/tags/-"}`)
	}
	deep := strings.Repeat(`{"a":`, 9990) + "1" + strings.Repeat("}", 9990)
	tests := []struct {
		name, ct, body string
		status         int
		detail         string
	}{
		{"copy bomb", "application/json-patch+json", "[" + strings.Join(copyBomb, ",") + "]", 413, "MaxPatchedBytes"},
		{"too many operations", "application/json-patch+json", "[" + strings.Repeat(`{"op":"test","path":"/kind","value":"Person"},`, 10000) + `{"op":"test","path":"/kind","value":"Person"}]`, 413, "MaxPatchOps"},
		{"deep merge patch", "application/merge-patch+json", `{"spec":` + deep + `}`, 400, "MaxDepth"},
		{"deep JSON patch", "application/json-patch+json", `[{"op":"add","path":"/spec/x","value":` + deep + `}]`, 400, "MaxDepth"},
		{"negative index", "application/json-patch+json", `[{"op":"add","path":"/spec/tags/-1","value":"n"}]`, 400, `"/spec/tags/-1"`},
		{"leading zero", "application/json-patch+json", `[{"op":"replace","path":"/spec/tags/01","value":"n"}]`, 400, `"/spec/tags/01"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("PATCH", base+"/ann", tc.ct, tc.body)
			p := expectProblem(t, r, tc.status)
			if d, _ := p["detail"].(string); !strings.Contains(d, tc.detail) {
				t.Errorf("detail %q does not name %s", d, tc.detail)
			}
		})
	}
	if tags := e.do("GET", base+"/ann", "", "").json(t)["spec"].(map[string]any)["tags"].([]any); len(tags) != 2 {
		t.Errorf("tags = %v after refused patches, want them unchanged", tags)
	}
	// Every body is held to the same depth, not only patches.
	r := e.do("POST", base, "application/json", `{"metadata":{"name":"deep"},"spec":{"name":"D","x":`+deep+`}}`)
	if p := expectProblem(t, r, 400); !strings.Contains(p["detail"].(string), "MaxDepth") {
		t.Errorf("deep create: detail %q does not name MaxDepth", p["detail"])
	}
}

// poisoned is the query that net/http's URL.Query cut short: past 10,000
// parameters it drops the rest and its error, the selector first.
func poisoned() string {
	var b strings.Builder
	b.WriteString("labelSelector=grp%3Dtarget")
	for i := range 10000 {
		fmt.Fprintf(&b, "&x%d=1", i)
	}
	return b.String()
}

// TestQueryIsParsedWhole: a list, a delete-collection or a watch whose
// query does not parse whole is refused before access control decides,
// and nothing is listed, watched or deleted.
func TestQueryIsParsedWhole(t *testing.T) {
	var guarded atomic.Int64
	var sawVerb atomic.Value
	e := newEnvWith(t, api.Options{Guard: func(c *gin.Context) error {
		// Admits everything, as for a super administrator; it reads the
		// middleware's parse.
		guarded.Add(1)
		if info, ok := rbac.RequestInfoFrom(c.Request.Context()); ok {
			sawVerb.Store(info.Verb)
		}
		return nil
	}})
	e.create(`{"metadata":{"name":"t1","labels":{"grp":"target"}},"spec":{"name":"T"}}`)
	e.create(`{"metadata":{"name":"o1","labels":{"grp":"other"}},"spec":{"name":"O"}}`)
	guarded.Store(0)
	bad := []struct{ name, query, param string }{
		{"past 10,000 parameters", poisoned(), "query"},
		{"past MaxParams", "labelSelector=grp%3Dtarget" + strings.Repeat("&x=1", 64), "query"},
		{"bad escape", "labelSelector=grp%3Dtarget&x=%zz", "x"},
		{"semicolon", "labelSelector=grp%3Dtarget&x=1;y=2", "x"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			expectProblem(t, e.do("GET", base+"?"+tc.query, "", ""), 400, tc.param)
			expectProblem(t, e.do("DELETE", base+"?"+tc.query, "", ""), 400, tc.param)
			expectProblem(t, e.do("GET", base+"?watch=true&"+tc.query, "", ""), 400, tc.param)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+base+"?"+tc.query, nil)
			if err == nil {
				c.CloseNow()
				t.Fatal("watch with the query was accepted")
			}
			if res == nil || res.StatusCode != 400 {
				t.Errorf("watch: %v, want a 400 answer", err)
			}
		})
	}
	if n := guarded.Load(); n != 0 {
		t.Errorf("access control decided on %d requests whose query did not parse", n)
	}
	for _, name := range []string{"t1", "o1"} {
		if r := e.do("GET", base+"/"+name, "", ""); r.status != 200 || strings.Contains(string(r.body), "deletionTimestamp") {
			t.Errorf("%s after refused requests = %d %s, want it untouched", name, r.status, r.body)
		}
	}
	// Within the limit, access control and the handler read one parse.
	l := e.do("GET", base+"?labelSelector=grp%3Dtarget&watch=false&x=1", "", "")
	if items := l.json(t)["items"].([]any); l.status != 200 || len(items) != 1 {
		t.Errorf("list = %d %s, want t1 alone", l.status, l.body)
	}
	if v, _ := sawVerb.Load().(string); v != "list" {
		t.Errorf("access control saw verb %q, want list", v)
	}
	// A misspelt selector on a delete is refused, not ignored: ignoring it
	// would delete the whole collection.
	expectProblem(t, e.do("DELETE", base+"?labelSelctor=grp%3Dtarget", "", ""), 400, "labelSelctor")
	expectProblem(t, e.do("DELETE", base+"?labelSelector=grp%3Dtarget&size=1", "", ""), 400, "size")
	for _, name := range []string{"t1", "o1"} {
		if r := e.do("GET", base+"/"+name, "", ""); r.status != 200 || strings.Contains(string(r.body), "deletionTimestamp") {
			t.Errorf("%s after a misspelt delete = %d %s, want it untouched", name, r.status, r.body)
		}
	}
	d := e.do("DELETE", base+"?labelSelector=grp%3Dtarget", "", "")
	if items := d.json(t)["items"].([]any); d.status != 200 || len(items) != 1 {
		t.Errorf("delete-collection = %d %s, want t1 alone", d.status, d.body)
	}
	if r := e.do("GET", base+"/o1", "", ""); strings.Contains(string(r.body), "deletionTimestamp") {
		t.Errorf("o1 = %s, want it untouched", r.body)
	}
}
