// Package plugin runs plugins: Go packages compiled into a server binary
// that register themselves from init (Register) and declare, in their
// Start step, the models, custom routes and controllers they serve
// (Host).
//
// The Manager keeps one Plugin object per plugin (/api/v1alpha1/plugins)
// and starts or stops each plugin as its spec.enabled says, at start-up and
// whenever the object changes (docs/plugins.md). A start applies the plugin's
// declarations in order — models reserved (their routes answer 503),
// custom routes mounted behind a 503 gate, indexes built, extension files
// written, runnables started — and reports status.phase STARTED; a failing
// step undoes the finished ones and reports FAILED with a message naming
// the file and object at fault, leaving the server and the other plugins
// running. A stop undoes a start and deletes the objects the plugin's
// extension files created (except those marked do-not-overwrite); stored
// data stays.
//
// LoadExtensions is the extension-file reader: .yaml/.yml files with any
// number of documents, typed by apiVersion and kind (or groupVersion and
// kind, the earlier generation with fields directly under the object).
//
// Callers: plugin packages (Register, Host), and runtime/server, which
// creates the Manager.
package plugin
