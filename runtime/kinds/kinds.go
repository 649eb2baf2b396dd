// Package kinds serves the kinds that plugins' extension files ship
// besides roles (schemas/kinds.yaml): Halo's settings, config maps,
// reverse proxies, extension point and extension definitions, auth
// providers, notification reason types and templates, storage policy
// templates and groups. A real plugin's files hold them next to its role
// templates (13 of the 16 plugins in the corpus do), so without them such
// a plugin could not start (docs/operations.md: Halo's files load unmodified;
// §7: an unknown kind fails the start).
//
// The service stores and serves them like any model, super-admin only
// unless a role grants them, and gives them no behaviour: their content is
// free-form, its meaning the plugin's.
package kinds

import (
	gen "github.com/svcrun/svc/generated/kinds"
	"github.com/svcrun/svc/runtime/model"
)

// Models returns the shared kinds' models, their groups under brand (the
// schemas name svc.run).
func Models(brand string) ([]*model.Model, error) {
	ms := []*model.Model{
		gen.SettingModel(), gen.ConfigMapModel(),
		gen.ReverseProxyModel(), gen.ExtensionPointDefinitionModel(), gen.ExtensionDefinitionModel(),
		gen.AuthProviderModel(),
		gen.ReasonTypeModel(), gen.NotificationTemplateModel(),
		gen.PolicyTemplateModel(), gen.GroupModel(),
	}
	for _, m := range ms {
		if err := m.Rebrand(brand); err != nil {
			return nil, err
		}
	}
	return ms, nil
}
