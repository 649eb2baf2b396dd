// Package web serves the console, a small single-page app in plain ES
// modules over Preact and htm, from files embedded in the binary
// (docs/console.md). static/vendor holds those libraries' dist/*.module.js
// files and licences, copied by `make console` from the versions pinned in
// tools/console/package-lock.json; the rest of static/ is ours.
//
// The app is an ordinary API client: it signs in with the caller's Basic
// credentials, held only in page memory, and everything it shows comes from
// /openapi.json and the console API, so RBAC applies as for curl.
package web
