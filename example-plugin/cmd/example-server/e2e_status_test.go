package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStatusOnlyThroughStatusSubresource (issue #26): status is written
// through persons/status only. A user granted update and patch on persons
// but not persons/status changes the spec and never the status, by PUT,
// merge patch or JSON patch, and is refused PUT .../status; a user granted
// persons/status changes the status there and not the spec.
func TestStatusOnlyThroughStatusSubresource(t *testing.T) {
	s := run(t, t.TempDir(), "SVC_ADMIN_PASSWORD="+adminPW)
	roles := map[string]string{
		"person-editor": `[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get","list","update","patch"]}]`,
		"person-status": `[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get"]},
			{"apiGroups":["people.example.com"],"resources":["persons/status"],"verbs":["update"]}]`,
	}
	for name, rules := range roles {
		role := `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"` + name + `"},"rules":` + rules + `}`
		if st, body := s.do(admin(req{method: "POST", path: "/api/v1alpha1/roles", body: role})); st != 201 {
			t.Fatalf("create role %s = %d %v", name, st, body)
		}
	}
	for user, role := range map[string]string{"eve": "person-editor", "sam": "person-status"} {
		u := `{"name":"` + user + `","displayName":"` + user + `","password":"` + user + `-secret-1","roles":["` + role + `"]}`
		if st, body := s.do(admin(req{method: "POST", path: console + "/users", body: u})); st != 201 {
			t.Fatalf("create user %s = %d %v", user, st, body)
		}
	}
	as := func(user string) func(req) req {
		return func(r req) req { r.user, r.pw = user, user+"-secret-1"; return r }
	}
	eve, sam := as("eve"), as("sam")
	for _, p := range []string{person("ann", "Ann", ""), person("bea", "Bea", "ann")} {
		if st, body := s.do(admin(req{method: "POST", path: persons, body: p})); st != 201 {
			t.Fatalf("create %s = %d %v", p, st, body)
		}
	}
	s.eventuallyFriendCount("ann", 1) // the controller's count
	s.eventually(eve(req{method: "GET", path: persons + "/ann"}), 200)
	s.eventually(sam(req{method: "GET", path: persons + "/ann"}), 200)

	// current returns ann as stored, and ann with the given spec.name and
	// status.friendCount as a PUT body.
	current := func(name string, count float64) (map[string]any, string) {
		t.Helper()
		st, obj := s.do(admin(req{method: "GET", path: persons + "/ann"}))
		if st != 200 {
			t.Fatalf("get ann = %d %v", st, obj)
		}
		var next map[string]any
		b, _ := json.Marshal(obj)
		_ = json.Unmarshal(b, &next)
		next["spec"].(map[string]any)["name"] = name
		next["status"] = map[string]any{"friendCount": count}
		body, _ := json.Marshal(next)
		return obj, string(body)
	}
	check := func(what string, st int, obj map[string]any, name string, count float64) {
		t.Helper()
		if st != 200 {
			t.Fatalf("%s = %d %v, want 200", what, st, obj)
		}
		spec, _ := obj["spec"].(map[string]any)
		status, _ := obj["status"].(map[string]any)
		if spec["name"] != name || status["friendCount"] != count {
			t.Errorf("%s: spec.name %v, status %v; want %q and friendCount %v", what, spec["name"], status, name, count)
		}
	}

	// eve: the spec changes, the status stays the controller's.
	_, body := current("Ann 1", 99)
	st, obj := s.do(eve(req{method: "PUT", path: persons + "/ann", body: body}))
	check("eve PUT", st, obj, "Ann 1", 1)
	st, obj = s.do(eve(req{method: "PATCH", path: persons + "/ann", ct: "application/merge-patch+json",
		body: `{"spec":{"name":"Ann 2"},"status":{"friendCount":99}}`}))
	check("eve merge PATCH", st, obj, "Ann 2", 1)
	st, obj = s.do(eve(req{method: "PATCH", path: persons + "/ann", ct: "application/json-patch+json",
		body: `[{"op":"replace","path":"/spec/name","value":"Ann 3"},{"op":"replace","path":"/status/friendCount","value":99}]`}))
	check("eve JSON PATCH", st, obj, "Ann 3", 1)
	st, obj = s.do(eve(req{method: "PATCH", path: persons + "/ann", ct: "application/json-patch+json",
		body: `[{"op":"remove","path":"/status"}]`}))
	check("eve JSON PATCH removing the status", st, obj, "Ann 3", 1)
	_, body = current("Ann 3", 99)
	if st, obj := s.do(eve(req{method: "PUT", path: persons + "/ann/status", body: body})); st != 403 {
		t.Errorf("eve PUT status = %d %v, want 403", st, obj)
	}
	st, obj = s.do(admin(req{method: "GET", path: persons + "/ann"}))
	check("GET after eve's writes", st, obj, "Ann 3", 1)

	// sam: the status changes, the spec, labels and annotations stay.
	_, body = current("Mallory", 42)
	body = strings.Replace(body, `"metadata":{`, `"metadata":{"labels":{"team":"sam"},"annotations":{"by":"sam"},`, 1)
	st, obj = s.do(sam(req{method: "PUT", path: persons + "/ann/status", body: body}))
	check("sam PUT status", st, obj, "Ann 3", 42)
	if md := obj["metadata"].(map[string]any); md["labels"] != nil || md["annotations"] != nil {
		t.Errorf("sam's status write changed metadata: %v", md)
	}
	for _, r := range []req{
		{method: "PUT", path: persons + "/ann", body: body},
		{method: "PATCH", path: persons + "/ann", ct: "application/merge-patch+json", body: `{"status":{"friendCount":7}}`},
	} {
		if st, obj := s.do(sam(r)); st != 403 {
			t.Errorf("sam %s ann = %d %v, want 403", r.method, st, obj)
		}
	}
	// The count is the controller's, and it takes it back.
	s.eventuallyFriendCount("ann", 1)
}
