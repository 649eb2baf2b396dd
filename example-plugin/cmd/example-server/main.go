// Command example-server is the custom server binary of the example plugin:
// the svc core plus the plugin's models. Until the generator produces the
// plugin's Person model, it serves the hand-written Person model of the
// runtime's test kit, which has the same fields and indexes.
package main

import (
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/server"
	"github.com/svcrun/svc/runtime/store/storetest"
)

func main() {
	server.Main(server.Config{Models: []*model.Model{storetest.PersonModel()}})
}
