package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// patCall is one request of the token tests: Basic as user, or Bearer.
type patCall struct {
	method, path, body string
	user, pw, bearer   string
}

// call returns the status and the raw body.
func (s *server) call(c patCall) (int, []byte) {
	s.t.Helper()
	hr, err := http.NewRequest(c.method, s.url+c.path, strings.NewReader(c.body))
	if err != nil {
		s.t.Fatal(err)
	}
	if c.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if c.user != "" {
		hr.SetBasicAuth(c.user, c.pw)
	}
	if c.bearer != "" {
		hr.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// patObject is what the tests read of a PersonalAccessToken.
type patObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Name      string   `json:"name"`
		Username  string   `json:"username"`
		TokenID   string   `json:"tokenId"`
		Roles     []string `json:"roles"`
		Revoked   bool     `json:"revoked"`
		RevokesAt string   `json:"revokesAt"`
	} `json:"spec"`
}

func decodePAT(t *testing.T, b []byte) patObject {
	t.Helper()
	var p patObject
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("not a token: %v: %s", err, b)
	}
	return p
}

// TestHaloPersonalAccessTokens drives Halo's user-scoped token API under
// --brand-domain halo.run with the requests Halo's console and api-client
// send: generate, use, list, get, revoke, restore, delete, expire.
func TestHaloPersonalAccessTokens(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW, "SVC_BRAND_DOMAIN=halo.run")
	const (
		uc      = "/apis/uc.api.security.halo.run/v1alpha1/personalaccesstokens"
		console = "/apis/api.console.halo.run/v1alpha1"
		annot   = "security.halo.run/access-token"
	)
	adm := func(c patCall) patCall { c.user, c.pw = "admin", adminPW; return c }
	pia := func(c patCall) patCall { c.user, c.pw = "pia", "pia-password"; return c }
	if st, b := s.call(adm(patCall{method: "POST", path: console + "/users", body: `{"name":"pia","email":"pia@example.com","displayName":"Pia","password":"pia-password","roles":["example-role-manage-persons"]}`})); st != 201 {
		t.Fatalf("create pia = %d %s", st, b)
	}
	s.eventually(req{method: "GET", path: persons, user: "pia", pw: "pia-password"}, 200)

	// What Halo's console posts (PersonalAccessTokenCreationModal.vue):
	// empty strings for what it leaves out, generateName "pat-".
	halo := `{"kind":"PersonalAccessToken","apiVersion":"security.halo.run/v1alpha1","metadata":{"generateName":"pat-","name":""},` +
		`"spec":{"description":"","expiresAt":"","name":"ci","roles":["example-role-view-persons"],"tokenId":"","username":""}}`
	st, b := s.call(pia(patCall{method: "POST", path: uc, body: halo}))
	if st != 200 {
		t.Fatalf("generate = %d %s", st, b)
	}
	p := decodePAT(t, b)
	token := p.Metadata.Annotations[annot]
	if !strings.HasPrefix(token, "pat_") || p.APIVersion != "security.halo.run/v1alpha1" || p.Kind != "PersonalAccessToken" ||
		!strings.HasPrefix(p.Metadata.Name, "pat-") || p.Spec.Name != "ci" || p.Spec.Username != "pia" || p.Spec.TokenID == "" {
		t.Fatalf("generated = %s", b)
	}
	name := p.Metadata.Name
	bearer := func(method, path string) patCall { return patCall{method: method, path: path, bearer: token} }
	if st, _ := s.call(bearer("GET", persons)); st != 200 {
		t.Errorf("the token lists persons = %d, want 200", st)
	}
	if st, _ := s.call(patCall{method: "POST", path: persons, bearer: token, body: person("tok", "Tok", "")}); st != 403 {
		t.Errorf("the view-only token creates a person = %d, want 403", st)
	}

	// List (a plain array) and get; the token is never shown again.
	st, b = s.call(pia(patCall{method: "GET", path: uc}))
	var list []patObject
	if err := json.Unmarshal(b, &list); st != 200 || err != nil || len(list) != 1 || list[0].Metadata.Name != name || list[0].Metadata.Annotations[annot] != "" {
		t.Fatalf("list = %d %s", st, b)
	}
	if st, b := s.call(pia(patCall{method: "GET", path: uc + "/" + name})); st != 200 || strings.Contains(string(b), token) {
		t.Errorf("get = %d %s", st, b)
	}
	if st, _ := s.call(adm(patCall{method: "GET", path: uc + "/" + name})); st != 404 {
		t.Errorf("another user gets pia's token = %d, want 404", st)
	}
	if st, _ := s.call(patCall{method: "GET", path: uc}); st != 401 {
		t.Errorf("anonymous list = %d, want 401", st)
	}
	// Halo's generic API holds it too.
	if st, b := s.call(adm(patCall{method: "GET", path: "/apis/security.halo.run/v1alpha1/personalaccesstokens/" + name})); st != 200 || strings.Contains(string(b), token) {
		t.Errorf("generic get = %d %s", st, b)
	}

	// Revoke: refused; again: 400; restore: works again.
	st, b = s.call(pia(patCall{method: "PUT", path: uc + "/" + name + "/actions/revocation"}))
	if p := decodePAT(t, b); st != 200 || !p.Spec.Revoked || p.Spec.RevokesAt == "" {
		t.Fatalf("revoke = %d %s", st, b)
	}
	if st, _ := s.call(bearer("GET", persons)); st != 401 {
		t.Errorf("the revoked token = %d, want 401", st)
	}
	if st, _ := s.call(pia(patCall{method: "PUT", path: uc + "/" + name + "/actions/revocation"})); st != 400 {
		t.Errorf("revoke twice = %d, want 400", st)
	}
	st, b = s.call(pia(patCall{method: "PUT", path: uc + "/" + name + "/actions/restoration"}))
	if p := decodePAT(t, b); st != 200 || p.Spec.Revoked || p.Spec.RevokesAt != "" {
		t.Fatalf("restore = %d %s", st, b)
	}
	if st, _ := s.call(bearer("GET", persons)); st != 200 {
		t.Errorf("the restored token = %d, want 200", st)
	}
	if st, _ := s.call(pia(patCall{method: "PUT", path: uc + "/" + name + "/actions/restoration"})); st != 400 {
		t.Errorf("restore a live token = %d, want 400", st)
	}

	// Delete: gone, refused.
	if st, b := s.call(pia(patCall{method: "DELETE", path: uc + "/" + name})); st != 200 {
		t.Fatalf("delete = %d %s", st, b)
	}
	if st, _ := s.call(bearer("GET", persons)); st != 401 {
		t.Errorf("the deleted token = %d, want 401", st)
	}
	if st, _ := s.call(pia(patCall{method: "GET", path: uc + "/" + name})); st != 404 {
		t.Errorf("get the deleted token = %d, want 404", st)
	}

	// Expiry: a past date is refused; a token past its date is refused.
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	if st, _ := s.call(pia(patCall{method: "POST", path: uc, body: `{"spec":{"name":"old","expiresAt":"` + past + `"}}`})); st != 400 {
		t.Errorf("generate with a past expiresAt = %d, want 400", st)
	}
	soon := time.Now().Add(2 * time.Second)
	st, b = s.call(pia(patCall{method: "POST", path: uc, body: `{"spec":{"name":"brief","roles":["example-role-view-persons"],"expiresAt":"` + soon.UTC().Format(time.RFC3339Nano) + `"}}`}))
	if st != 200 {
		t.Fatalf("generate brief = %d %s", st, b)
	}
	brief := decodePAT(t, b).Metadata.Annotations[annot]
	if st, _ := s.call(patCall{method: "GET", path: persons, bearer: brief}); st != 200 {
		t.Errorf("the brief token before expiry = %d, want 200", st)
	}
	time.Sleep(time.Until(soon) + 100*time.Millisecond)
	if st, _ := s.call(patCall{method: "GET", path: persons, bearer: brief}); st != 401 {
		t.Errorf("the expired token = %d, want 401", st)
	}
}

// TestConsoleTokensUnderHaloBrand: svc's own console token API still
// works (create, use, revoke, restore, delete), and its tokens are the
// same objects Halo's API lists.
func TestConsoleTokensUnderHaloBrand(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW, "SVC_BRAND_DOMAIN=halo.run")
	const (
		console = "/apis/api.console.halo.run/v1alpha1"
		tokens  = console + "/users/-/personalaccesstokens"
	)
	adm := func(c patCall) patCall { c.user, c.pw = "admin", adminPW; return c }
	rex := func(c patCall) patCall { c.user, c.pw = "rex", "rex-password"; return c }
	if st, b := s.call(adm(patCall{method: "POST", path: console + "/users", body: `{"name":"rex","password":"rex-password","roles":["example-role-manage-persons"]}`})); st != 201 {
		t.Fatalf("create rex = %d %s", st, b)
	}
	s.eventually(req{method: "GET", path: persons, user: "rex", pw: "rex-password"}, 200)
	st, b := s.call(rex(patCall{method: "POST", path: tokens, body: `{"metadata":{"name":"rex-view"},"spec":{"displayName":"View","roles":["example-role-view-persons"]}}`}))
	if st != 201 {
		t.Fatalf("console create = %d %s", st, b)
	}
	p := decodePAT(t, b)
	token := p.Metadata.Annotations["security.halo.run/access-token"]
	if !strings.HasPrefix(token, "pat_") || p.Spec.Name != "View" || p.APIVersion != "security.halo.run/v1alpha1" {
		t.Fatalf("console create = %s", b)
	}
	use := patCall{method: "GET", path: persons, bearer: token}
	if st, _ := s.call(use); st != 200 {
		t.Errorf("console token = %d, want 200", st)
	}
	if st, b := s.call(rex(patCall{method: "GET", path: "/apis/uc.api.security.halo.run/v1alpha1/personalaccesstokens/rex-view"})); st != 200 {
		t.Errorf("Halo's API gets the console's token = %d %s", st, b)
	}
	for _, step := range []struct {
		method, path string
		then         int
	}{
		{"PUT", tokens + "/rex-view/revocation", 401},
		{"PUT", tokens + "/rex-view/restoration", 200},
		{"DELETE", tokens + "/rex-view", 401},
	} {
		if st, b := s.call(rex(patCall{method: step.method, path: step.path})); st != 200 {
			t.Fatalf("%s %s = %d %s", step.method, step.path, st, b)
		}
		if st, _ := s.call(use); st != step.then {
			t.Errorf("after %s %s the token = %d, want %d", step.method, step.path, st, step.then)
		}
	}
}

// TestHaloTokenAPIDocumented: /openapi.json under halo.run describes
// Halo's token API at its branded paths, and still loads.
func TestHaloTokenAPIDocumented(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW, "SVC_BRAND_DOMAIN=halo.run")
	st, raw := s.call(patCall{method: "GET", path: "/openapi.json"})
	if st != 200 {
		t.Fatalf("/openapi.json = %d", st)
	}
	loader := openapi3.NewLoader()
	if parsed, err := loader.LoadFromData(raw); err != nil {
		t.Fatalf("/openapi.json does not load: %v", err)
	} else if err := parsed.Validate(loader.Context); err != nil {
		t.Errorf("/openapi.json is not a valid OpenAPI 3 document: %v", err)
	}
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	const uc = "/apis/uc.api.security.halo.run/v1alpha1/personalaccesstokens"
	for _, p := range []string{uc, uc + "/{name}", uc + "/{name}/actions/revocation", uc + "/{name}/actions/restoration",
		"/apis/api.console.halo.run/v1alpha1/users/{name}/personalaccesstokens/{token}/restoration",
		"/apis/security.halo.run/v1alpha1/personalaccesstokens"} {
		if _, ok := doc.Paths[p]; !ok {
			t.Errorf("/openapi.json lacks %s", p)
		}
	}
}
