// Package schemas holds the OpenAPI documents the generator builds on: the
// envelope every object carries (base.yaml) and the core models.
package schemas

import _ "embed"

// Base is the envelope document: components.schemas.ObjectMeta describes
// metadata (docs/api.md). apiVersion and kind are plain strings. The
// generator adds it to every model, and runtime/api/openapi serves it as
// the ObjectMeta component.
//
//go:embed base.yaml
var Base []byte
