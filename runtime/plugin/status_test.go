package plugin_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/plugin"
)

// TestPluginStatusIsTheServers: clients write a Plugin object's spec only.
// A Plugin for a plugin the binary does not include is a 400 naming the
// ones it does; a client's status is ignored in creates, updates and
// patches; the status subresource is refused; and a stored object of a
// plugin no longer in the binary says so in a server-written status
// (TestPluginNotInTheBinary).
func TestPluginStatusIsTheServers(t *testing.T) {
	e := start(t, "", "svc.run", peoplePlugin(), &testPlugin{name: "other"})
	e.waitPhase("people", plugin.Started)
	e.waitPhase("other", plugin.Started)

	ghost := `{"apiVersion":"v1alpha1","kind":"Plugin","metadata":{"name":"ghost"},"spec":{"enabled":true},"status":{"phase":"STARTED"}}`
	st, body := e.do("POST", "/api/v1alpha1/plugins", ghost, false)
	if st != 400 || !strings.Contains(fmt.Sprint(body), "other, people") {
		t.Fatalf("create a Plugin the binary lacks = %d %v, want 400 naming other, people", st, body)
	}
	if st := e.status("GET", "/api/v1alpha1/plugins/ghost", "", false); st != 404 {
		t.Fatalf("GET the refused Plugin = %d, want 404", st)
	}

	// Stopped, and a client says STARTED: the phase stays the server's.
	if st := e.status("PATCH", "/api/v1alpha1/plugins/people", `{"spec":{"enabled":false}}`, false); st != 200 {
		t.Fatalf("disable = %d", st)
	}
	e.waitPhase("people", plugin.Stopped)
	phase := func() any {
		_, body := e.do("GET", "/api/v1alpha1/plugins/people", "", false)
		s, _ := body["status"].(map[string]any)
		return s["phase"]
	}
	if st, body := e.do("PATCH", "/api/v1alpha1/plugins/people", `{"status":{"phase":"STARTED"}}`, false); st != 200 || body["status"].(map[string]any)["phase"] != plugin.Stopped {
		t.Fatalf("patch of the status = %d %v, want 200 with the status unchanged", st, body)
	}
	_, cur := e.do("GET", "/api/v1alpha1/plugins/people", "", false)
	version := cur["metadata"].(map[string]any)["version"]
	put := fmt.Sprintf(`{"apiVersion":"v1alpha1","kind":"Plugin","metadata":{"name":"people","version":%v},"spec":{"enabled":false},"status":{"phase":"STARTED"}}`, version)
	if st, body := e.do("PUT", "/api/v1alpha1/plugins/people", put, false); st != 200 || body["status"].(map[string]any)["phase"] != plugin.Stopped {
		t.Fatalf("update with a status = %d %v, want 200 with the status unchanged", st, body)
	}
	if st, body := e.do("PUT", "/api/v1alpha1/plugins/people/status", put, false); st != 403 || !strings.Contains(fmt.Sprint(body["detail"]), "server only") {
		t.Fatalf("write of the status subresource = %d %v, want 403", st, body)
	}
	time.Sleep(50 * time.Millisecond) // a wrong phase would be visible by now
	if p := phase(); p != plugin.Stopped {
		t.Fatalf("phase after the attempts = %v, want %s", p, plugin.Stopped)
	}

	// Created again by a client, with a status: the server writes it.
	if st := e.status("DELETE", "/api/v1alpha1/plugins/people", "", false); st != 200 {
		t.Fatalf("delete = %d", st)
	}
	create := `{"apiVersion":"v1alpha1","kind":"Plugin","metadata":{"name":"people"},"spec":{"enabled":true},"status":{"phase":"FAILED","message":"from a client"}}`
	if st, body := e.do("POST", "/api/v1alpha1/plugins", create, false); st != 201 || body["status"] != nil {
		t.Fatalf("create with a status = %d %v, want 201 without it", st, body)
	}
	e.waitPhase("people", plugin.Started)

}

// TestPluginNotInTheBinary: the Plugin object of a plugin an earlier
// binary included, STARTED then, gets a server-written FAILED status
// saying this binary lacks it.
func TestPluginNotInTheBinary(t *testing.T) {
	dir := t.TempDir()
	e := start(t, dir, "svc.run", peoplePlugin(), &testPlugin{name: "other"})
	e.waitPhase("other", plugin.Started)
	e.srv.Shutdown(5 * time.Second)
	e2 := start(t, dir, "svc.run", peoplePlugin())
	e2.waitPhase("people", plugin.Started)
	if msg := e2.waitPhase("other", plugin.Failed); !strings.Contains(msg, "not in this binary") {
		t.Fatalf("status message of a plugin not in the binary = %q", msg)
	}
}
