// Package validators generates, with jennifer, the validators of a
// plugin's models, and states what they enforce as an OpenAPI schema.
//
// For every model K, Generate emits:
//
//   - (*K).Validate(errs *object.FieldErrors): checks the model's own
//     fields of a typed value (metadata is object.ValidateMetadata's job),
//     without reflection and without allocating for a valid value: field
//     paths are a chain of stack values turned into strings only when a
//     violation is reported.
//   - ValidateKJSON(doc any, errs *object.FieldErrors): checks a decoded
//     JSON document against the whole object schema (envelope, metadata
//     from the base document's ObjectMeta, the model's fields): types,
//     required (presence), null, unknown fields (every object without
//     additionalProperties is closed) and every keyword. The HTTP layer
//     runs it on request bodies before decoding them into K.
//
// Errors are field paths ("spec.parts[1].sku", "metadata.labels[team]")
// with short messages ("must be <= 150", "is required", "unknown field"),
// in a fixed order: properties by name, then unknown keys by name; map
// entries by key. Generate emits the Go names gotypes.Build reports, so
// the file compiles against gotypes.Generate's output for the same
// document. Check lists what the generators do not support; Generate
// refuses such documents.
//
// FullSchema is the schema ValidateKJSON enforces, for the plugin's
// published OpenAPI document and as the oracle the tests compare the
// generated code with: kin-openapi's VisitJSON with KinOptions accepts
// exactly what ValidateKJSON accepts (fuzzed in internal/fixtures). What
// kin-openapi does that the generated code copies on purpose:
//
//   - uniqueItems compares items by their JSON encoding: [1, 1.0] holds a
//     duplicate when numbers decode as float64, and none as json.Number.
//   - Integers are checked as float64: 2^63 passes as an int64 (float64
//     cannot tell it from math.MaxInt64) although encoding/json then
//     fails to decode it into an int64 field; 2.0 passes as an integer
//     although encoding/json does not decode "2.0" into one. The decode
//     after validation still answers 400.
//   - Lengths count runes (kin-openapi means to count UTF-16 units, but
//     its code counts runes).
//   - Patterns have \uXXXX (upper-case hex only) rewritten to \x{XXXX}
//     before compiling, as kin-openapi does.
//   - map[any]any with string keys (as YAML decoders produce) is an
//     object; int, int32 and int64 are numbers.
//
// Where they part:
//
//   - Formats: kin-openapi checks no email, uri or uuid by default, and its
//     date-time pattern lets through what time.Time cannot read (a leap
//     second, 30 February, offset +24:00). The generated checks define
//     those formats (see KinFormats); kin-openapi agrees only when given
//     KinOptions.
//   - kin-openapi takes any Go slice as an array (by reflection); the
//     generated code takes []any, which is all encoding/json and YAML
//     decoders produce.
//   - A typed []int64 with uniqueItems compares integers exactly; kin-openapi
//     on a float64-decoded document sees two integers above 2^53 that
//     round to the same float64 as duplicates.
//   - A date-time written with JSON escapes ("\u0032020-...") passes both,
//     but time.Time's decoder does not unescape; the decode answers 400.
//
// cmd/svcgen (through generator) calls this package; nothing at run time
// does. The generated code calls the helpers of runtime/validation.
package validators
