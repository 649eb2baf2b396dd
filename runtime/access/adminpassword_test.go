package access_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/svcrun/svc/runtime/access"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// SVC_ADMIN_PASSWORD only seeds an empty store. Set on a store that has
// users, it is not applied, and the log says so and how to change one.
func TestAdminPasswordOnAStoreWithUsersIsReported(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	st := storetest.Open(t, store.Options{Dir: dir})
	var out, first, second bytes.Buffer
	_, stop := start(t, ctx, st, access.Options{Brand: "svc.run", AdminPassword: "one", Out: &out, Logger: slog.New(slog.NewTextHandler(&first, nil))})
	if strings.Contains(first.String(), "SVC_ADMIN_PASSWORD") {
		t.Errorf("first start (admin created) warned: %s", first.String())
	}
	stop()
	cancel()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	st = storetest.Open(t, store.Options{Dir: dir})
	start(t, ctx, st, access.Options{Brand: "svc.run", AdminPassword: "two", Out: &out, Logger: slog.New(slog.NewTextHandler(&second, nil))})
	log := second.String()
	for _, want := range []string{"level=WARN", "SVC_ADMIN_PASSWORD is set but the store already has users", "/users/{name}/password", "admin reset"} {
		if !strings.Contains(log, want) {
			t.Errorf("second start's log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "=two") {
		t.Errorf("the log shows the password: %s", log)
	}
}
