package authn

import (
	"strings"
	"testing"

	"github.com/svcrun/svc/generated/core"
)

// TestTokenPrefixes: new tokens start with Halo's pat_, and tokens made
// by earlier versions of svc (svc_pat_) keep working.
func TestTokenPrefixes(t *testing.T) {
	e := newEnv(t, Options{})
	e.user("alice", "pw", nil)
	fresh := e.token("alice-fresh", "alice", nil)
	if !strings.HasPrefix(fresh, "pat_") {
		t.Fatalf("new token %q lacks the prefix pat_", fresh[:4])
	}
	e.ok(bearer(fresh), "alice")

	legacy := LegacyTokenPrefix + strings.Repeat("A", 43)
	old := core.NewPersonalAccessToken("alice-legacy")
	old.Spec.Username, old.Spec.TokenHash = "alice", HashToken(legacy)
	if _, err := e.tokens.Create(e.ctx, old); err != nil {
		t.Fatal(err)
	}
	e.ok(bearer(legacy), "alice")

	for _, bad := range []string{"pat_", "svc_pat_", "xpat_" + strings.Repeat("A", 43), "pat_" + strings.Repeat("A", maxBearerLen)} {
		t.Run(bad[:min(len(bad), 10)], func(t *testing.T) { e.denied(bearer(bad)) })
	}
}
