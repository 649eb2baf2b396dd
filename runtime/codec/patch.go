package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// PatchType is the media type of a patch.
type PatchType string

// The patch media types the API accepts (docs/api.md).
const (
	JSONPatch  PatchType = "application/json-patch+json"  // RFC 6902
	MergePatch PatchType = "application/merge-patch+json" // RFC 7386
)

// Patch limits (docs/operations.md). A JSON Patch's copy operations can
// double a document with each operation, so what a patch builds is
// bounded, not only the patch's own size.
const (
	// MaxPatchOps is the most operations one JSON Patch may have, as
	// Kubernetes allows.
	MaxPatchOps = 10000
	// DefaultMaxPatchedBytes is the default of PatchLimits.MaxBytes: the
	// request body limit, since a patched object is stored like a body.
	DefaultMaxPatchedBytes = 3 << 20
)

// PatchLimits bound what applying one patch may build.
type PatchLimits struct {
	// MaxBytes bounds both the bytes a JSON Patch's copy operations add
	// up to and the patched document.
	MaxBytes int64
}

// DefaultPatchLimits are the limits of ParsePatch.
var DefaultPatchLimits = PatchLimits{MaxBytes: DefaultMaxPatchedBytes}

// Patcher applies one parsed patch to documents; parse once, apply to each
// retry of an optimistic update.
type Patcher func(doc []byte) ([]byte, error)

// ParsePatch is ParsePatchLimits with DefaultPatchLimits.
func ParsePatch(pt PatchType, patch []byte) (Patcher, error) {
	return ParsePatchLimits(pt, patch, DefaultPatchLimits)
}

// ParsePatchLimits checks a patch of type pt and returns its applier,
// which refuses to build more than lim allows. Errors are *Error (the
// patch is the caller's input) or *LimitError (too large).
func ParsePatchLimits(pt PatchType, patch []byte, lim PatchLimits) (Patcher, error) {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxPatchedBytes
	}
	// Depth first, before any decoder descends into the patch.
	commas, err := scan(patch)
	if err != nil {
		return nil, err
	}
	switch pt {
	case JSONPatch:
		// The library reads "null" as an empty patch; RFC 6902 wants an
		// array of operations.
		if t := bytes.TrimSpace(patch); len(t) == 0 || t[0] != '[' {
			return nil, &Error{Detail: "a JSON Patch must be an array of operations"}
		}
		if commas+1 > MaxPatchOps {
			return nil, &LimitError{Limit: "MaxPatchOps", Max: MaxPatchOps,
				Detail: fmt.Sprintf("the JSON Patch has %d operations", commas+1)}
		}
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, &Error{Detail: "malformed JSON Patch: " + err.Error()}
		}
		indexes, err := checkPointers(p)
		if err != nil {
			return nil, err
		}
		opts := jsonpatch.NewApplyOptions()
		opts.SupportNegativeIndices = false // not RFC 6902: "-1" is no index
		opts.AccumulatedCopySizeLimit = lim.MaxBytes
		return wrap(lim, func(doc []byte) ([]byte, error) {
			if err := checkIndexes(doc, indexes); err != nil {
				return nil, err
			}
			return p.ApplyWithOptions(doc, opts)
		}), nil
	case MergePatch:
		// RFC 7386 on decoded values, in time linear in the patch: the
		// library's merge re-decodes the value below every level, which
		// for a 3 MiB patch nested 99 levels took 897 MB.
		var p any
		if err := decodeJSON(patch, &p); err != nil {
			return nil, &Error{Detail: "malformed merge patch: " + err.Error()}
		}
		if _, ok := p.(map[string]any); !ok {
			return nil, &Error{Detail: "a merge patch must be a JSON object"}
		}
		return wrap(lim, func(doc []byte) ([]byte, error) {
			var target any
			if err := decodeJSON(doc, &target); err != nil {
				return nil, fmt.Errorf("codec: decode the document to patch: %w", err)
			}
			return json.Marshal(mergeValue(target, p))
		}), nil
	}
	return nil, fmt.Errorf("codec: unsupported patch type %q", pt)
}

// wrap makes the library's failures the caller's (*Error) and refuses a
// result larger or deeper than a body may be.
func wrap(lim PatchLimits, apply func([]byte) ([]byte, error)) Patcher {
	return func(doc []byte) ([]byte, error) {
		out, err := apply(doc)
		var (
			copied *jsonpatch.AccumulatedCopySizeError
			ce     *Error
		)
		switch {
		case errors.As(err, &copied):
			return nil, &LimitError{Limit: "MaxPatchedBytes", Max: lim.MaxBytes,
				Detail: "the JSON Patch's copy operations add more bytes than the limit"}
		case errors.As(err, &ce):
			return nil, err
		case err != nil:
			return nil, &Error{Detail: "the patch does not apply: " + err.Error()}
		case int64(len(out)) > lim.MaxBytes:
			return nil, &LimitError{Limit: "MaxPatchedBytes", Max: lim.MaxBytes,
				Detail: fmt.Sprintf("the patched object would have %d bytes", len(out))}
		}
		// A copy can nest the document in itself: the result must be as
		// shallow as any body.
		if err := CheckDepth(out); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// mergeValue merges patch into target as RFC 7386 says. It changes
// target's objects in place but never patch's, which is merged again on
// a retry.
func mergeValue(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = make(map[string]any, len(p))
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergeValue(t[k], v)
		}
	}
	return t
}

// decodeJSON decodes one JSON value into v, numbers kept as their text;
// anything after the value is an error.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// indexRef is a JSON pointer segment that is an array index only if it
// is canonical (RFC 6901: "0" or digits without a leading zero, or "-"),
// but that Go's strconv.Atoi, which the library uses, would read as one
// ("-1", "+1", "01"). Whether it names an array element depends on the
// document, so it is checked against the document (checkIndexes).
type indexRef struct {
	pointer string // the whole path, for the error
	parent  []string
	segment string
}

// checkPointers checks the syntax of every operation's path and from
// (RFC 6901) and returns the segments that need checkIndexes.
func checkPointers(p jsonpatch.Patch) ([]indexRef, error) {
	var refs []indexRef
	for i, op := range p {
		for _, field := range []string{"path", "from"} {
			raw, ok := op[field]
			if !ok || raw == nil {
				continue
			}
			var ptr string
			if err := json.Unmarshal(*raw, &ptr); err != nil {
				return nil, &Error{Detail: fmt.Sprintf("malformed JSON Patch: operation %d: %s must be a string", i, field)}
			}
			segs, err := splitPointer(ptr)
			if err != nil {
				return nil, &Error{Detail: fmt.Sprintf("malformed JSON Patch: operation %d: %s %q: %v", i, field, ptr, err)}
			}
			for j, s := range segs {
				if looseIndex(s) {
					refs = append(refs, indexRef{pointer: ptr, parent: segs[:j], segment: s})
				}
			}
		}
	}
	return refs, nil
}

// splitPointer splits an RFC 6901 JSON pointer into its unescaped
// segments, refusing a pointer deeper than any document can be.
func splitPointer(ptr string) ([]string, error) {
	if ptr == "" {
		return nil, nil
	}
	if ptr[0] != '/' {
		return nil, errors.New(`a JSON pointer is empty or starts with "/"`)
	}
	if n := strings.Count(ptr, "/"); n > MaxDepth+1 {
		return nil, fmt.Errorf("%d segments; a document nests at most %d levels (limit MaxDepth)", n, MaxDepth)
	}
	segs := strings.Split(ptr[1:], "/")
	for i, s := range segs {
		for j := 0; j < len(s); j++ {
			if s[j] == '~' && (j+1 == len(s) || s[j+1] != '0' && s[j+1] != '1') {
				return nil, errors.New(`"~" must be followed by 0 or 1`)
			}
		}
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs, nil
}

// looseIndex reports a segment that strconv.Atoi reads as an integer but
// that RFC 6901 does not allow as an array index.
func looseIndex(s string) bool {
	if _, err := strconv.Atoi(s); err != nil {
		return false
	}
	return s[0] == '-' || s[0] == '+' || (len(s) > 1 && s[0] == '0')
}

// checkIndexes refuses a loose index (looseIndex) that names an element
// of an array of doc. Only patches with such a segment pay for decoding
// doc; a segment under an array the patch itself creates is left to the
// library, which refuses negative indexes.
func checkIndexes(doc []byte, refs []indexRef) error {
	if len(refs) == 0 {
		return nil
	}
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		return fmt.Errorf("codec: decode the document to patch: %w", err)
	}
	for _, r := range refs {
		v := root
		for _, s := range r.parent {
			switch c := v.(type) {
			case map[string]any:
				v = c[s]
			case []any:
				n, err := strconv.Atoi(s)
				if err != nil || n < 0 || n >= len(c) {
					v = nil
				} else {
					v = c[n]
				}
			default:
				v = nil
			}
		}
		if _, ok := v.([]any); ok {
			return &Error{Detail: fmt.Sprintf("malformed JSON Patch: path %q: array index %q must be digits without a leading zero, or \"-\" (RFC 6901)", r.pointer, r.segment)}
		}
	}
	return nil
}
