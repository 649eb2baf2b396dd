package codec

import (
	"bytes"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// PatchType is the media type of a patch.
type PatchType string

// The patch media types the API accepts (CONTRACT §3).
const (
	JSONPatch  PatchType = "application/json-patch+json"  // RFC 6902
	MergePatch PatchType = "application/merge-patch+json" // RFC 7386
)

// Patcher applies one parsed patch to documents; parse once, apply to each
// retry of an optimistic update.
type Patcher func(doc []byte) ([]byte, error)

// ParsePatch checks a patch of type pt and returns its applier. Errors are
// *Error: the patch is the caller's input.
func ParsePatch(pt PatchType, patch []byte) (Patcher, error) {
	switch pt {
	case JSONPatch:
		// The library reads "null" as an empty patch; RFC 6902 wants an
		// array of operations.
		if t := bytes.TrimSpace(patch); len(t) == 0 || t[0] != '[' {
			return nil, &Error{Detail: "a JSON Patch must be an array of operations"}
		}
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, &Error{Detail: "malformed JSON Patch: " + err.Error()}
		}
		return wrap(p.Apply), nil
	case MergePatch:
		if !json.Valid(patch) || len(bytes.TrimSpace(patch)) == 0 || bytes.TrimSpace(patch)[0] != '{' {
			return nil, &Error{Detail: "a merge patch must be a JSON object"}
		}
		return wrap(func(doc []byte) ([]byte, error) { return jsonpatch.MergePatch(doc, patch) }), nil
	}
	return nil, fmt.Errorf("codec: unsupported patch type %q", pt)
}

func wrap(apply func([]byte) ([]byte, error)) Patcher {
	return func(doc []byte) ([]byte, error) {
		out, err := apply(doc)
		if err != nil {
			return nil, &Error{Detail: "the patch does not apply: " + err.Error()}
		}
		return out, nil
	}
}
