package main_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestHostileBodiesAndQueries runs the hostile patches and queries of
// issue #30 against the binary: each is refused with a problem naming
// the limit or the path, and leaves the data as it was.
func TestHostileBodiesAndQueries(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)
	labelled := func(name, grp string) string {
		return `{` + envelope + `,"metadata":{"name":"` + name + `","labels":{"grp":"` + grp + `"}},"spec":{"name":"` + name + `"}}`
	}
	for _, p := range []string{labelled("t1", "target"), labelled("o1", "other")} {
		if st, body := s.do(admin(req{method: "POST", path: persons, body: p})); st != 201 {
			t.Fatalf("create = %d %v", st, body)
		}
	}
	untouched := func(when string) {
		t.Helper()
		for _, name := range []string{"t1", "o1"} {
			st, body := s.do(admin(req{method: "GET", path: persons + "/" + name}))
			md, _ := body["metadata"].(map[string]any)
			if st != 200 || md["deletionTimestamp"] != nil || md["version"] != float64(0) {
				t.Errorf("%s: %s = %d %v, want it untouched", when, name, st, body)
			}
		}
	}
	problem := func(r req, status int, names string) {
		t.Helper()
		st, body := s.do(admin(r))
		if d, _ := body["detail"].(string); st != status || !strings.Contains(d, names) {
			t.Errorf("%s %.60s… = %d %v, want %d naming %s", r.method, r.path, st, body["detail"], status, names)
		}
	}

	t.Run("poisoned query", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("labelSelector=grp%3Dtarget")
		for i := range 10000 {
			fmt.Fprintf(&b, "&x%d=1", i)
		}
		q := b.String()
		problem(req{method: "GET", path: persons + "?" + q}, 400, "MaxParams")
		problem(req{method: "GET", path: persons + "?watch=true&" + q}, 400, "MaxParams")
		problem(req{method: "DELETE", path: persons + "?" + q}, 400, "MaxParams")
		problem(req{method: "DELETE", path: persons + "?labelSelector=grp%3Dtarget&x=%zz"}, 400, `invalid x`)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ws, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http")+persons+"?"+q, &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Basic " + basic("admin", adminPW)}}})
		if err == nil {
			ws.CloseNow()
			t.Fatal("a watch with the poisoned query was accepted")
		}
		if res == nil || res.StatusCode != 400 {
			t.Errorf("watch with the poisoned query: %v, want a 400", err)
		}
		untouched("after poisoned queries")
	})

	t.Run("hostile patches", func(t *testing.T) {
		ops := []string{`{"op":"add","path":"/spec/tags","value":["` + strings.Repeat("t", 1000) + `"]}`}
		for range 12 { // 4 MiB of tags from a 1.6 KB body
			ops = append(ops, `{"op":"copy","from":"/spec/tags","path":"/spec/tags/-"}`)
		}
		const jp, mp = "application/json-patch+json", "application/merge-patch+json"
		deep := strings.Repeat(`{"a":`, 9990) + "1" + strings.Repeat("}", 9990)
		problem(req{method: "PATCH", path: persons + "/t1", ct: jp, body: "[" + strings.Join(ops, ",") + "]"}, 413, "MaxPatchedBytes")
		problem(req{method: "PATCH", path: persons + "/t1", ct: mp, body: `{"spec":` + deep + `}`}, 400, "MaxDepth")
		problem(req{method: "POST", path: persons, body: `{"spec":` + deep + `}`}, 400, "MaxDepth")
		problem(req{method: "PATCH", path: persons + "/t1", ct: jp, body: `[{"op":"add","path":"/spec/tags","value":["a"]},{"op":"add","path":"/spec/tags/-1","value":"b"}]`}, 400, `/spec/tags/-1`)
		untouched("after hostile patches")
	})

	t.Run("concurrent patches without a version", func(t *testing.T) {
		const n = 20
		got := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				hr, _ := http.NewRequest("PATCH", s.url+persons+"/o1", strings.NewReader(fmt.Sprintf(`{"metadata":{"annotations":{"a%d":"x"}}}`, i)))
				hr.SetBasicAuth("admin", adminPW)
				hr.Header.Set("Content-Type", "application/merge-patch+json")
				res, err := http.DefaultClient.Do(hr)
				if err != nil {
					got[i] = err.Error()
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				got[i] = fmt.Sprintf("%d %s", res.StatusCode, b)
			})
		}
		wg.Wait()
		for i, g := range got {
			if !strings.HasPrefix(g, "200 ") {
				t.Errorf("patch %d = %s, want 200", i, g)
			}
		}
		_, body := s.do(admin(req{method: "GET", path: persons + "/o1"}))
		md, _ := body["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		for i := range n {
			if ann[fmt.Sprintf("a%d", i)] != "x" {
				t.Errorf("annotation a%d missing: %v", i, ann)
			}
		}
	})
}
