// Command example-server is the custom server binary of the example plugin:
// the svc core plus the plugin's generated Person model and routes. Access
// control and the plugin lifecycle (custom APIs, controller) are not wired
// in yet.
package main

import (
	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/server"
)

func main() {
	person := example.PersonModel()
	server.Main(server.Config{
		Models: []*model.Model{person},
		Routes: map[*model.Model]api.ModelRoutes{person: example.RegisterPersonRoutes},
	})
}
