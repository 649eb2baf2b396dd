package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/svcrun/svc/runtime/store"
)

// warnUnknownAggregates logs each aggregate-to-<role> label of the
// plugin's roles naming a role that does not exist: the template's rules
// then reach nobody through it, which a misspelt role name hides.
func (m *Manager) warnUnknownAggregates(ctx context.Context, plugin string, docs []*Document) {
	own := map[string]bool{}
	for _, d := range docs {
		if isRole(d) {
			own[d.Name] = true
		}
	}
	prefix := "rbac.authorization." + m.opts.Brand + "/aggregate-to-"
	for _, d := range docs {
		if !isRole(d) || d.Skip != "" {
			continue
		}
		var obj struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if json.Unmarshal(d.JSON, &obj) != nil {
			continue
		}
		for k := range obj.Metadata.Labels {
			role, ok := strings.CutPrefix(k, prefix)
			if !ok || role == "" || own[role] {
				continue
			}
			if _, err := m.opts.Store.Get(ctx, d.Model, role); errors.Is(err, store.ErrNotFound) {
				m.log.Warn("role template aggregates to a role that does not exist; its rules reach nobody through it",
					"plugin", plugin, "template", d.Name, "label", k, "role", role)
			}
		}
	}
}

func isRole(d *Document) bool {
	return d.Model != nil && d.Model.Kind == "Role" && d.Model.Group == ""
}
