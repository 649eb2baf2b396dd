// Package swaggerui serves Swagger UI, the interactive browser of the API
// document, from files embedded in the binary: no network at run time,
// neither on the server nor in the browser (the validator badge, which
// loads an image from validator.swagger.io, is switched off).
//
// dist/ holds files copied unchanged from the npm package swagger-ui-dist
// (the version is in dist/VERSION): the bundle, its stylesheet, the
// favicon, the package's LICENSE (Apache-2.0) and NOTICE, and
// swagger-ui-bundle.js.LICENSE.txt, the licence notices of the third-party
// code inside the bundle (the bundle's first line points to it). No source
// maps and no standalone preset. index.html is ours: it loads those files with
// relative URLs and points the UI at /openapi.json.
//
// This package neither builds nor serves the document; runtime/api/openapi
// builds it and the HTTP layer (runtime/api) serves it at /openapi.json and
// mounts Handler at /swagger-ui/.
//
// To upgrade: npm pack swagger-ui-dist@5, copy the same files over the ones
// in dist/, and update dist/VERSION.
package swaggerui
