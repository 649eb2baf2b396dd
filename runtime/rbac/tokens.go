package rbac

import "slices"

// TokenRoles returns the sorted names of the roles in effect for a
// personal access token of user limited to roles: anonymous,
// authenticated, and those of roles that are in user's effective set now,
// with their dependencies and aggregates. A token may thus be limited to
// a role its owner holds only through a dependency or aggregation (least
// privilege), and loses a role as soon as its owner does.
func (r *Resolver) TokenRoles(user string, roles []string) []string {
	c, ok := r.compiledLimited(user, roles)
	if !ok {
		c = r.cacheLimited(user, roles)
	}
	return slices.Clone(c.effective)
}

// intersectHeld appends to dst the distinct names of roles found in held
// (sorted), sorted. It allocates nothing when dst has room.
func intersectHeld(dst, roles, held []string) []string {
	for _, n := range roles {
		if _, ok := slices.BinarySearch(held, n); ok && !slices.Contains(dst, n) {
			dst = append(dst, n)
		}
	}
	slices.Sort(dst)
	return dst
}

// holdsAll reports whether names (distinct) include every bound role; a
// token holding those has exactly its owner's set, since the rest of names
// lie in that set's closure.
func holdsAll(names []string, bound map[string]int) bool {
	n := 0
	for _, name := range names {
		if _, ok := bound[name]; ok {
			n++
		}
	}
	return n == len(bound)
}
