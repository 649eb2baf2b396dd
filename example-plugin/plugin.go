package example

import (
	"bytes"
	"context"
	"embed"
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/plugin"
)

// Name is the plugin's name: its Plugin object, the prefix of its role
// templates and of its ui-permissions.
const Name = "example"

//go:embed extensions/*.yaml
var extensions embed.FS

func init() { plugin.Register(Plugin{}) }

// Plugin is the example plugin (EXAMPLE_PLUGIN.md). A server binary that
// blank-imports this package serves it.
type Plugin struct{}

// Name implements plugin.Plugin.
func (Plugin) Name() string { return Name }

// Extensions implements plugin.Extender: the role templates.
func (Plugin) Extensions() fs.FS {
	sub, err := fs.Sub(extensions, "extensions")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	return sub
}

// OpenAPI implements plugin.Documented: the generated document, whose
// custom paths the server adds to /openapi.json. It was generated for
// svc.run; the version-only route's group follows the brand.
func (Plugin) OpenAPI(brand string) []byte {
	return bytes.ReplaceAll(OpenAPI(), []byte("/apis/plugin.api.svc.run/"), []byte("/apis/plugin.api."+brand+"/"))
}

// Start implements plugin.Plugin: the Person model and its generated
// routes (creates admitted with their friend count), the greeting and
// stats custom APIs, and the friend counter.
func (Plugin) Start(_ context.Context, h *plugin.Host) error {
	m := PersonModel()
	m.Admit = AdmitFriendCount(NewPersonClient(h.Store(), m))
	h.Model(m, RegisterPersonRoutes)
	api := &customAPI{persons: NewPersonClient(h.Store(), m), fail: h.Fail}
	h.Routes("api.people.example.com/v1alpha1", api.greetingRoutes)
	// The earlier generation's version-only route:
	// /apis/plugin.api.<brand>/v1alpha1/plugins/example/stats.
	h.Routes("v1alpha1", api.statsRoutes)
	h.Run(NewFriendController(h.Store(), m, h.Logger()))
	return nil
}

// customAPI serves the plugin's hand-written routes.
type customAPI struct {
	persons *PersonClient
	fail    func(*gin.Context, error)
}

func (a *customAPI) greetingRoutes(r gin.IRouter) {
	r.GET("/persons/:name/greeting", a.greeting)
}

func (a *customAPI) statsRoutes(r gin.IRouter) {
	r.GET("/stats", a.stats)
}

// Greeting is the body of GET …/persons/{name}/greeting.
type Greeting struct {
	Greeting string `json:"greeting"`
}

func (a *customAPI) greeting(c *gin.Context) {
	p, err := a.persons.Get(c, c.Param("name"))
	if err != nil {
		a.fail(c, err) // a missing person is a 404 problem
		return
	}
	c.JSON(http.StatusOK, Greeting{Greeting: "Hello, " + p.Spec.Name + "!"})
}

// Stats is the body of GET …/plugins/example/stats.
type Stats struct {
	Persons int64 `json:"persons"`
}

func (a *customAPI) stats(c *gin.Context) {
	res, err := a.persons.List(c, client.ListOptions{Page: 1, Size: 1})
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, Stats{Persons: res.Total})
}

var (
	_ plugin.Plugin     = Plugin{}
	_ plugin.Extender   = Plugin{}
	_ plugin.Documented = Plugin{}
)
