// Package queue is the work queue behind runtime/controller: object names
// waiting to be reconciled.
//
// It gives the guarantees a level-based controller relies on:
//   - a name added several times while it waits is handed out once;
//   - a name is never handed to two workers at once: added again while it
//     is being processed, it is handed out again after Done;
//   - failures back off per name, exponentially from a base delay up to a
//     maximum, until Forget resets the count;
//   - AddAfter delays an add; pending delays of one name collapse to the
//     earliest;
//   - ShutDown makes every Get return at once, dropping what waits.
//
// It holds names only, knows nothing of stores or reconcilers, and is used
// only by runtime/controller.
package queue
