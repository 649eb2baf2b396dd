package main_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"

	// The generated client imports oapi-codegen's runtime: importing it
	// here pins its version in svc's go.mod and go.sum and puts it in the
	// module cache, so the client's module builds offline.
	_ "github.com/oapi-codegen/runtime"
)

// operationID is the style of every operation id: lowerCamel, a verb
// first (docs/api.md, "The OpenAPI document").
var operationID = regexp.MustCompile(`^[a-z]+[A-Z][A-Za-z0-9]*$`)

// TestServedOpenAPI fetches /openapi.json from the example server (the
// example plugin and the content module started) under both brands, checks
// it with kin-openapi's validation and the operation-id rules, and builds
// the Go client oapi-codegen generates from it.
func TestServedOpenAPI(t *testing.T) {
	for _, brand := range []string{"svc.run", "halo.run"} {
		t.Run(brand, func(t *testing.T) {
			s := runArgs(t, t.TempDir(), []string{"--brand-domain", brand}, "SVC_ADMIN_PASSWORD="+adminPW)
			res, err := http.Get(s.url + "/openapi.json")
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != 200 {
				t.Fatalf("GET /openapi.json = %d, %v", res.StatusCode, err)
			}
			t.Run("valid", func(t *testing.T) { checkDocument(t, raw, brand) })
			t.Run("client", func(t *testing.T) { buildClient(t, raw) })
		})
	}
}

// load parses the served document afresh: codegen.Generate prunes and
// annotates the one it is given.
func load(t *testing.T, raw []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("the served document does not load: %v", err)
	}
	return doc
}

func checkDocument(t *testing.T, raw []byte, brand string) {
	doc := load(t, raw)
	if err := doc.Validate(t.Context()); err != nil {
		t.Errorf("kin-openapi finds the served document invalid: %v", err)
	}
	// Every part is there: a document that clashes is left out of the
	// served one rather than failing it.
	for _, p := range []string{
		"/api/v1alpha1/users",
		"/apis/api.console." + brand + "/v1alpha1/users",
		"/apis/api.console." + brand + "/v1alpha1/users/{name}/personalaccesstokens/{token}",
		"/apis/content." + brand + "/v1alpha1/posts",
		"/apis/uc.api.content." + brand + "/v1alpha1/posts",
		"/apis/people.example.com/v1alpha1/persons",
		"/apis/api.people.example.com/v1alpha1/persons/{name}/greeting",
		"/apis/plugin.api." + brand + "/v1alpha1/plugins/example/stats",
		"/healthz",
	} {
		if doc.Paths.Value(p) == nil {
			t.Errorf("the served document lacks %s", p)
		}
	}
	// metadata is described once, by the ObjectMeta component, and every
	// object refers to it.
	for name, s := range doc.Components.Schemas {
		if s.Value == nil || s.Value.Properties["kind"] == nil {
			continue
		}
		if md := s.Value.Properties["metadata"]; md != nil && md.Ref != "#/components/schemas/ObjectMeta" {
			t.Errorf("%s.metadata is described in place, not by the ObjectMeta component", name)
		}
	}
	// Ids are unique to a generator that folds case and drops punctuation,
	// and share one style.
	seen := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			id := op.OperationID
			if id == "" {
				continue
			}
			if !operationID.MatchString(id) {
				t.Errorf("%s %s: operation id %q is not a lowerCamel verb and noun", method, path, id)
			}
			key := strings.ToLower(id)
			if prev, ok := seen[key]; ok {
				t.Errorf("%s %s: operation id %q is %s's but for case", method, path, id, prev)
			}
			seen[key] = method + " " + path + " (" + id + ")"
		}
	}
}

func buildClient(t *testing.T, raw []byte) {
	src, err := codegen.Generate(load(t, raw), codegen.Configuration{
		PackageName: "client",
		Generate:    codegen.GenerateOptions{Client: true, Models: true},
	})
	if err != nil {
		t.Fatalf("oapi-codegen: %v", err)
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	version := goOut(t, root, nil, "list", "-m", "-f", "{{.Version}}", "github.com/oapi-codegen/runtime")
	gomod := "module svcclient\n\ngo 1.26\n\nrequire github.com/oapi-codegen/runtime " + version + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "client.gen.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// svc's go.sum vouches for the whole graph. The modules the client
	// compiles are in the cache since this test imports the runtime; the
	// go.mod files of some of their old requirements may not be, and come
	// through the configured proxy the first time.
	env := []string{"GOFLAGS=-mod=mod", "GOWORK=off"}
	goOut(t, dir, env, "vet", ".")
}

// moduleRoot is the directory of svc's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	return filepath.Dir(goOut(t, ".", nil, "env", "GOMOD"))
}

// goOut runs the go command in dir and returns its trimmed output,
// failing the test with the output when it fails.
func goOut(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}
