package bookshelf_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/server/servertest"
	"library.example.com/bookshelf"
)

const password = "bookshelf-test-admin"

// do sends a request, as the administrator unless anon, and decodes the
// answer.
func do(t *testing.T, s *servertest.Server, method, path, body string, anon bool) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if !anon {
		req.SetBasicAuth("admin", password)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out
}

// TestBookshelf runs the plugin in a server: books are created through
// the generated API, the unique isbn index holds, the public template
// lets anyone read a summary, and the controller shelves each book.
func TestBookshelf(t *testing.T) {
	s := servertest.Start(t, servertest.Options{AdminPassword: password, Plugins: []plugin.Plugin{bookshelf.Plugin{}}})
	s.WaitPhase(bookshelf.PluginName, plugin.Started)
	const books = "/apis/library.example.com/v1alpha1/books"
	dune := `{"apiVersion":"library.example.com/v1alpha1","kind":"Book","metadata":{"name":"dune"},
		"spec":{"title":"Dune","author":"frank herbert","isbn":"9780441013593","year":1965,"genres":["sf","classic"]}}`
	if st, body := do(t, s, "POST", books, dune, false); st != http.StatusCreated {
		t.Fatalf("create = %d %v", st, body)
	}
	again := strings.ReplaceAll(dune, `"name":"dune"`, `"name":"dune-2"`)
	if st, body := do(t, s, "POST", books, again, false); st != http.StatusConflict {
		t.Errorf("second book with the same isbn = %d %v, want 409", st, body)
	}
	if st, body := do(t, s, "GET", books+"?fieldSelector=spec.genres%3Dclassic", "", false); st != http.StatusOK || body["total"] != 1.0 {
		t.Errorf("list by genre = %d %v", st, body)
	}
	st, body := do(t, s, "GET", "/apis/api.library.example.com/v1alpha1/books/dune/summary", "", true)
	if st != http.StatusOK || body["summary"] != "Dune by frank herbert" {
		t.Errorf("anonymous summary = %d %v", st, body)
	}
	if st, _ := do(t, s, "GET", books+"/dune", "", true); st == http.StatusOK {
		t.Error("anonymous may read books; only summaries are public")
	}
	servertest.Eventually(t, "dune shelved", func() (bool, string) {
		_, body := do(t, s, "GET", books+"/dune", "", false)
		status, _ := body["status"].(map[string]any)
		return status["shelf"] == "f", "status " + toJSON(status)
	})
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
