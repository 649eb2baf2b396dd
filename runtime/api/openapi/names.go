package openapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svcrun/svc/runtime/model"
)

// Names of the shared components. A model whose names would clash with one
// of them is qualified as if it clashed with another model.
const (
	schemaObjectMeta = "ObjectMeta"
	schemaProblem    = "Problem"
	schemaJSONPatch  = "JSONPatch"

	securityBasic  = "basicAuth"
	securityBearer = "bearerAuth"
)

// Operation ids of the core endpoints.
const (
	opHealthz = "getHealthz"
	opReadyz  = "getReadyz"
	opOpenAPI = "getOpenAPIDocument"
)

// Verbs of the generic operations, in the order the paths list them. An
// operation id is verb + the model's identifier (+ "Status" for the
// subresource).
var modelVerbs = []string{"list", "create", "deleteCollection", "get", "update", "patch", "delete", "updateStatus"}

// qualification levels of a model's identifier.
const (
	levelKind         = iota // Person
	levelGroup               // PersonPeopleExampleCom
	levelGroupVersion        // PersonPeopleExampleComV1
	maxLevel          = levelGroupVersion
)

// modelNames are the names one model contributes to the document.
type modelNames struct {
	ident  string // component schema of the object; the rest derive from it
	list   string // component schema of the list
	tag    string
	opIDs  map[string]string // verb -> operation id
	qualif int
}

// ident returns the identifier of m at a qualification level, in
// PascalCase so that the operation ids built on it stay lowerCamel. Names
// alike even at level 2 (Kind "Ab" in group "c.d" and Kind "AbC" in "d")
// are reported by assignNames rather than served.
func ident(m *model.Model, level int) string {
	g := "Core"
	if m.Group != "" {
		g = Pascal(m.Group)
	}
	switch level {
	case levelKind:
		return m.Kind
	case levelGroup:
		return m.Kind + g
	default:
		return m.Kind + g + Pascal(m.Version)
	}
}

// Pascal turns a group or plugin name into an identifier part:
// "people.example.com" into "PeopleExampleCom", "links-pro" into
// "LinksPro".
func Pascal(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '.' || r == '-' || r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

func namesAt(m *model.Model, level int) modelNames {
	id := ident(m, level)
	n := modelNames{ident: id, list: id + "List", tag: m.Kind, qualif: level, opIDs: map[string]string{}}
	if level > levelKind {
		n.tag = m.Kind + " (" + m.APIVersion() + ")"
	}
	for _, v := range modelVerbs {
		if v == "updateStatus" {
			n.opIDs[v] = "update" + id + "Status"
		} else {
			n.opIDs[v] = v + id
		}
	}
	return n
}

// all returns every name n contributes, sorted.
func (n modelNames) all() []string {
	out := []string{n.ident, n.list}
	for _, id := range n.opIDs {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// reservedNames are taken before any model is named.
var reservedNames = []string{
	schemaObjectMeta, schemaProblem, schemaJSONPatch,
	opHealthz, opReadyz, opOpenAPI,
}

// assignNames gives each model (sorted, distinct) the least qualified names
// that clash with nothing, compared as OperationIDKey compares (generators
// fold case): every model starts with its bare Kind, and the
// models involved in a clash move up one level until no clash is left. The
// result depends only on the set of models, so it is deterministic.
func assignNames(models []*model.Model) ([]modelNames, error) {
	levels := make([]int, len(models))
	for {
		names := make([]modelNames, len(models))
		owners := map[string][]int{}   // OperationIDKey -> models, -1 for reserved
		spelled := map[string]string{} // OperationIDKey -> a name, for the error
		for _, r := range reservedNames {
			owners[OperationIDKey(r)] = append(owners[OperationIDKey(r)], -1)
			spelled[OperationIDKey(r)] = r
		}
		for i, m := range models {
			names[i] = namesAt(m, levels[i])
			for _, s := range names[i].all() {
				owners[OperationIDKey(s)] = append(owners[OperationIDKey(s)], i)
				spelled[OperationIDKey(s)] = s
			}
		}
		bumped, stuck := false, ""
		keys := make([]string, 0, len(owners))
		for s := range owners {
			keys = append(keys, s)
		}
		slices.Sort(keys)
		for _, s := range keys {
			who := owners[s]
			if len(who) < 2 {
				continue
			}
			moved := false
			for _, i := range who {
				if i >= 0 && levels[i] < maxLevel {
					levels[i]++
					moved, bumped = true, true
				}
			}
			if !moved && stuck == "" {
				stuck = s
			}
			if bumped {
				break // recompute from the new levels before judging more clashes
			}
		}
		if bumped {
			continue
		}
		if stuck != "" {
			var who []string
			for _, i := range owners[stuck] {
				if i < 0 {
					who = append(who, "a shared component")
				} else {
					who = append(who, models[i].GVK().String())
				}
			}
			return nil, fmt.Errorf("openapi: the name %q is claimed by %s even when fully qualified", spelled[stuck], strings.Join(who, " and "))
		}
		return names, nil
	}
}
