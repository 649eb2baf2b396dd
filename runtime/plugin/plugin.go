package plugin

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/svcrun/svc/runtime/object"
)

// Plugin is a unit of models, routes and background work compiled into a
// server binary. Its package calls Register from init; the server starts
// every registered plugin whose Plugin object is enabled.
type Plugin interface {
	// Name identifies the plugin: the name of its Plugin object
	// (/api/v1alpha1/plugins/<name>), the prefix of its role templates and
	// the <plugin> of its version-only routes. Lowercase DNS label.
	Name() string
	// Start declares the plugin's models, custom routes and runnables on
	// h. It must not block or keep goroutines: the host applies the
	// declarations once Start returns, and undoes them when the plugin
	// stops or a later step of its start fails.
	Start(ctx context.Context, h *Host) error
}

// Extender is a plugin that ships extension files (docs/plugins.md): the
// .yaml/.yml files at the root of the returned file system, usually an
// embedded extensions/ folder, are created when the plugin starts.
type Extender interface {
	Extensions() fs.FS
}

// Documented is a plugin that describes its custom APIs in an OpenAPI 3
// document (JSON; usually the generated OpenAPI() of its package) for the
// brand the server runs under; the server adds the paths the generic
// document lacks to /openapi.json while the plugin runs.
type Documented interface {
	OpenAPI(brand string) []byte
}

// Generated is a plugin type built on svcgen's generated Base: GeneratedFor
// is the name its role templates and UI permissions were generated for
// (svcgen -plugin). A plugin whose Name differs is refused at start.
type Generated interface {
	GeneratedFor() string
}

// checkGenerated refuses a plugin whose Name is not the one its generated
// code was made for: its templates would be named for another plugin.
func checkGenerated(p Plugin) error {
	g, ok := p.(Generated)
	if !ok || g.GeneratedFor() == p.Name() {
		return nil
	}
	return fmt.Errorf("plugin %q runs code generated for plugin %q (svcgen -plugin %s), whose role templates and UI permissions carry that name: make Name() return %q or regenerate with -plugin %s",
		p.Name(), g.GeneratedFor(), g.GeneratedFor(), g.GeneratedFor(), p.Name())
}

// Core marks a module of the service itself packaged as a plugin (the
// content module): its models may live in the groups reserved for the
// service. Another plugin is refused the empty group and warned of the
// brand's groups. It is the run-time counterpart of the generator's -core
// flag.
type Core interface {
	Core()
}

// Stopper is a plugin with work of its own to undo when it stops. Stop is
// called after its runnables have ended and before its routes and models
// go away.
type Stopper interface {
	Stop(ctx context.Context) error
}

// Runnable is long-running work owned by a plugin, such as a controller.
// Start blocks until ctx ends (the plugin stops) and returns nil then; an
// error before that is logged.
type Runnable interface {
	Start(ctx context.Context) error
}

var registry = struct {
	sync.RWMutex
	byName map[string]Plugin
}{byName: map[string]Plugin{}}

// Register adds p to the plugins every server binary of this process
// starts. Call it from an init function. A nil plugin, a name that is not
// a lowercase DNS label of at most 63 characters, or a name taken twice is
// a programming mistake and panics, so a bad build fails at once.
func Register(p Plugin) {
	if p == nil {
		panic("plugin: Register of a nil plugin")
	}
	name := p.Name()
	if object.ValidateDNSLabel(name) != nil {
		panic(fmt.Sprintf("plugin: Register: name %q is not a lowercase DNS label", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[name]; dup {
		panic(fmt.Sprintf("plugin: Register: plugin %q registered twice", name))
	}
	registry.byName[name] = p
}

// Registered returns the registered plugins sorted by name, so start order
// and listings never depend on map order.
func Registered() []Plugin {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Plugin, 0, len(registry.byName))
	for _, p := range registry.byName {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Plugin) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}
