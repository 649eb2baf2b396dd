package server_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/plugin"
	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/server/servertest"
)

// TestAdminReset: `admin reset` refuses beside a running server, then
// gives a forgotten administrator a new password and super-role.
func TestAdminReset(t *testing.T) {
	if os.Getenv(servertest.EtcdEnv) != "" {
		t.Skip("disk backend only: admin reset refuses a data directory a server holds")
	}
	dir := t.TempDir()
	s := servertest.Start(t, servertest.Options{Dir: dir, AdminPassword: "forgotten-password", Plugins: []plugin.Plugin{}})
	ctx := context.Background()
	var out, errOut bytes.Buffer
	t.Setenv("SVC_ADMIN_PASSWORD", "recovered-password")
	if err := server.Admin(ctx, []string{"reset", "--data-dir", dir}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "stop it first") {
		t.Fatalf("reset beside a running server = %v, want a refusal", err)
	}
	if err := s.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := server.Admin(ctx, []string{"reset", "--data-dir", dir + "/nope"}, &out, &errOut); err == nil {
		t.Fatal("reset of a directory that does not exist succeeded")
	}
	if err := server.Admin(ctx, []string{"status"}, &out, &errOut); err == nil {
		t.Fatal("an unknown admin subcommand succeeded")
	}
	out.Reset()
	if err := server.Admin(ctx, []string{"reset", "--data-dir", dir}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "recovered-password") {
		t.Errorf("the chosen password was printed: %q", out.String())
	}
	s = servertest.Start(t, servertest.Options{Dir: dir, Plugins: []plugin.Plugin{}})
	for pw, want := range map[string]int{"recovered-password": 200, "forgotten-password": 401} {
		req, _ := http.NewRequest("GET", s.URL+"/api/v1alpha1/users", nil)
		req.SetBasicAuth("admin", pw)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("list users with the %s = %d, want %d", pw, res.StatusCode, want)
		}
	}
}
