package model

import "strings"

// InBrand reports whether domain is the brand's domain or one of its
// subdomains: the label and annotation prefixes and the API groups that
// SPEC.md reserves for the service.
func InBrand(domain, brand string) bool {
	return domain == brand || strings.HasSuffix(domain, "."+brand)
}

// ReservedGroup reports whether an API group belongs to the service: the
// empty group (served under /api) and the groups in the brand's domain.
func ReservedGroup(group, brand string) bool {
	return group == "" || InBrand(group, brand)
}
