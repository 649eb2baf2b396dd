package api_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
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
