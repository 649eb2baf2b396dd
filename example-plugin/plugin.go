package example

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/plugin"
)

// Start implements plugin.Plugin (the rest of Plugin is generated, in
// zz_generated.plugin.go): the Person model and its generated
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
