package controller

import "github.com/svcrun/svc/runtime/store"

// SetEventHook makes c call f with each watch event before queueing it.
func SetEventHook(c *Controller, f func(store.Event)) { c.eventHook = f }
