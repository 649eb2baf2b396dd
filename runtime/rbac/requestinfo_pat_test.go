package rbac

import "testing"

// TestRequestInfoUserCentreTokens: Halo's user-scoped token API parses as
// in Halo, so that its role template (personalaccesstokens with every
// verb, personalaccesstokens/actions with update) grants exactly it.
func TestRequestInfoUserCentreTokens(t *testing.T) {
	const base = "/apis/uc.api.security.halo.run/v1alpha1/personalaccesstokens"
	for _, tc := range []struct {
		method, path                                 string
		verb, resource, name, combined, resourceName string
	}{
		{"POST", base, VerbCreate, "personalaccesstokens", "", "personalaccesstokens", ""},
		{"GET", base, VerbList, "personalaccesstokens", "", "personalaccesstokens", ""},
		{"GET", base + "/pat-a", VerbGet, "personalaccesstokens", "pat-a", "personalaccesstokens", "pat-a"},
		{"DELETE", base + "/pat-a", VerbDelete, "personalaccesstokens", "pat-a", "personalaccesstokens", "pat-a"},
		{"PUT", base + "/pat-a/actions/revocation", VerbUpdate, "personalaccesstokens", "pat-a", "personalaccesstokens/actions", "pat-a/revocation"},
		{"PUT", base + "/pat-a/actions/restoration", VerbUpdate, "personalaccesstokens", "pat-a", "personalaccesstokens/actions", "pat-a/restoration"},
	} {
		info := ParseRequestInfo(tc.method, tc.path, nil, false)
		if !info.IsResourceRequest || info.APIGroup != "uc.api.security.halo.run" || info.Verb != tc.verb || info.Resource != tc.resource ||
			info.Name != tc.name || info.CombinedResource() != tc.combined || info.ResourceName() != tc.resourceName {
			t.Errorf("%s %s = %+v, want verb %s, resource %s, name %s, %s, %s", tc.method, tc.path, info, tc.verb, tc.resource, tc.name, tc.combined, tc.resourceName)
		}
	}
}
