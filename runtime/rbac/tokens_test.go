package rbac

import (
	"slices"
	"testing"
)

// TestTokenRolesEffectiveSet: a token may be limited to any role in its
// owner's effective set, reached through a dependency or an aggregation
// too, and holds no role outside it.
func TestTokenRolesEffectiveSet(t *testing.T) {
	r := NewResolver(testBrand)
	r.PutRole(role("manage", []string{"view"}, nil, getRule("g", "edits")))
	r.PutRole(role("view", nil, nil, getRule("g", "views")))
	r.PutRole(role("extra", nil, []string{"manage"}, getRule("g", "extras")))
	r.PutRole(role("other", nil, nil, getRule("g", "others")))
	r.PutBinding(Binding{Name: "u-manage", RoleRef: "manage", Users: []string{"u"}})
	views, edits, extras, others := mustParse("GET", "/apis/g/v1/views/x"), mustParse("GET", "/apis/g/v1/edits/x"), mustParse("GET", "/apis/g/v1/extras/x"), mustParse("GET", "/apis/g/v1/others/x")
	cases := []struct {
		name  string
		roles []string
		info  *RequestInfo
		want  bool
	}{
		{"dependency role", []string{"view"}, views, true},
		{"dependency role holds no more", []string{"view"}, edits, false},
		{"aggregated role", []string{"extra"}, extras, true},
		{"aggregated role holds no more", []string{"extra"}, views, false},
		{"bound role brings its closure", []string{"manage"}, extras, true},
		{"role outside the set", []string{"view", "other"}, others, false},
	}
	for _, tc := range cases {
		if got := r.AuthorizeRoles("u", tc.roles, tc.info); got != tc.want {
			t.Errorf("%s: AuthorizeRoles(u, %v, %s) = %v, want %v", tc.name, tc.roles, tc.info.Path, got, tc.want)
		}
	}
	// (anonymous and authenticated are not stored here, so not listed.)
	if got, want := r.TokenRoles("u", []string{"view", "other"}), []string{"view"}; !slices.Equal(got, want) {
		t.Errorf("TokenRoles(u, [view other]) = %v, want %v", got, want)
	}
	if got, want := r.TokenRoles("u", []string{"manage"}), r.EffectiveRoles("u"); !slices.Equal(got, want) {
		t.Errorf("TokenRoles(u, [manage]) = %v, want the owner's %v", got, want)
	}
	// The owner loses manage, and with it view: so does the token.
	r.DeleteBinding("u-manage")
	if r.AuthorizeRoles("u", []string{"view"}, views) {
		t.Error("a token still holds view after its owner lost it")
	}
}
