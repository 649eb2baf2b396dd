package rbac

import (
	"fmt"
	"testing"
)

// TestReached: a role's write reaches the roles it aggregates into and
// those depending on it, transitively, known or not, and not through
// roles being deleted.
func TestReached(t *testing.T) {
	const agg = "rbac.authorization.svc.run/aggregate-to-"
	const deps = "rbac.authorization.svc.run/dependencies"
	r := NewResolver("svc.run")
	r.PutRole(Role{Name: "a", Labels: map[string]string{agg + "x": "true"}})
	r.PutRole(Role{Name: "x", Annotations: map[string]string{deps: `["unrelated"]`}})
	r.PutRole(Role{Name: "y", Annotations: map[string]string{deps: `["x"]`}})
	r.PutRole(Role{Name: "z", Labels: map[string]string{agg + "y": "TRUE"}})
	r.PutRole(Role{Name: "dying", Deleting: true, Annotations: map[string]string{deps: `["b"]`}, Labels: map[string]string{agg + "w": "true"}})
	r.PutRole(Role{Name: "after-dying", Annotations: map[string]string{deps: `["dying"]`}})
	for _, tc := range []struct {
		role Role
		want string
	}{
		{Role{Name: "a"}, "[]"}, // the label dropped: what a reached before is not reached now
		{Role{Name: "a", Labels: map[string]string{agg + "x": "true"}}, "[x y]"},
		{Role{Name: "new", Labels: map[string]string{agg + "anonymous": "true"}}, "[anonymous]"},
		{Role{Name: "new", Labels: map[string]string{agg + "a": "true", agg + "ghost": "false"}}, "[a x y]"},
		{Role{Name: "unrelated"}, "[x y]"},
		{Role{Name: "z", Labels: map[string]string{agg + "y": "true"}}, "[y]"},
		{Role{Name: "b"}, "[]"}, // only a role being deleted depends on it
		{Role{Name: "loop", Labels: map[string]string{agg + "loop": "true"}}, "[]"},
		{Role{Name: "c", Annotations: map[string]string{deps: `["c"]`}, Labels: map[string]string{agg + "y": "true"}}, "[y]"},
	} {
		if got := fmt.Sprint(r.Reached(tc.role)); got != tc.want {
			t.Errorf("Reached(%s %v %v) = %s, want %s", tc.role.Name, tc.role.Labels, tc.role.Annotations, got, tc.want)
		}
	}
}
