// Package roles reads a plugin's role templates from its extensions folder
// at generate time, checks them against the rules of docs/api.md, and renders the plugin's access matrix.
//
// Load reads the Role documents of every *.yaml and *.yml file in one
// folder (not recursive, as Halo scans extensions/*.{yaml,yml}); Check
// returns every problem at once, each naming the template, its file and
// line; AccessMatrix shows which template grants which operation.
//
// It reads files and returns values; it does not write output or create
// objects (the plugin loader in runtime/plugin does that at start). It
// links runtime/rbac, a leaf package of pure functions, so the access
// matrix parses paths and matches rules exactly as the server will.
package roles
