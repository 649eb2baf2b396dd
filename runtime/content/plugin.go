package content

import (
	"context"
	"fmt"

	gen "github.com/svcrun/svc/generated/content"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/plugin"
)

// Name is the module's plugin name (its Plugin object is
// /api/v1alpha1/plugins/content).
const Name = "content"

// Version is the API version of the Post model and of the user-centre API.
const Version = "v1alpha1"

func init() { plugin.Register(Plugin{}) }

// Plugin is the content module. init registers it; tests and custom
// binaries can also hand it to the server directly.
type Plugin struct{}

// Core implements plugin.Core: the Post model lives in content.<brand>.
func (Plugin) Core() {}

// Name implements plugin.Plugin.
func (Plugin) Name() string { return Name }

// Start implements plugin.Plugin: the Post model in content.<brand> with
// the default CRUD routes, and the user-centre routes.
func (Plugin) Start(_ context.Context, h *plugin.Host) error {
	m, err := PostModel(h.Brand())
	if err != nil {
		return err
	}
	// Default routes: the generated RegisterPostRoutes hard-codes the
	// svc.run base path, the default ones follow the model's group.
	h.Model(m, nil)
	u := newUserCentre(h, m)
	h.Routes(UserCentreGroup(h.Brand())+"/"+Version, u.routes)
	return nil
}

// Group is the Post model's group under brand.
func Group(brand string) string { return "content." + brand }

// UserCentreGroup is the group of the user-centre API under brand.
func UserCentreGroup(brand string) string { return "uc.api.content." + brand }

// PostModel returns the generated Post model moved to content.<brand>.
// Objects built for it must take their apiVersion from m.APIVersion(), not
// from the generated constant, which names svc.run.
func PostModel(brand string) (*model.Model, error) {
	m := gen.PostModel()
	if err := m.Rebrand(brand); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return m, nil
}

var (
	_ plugin.Plugin     = Plugin{}
	_ plugin.Documented = Plugin{}
)
