// Package controller runs level-based reconcilers over a model's objects,
// in the manner of controller-runtime.
//
// A plugin implements Reconciler (one method, or a Func) and makes one
// call:
//
//	c := controller.New(controller.Options{Name: "friend-counter", Store: st, Model: m, Reconciler: r})
//	host.Run(c) // the host calls c.Start(ctx)
//
// The controller watches the model (store.Store.Watch, with initial
// events, so every existing object is reconciled once at start) and queues
// the name of every added, modified or deleted object. A Request carries
// only that name, never the event: a reconciler reads the current state
// and makes the world match it, so missed or merged events do no harm.
//
// The result decides what happens next:
//   - nil error and zero Result: done, the name's backoff is reset;
//   - Result.RequeueAfter > 0: reconciled again after that delay;
//   - an ordinary error: retried with per-name exponential backoff
//     (Options.BaseDelay doubling up to Options.MaxDelay);
//   - TerminalError(err): logged and not retried until the next event.
//
// A reconciler that maintains a status writes it with the typed client's
// UpdateStatus (or PatchStatus): Update keeps the stored status, as the
// HTTP API's PUT does (docs/api.md, Status).
//
// The work queue (internal/queue) de-duplicates names, never hands one name
// to two workers at once, and drops what waits at shutdown. Reconcilers may
// queue other objects' names with Controller.Enqueue.
//
// The package knows nothing of HTTP or plugins; runtime/plugin starts
// controllers as runnables, and example-plugin holds a worked reconciler.
package controller
