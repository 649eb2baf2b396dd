package validators

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// schemaDoc wraps component schemas (YAML, indented by four spaces) into
// a document with one model, M.
func schemaDoc(t testing.TB, schemas string) *openapi3.T {
	t.Helper()
	src := `openapi: 3.0.3
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    M:
      x-svc-model: {group: g.example.com, version: v1, kind: M, plural: ms, singular: m}
      type: object
      properties:
        spec: {$ref: "#/components/schemas/S"}
` + schemas
	doc, err := openapi3.NewLoader().LoadFromData([]byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return doc
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		schemas string
		want    []string // "pointer: message"
	}{
		{"supported", `
    S:
      type: object
      required: [a]
      properties:
        a: {type: string, minLength: 1, maxLength: 3, pattern: "^a+$", enum: [a, aa]}
        b: {type: integer, format: int32, minimum: 0, maximum: 9, exclusiveMaximum: true}
        c: {type: number, format: double}
        d: {type: array, uniqueItems: true, minItems: 1, items: {type: string, format: email}}
        e: {type: object, additionalProperties: {type: boolean}}
        f: {type: object, additionalProperties: true}
        g: {type: string, format: date-time, readOnly: true, description: x, default: "2020-01-01T00:00:00Z"}
        h: {$ref: "#/components/schemas/T"}
    T: {type: string, format: uuid}
`, nil},
		{"composition", `
    S:
      type: object
      properties:
        a: {oneOf: [{type: string}, {type: integer}]}
        b: {anyOf: [{type: string}]}
        c: {allOf: [{type: string}]}
        d: {type: string, not: {enum: [x]}}
        e: {type: string, nullable: true}
        f: {type: number, multipleOf: 2}
`, []string{
			"/components/schemas/S/properties/a: oneOf is not supported",
			"/components/schemas/S/properties/a: a schema needs exactly one type (or a $ref)",
			"/components/schemas/S/properties/b: anyOf is not supported",
			"/components/schemas/S/properties/b: a schema needs exactly one type (or a $ref)",
			"/components/schemas/S/properties/c: allOf is not supported",
			"/components/schemas/S/properties/c: a schema needs exactly one type (or a $ref)",
			"/components/schemas/S/properties/d: not is not supported",
			"/components/schemas/S/properties/e: nullable is not supported",
			"/components/schemas/S/properties/f: multipleOf is not supported",
		}},
		{"formats", `
    S:
      type: object
      properties:
        a: {type: string, format: hostname}
        b: {type: integer, format: uint8}
        c: {type: string, format: byte}
`, []string{
			`/components/schemas/S/properties/a: format "hostname" is not supported on string`,
			`/components/schemas/S/properties/b: format "uint8" is not supported on integer`,
			`/components/schemas/S/properties/c: format "byte" is not supported on string`,
		}},
		{"objects", `
    S:
      type: object
      required: [missing]
      properties:
        a: {type: object}
        b: {type: object, properties: {x: {type: string}}, additionalProperties: {type: string}}
        c: {}
        d: {type: array}
        e: {type: array, uniqueItems: true, items: {type: object, properties: {x: {type: string}}}}
        f: {type: object, additionalProperties: {}}
        g: {type: object, minProperties: 1, additionalProperties: true}
`, []string{
			"/components/schemas/S: required property \"missing\" is not declared",
			"/components/schemas/S/properties/a: an object needs properties, or additionalProperties (a schema, or true for free-form values)",
			"/components/schemas/S/properties/b: properties together with additionalProperties are not supported",
			"/components/schemas/S/properties/c: a schema needs exactly one type (or a $ref)",
			"/components/schemas/S/properties/d: an array needs items",
			"/components/schemas/S/properties/e: uniqueItems is supported on arrays of strings (not date-time), integers, numbers and booleans only",
			"/components/schemas/S/properties/f/additionalProperties: a schema needs exactly one type (or a $ref)",
			"/components/schemas/S/properties/g: minProperties is not supported",
		}},
		{"misplaced and broken", `
    S:
      type: object
      properties:
        a: {type: integer, maxLength: 3}
        b: {type: string, minimum: 1, pattern: "[a"}
        c: {type: string, enum: [a, 1]}
        d: {type: string, minLength: 5, maxLength: 2}
        e: {type: string, x-go-type: int}
`, []string{
			"/components/schemas/S/properties/a: maxLength does not apply to type integer",
			"/components/schemas/S/properties/b: minimum does not apply to type string",
			"/components/schemas/S/properties/b/pattern: pattern does not compile as a Go regexp: error parsing regexp: missing closing ]: `[a`",
			"/components/schemas/S/properties/c/enum/1: enum values of a string must be strings",
			"/components/schemas/S/properties/d: maxLength is below minLength",
			"/components/schemas/S/properties/e: extension x-go-type is not supported",
		}},
		{"references", `
    S:
      type: object
      properties:
        self: {$ref: "#/components/schemas/S"}
        model: {$ref: "#/components/schemas/M"}
        chain: {type: array, items: {$ref: "#/components/schemas/U"}}
    U:
      type: object
      properties:
        back: {$ref: "#/components/schemas/S"}
`, []string{
			"/components/schemas/M: recursive schemas are not supported (M → S → M)",
			"/components/schemas/S: recursive schemas are not supported (S → U → S)",
			`/components/schemas/S/properties/model: $ref to the model "M" is not supported; refer to objects by name instead`,
			"/components/schemas/U: recursive schemas are not supported (U → S → U)",
		}},
		{"envelope", `
    S: {type: string}
    N:
      x-svc-model: {group: g.example.com, version: v1, kind: N, plural: ns, singular: n}
      type: object
      properties:
        metadata: {type: string}
        kind: {type: string}
        a/b: {type: string}
`, []string{
			`/components/schemas/N/properties/kind: "kind" is part of the envelope every model gets; a model declares only its own fields`,
			`/components/schemas/N/properties/metadata: "metadata" is part of the envelope every model gets; a model declares only its own fields`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, is := range Check(schemaDoc(t, tc.schemas)) {
				got = append(got, is.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("issues\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
			}
		})
	}
}

func TestCheckFixtures(t *testing.T) {
	for _, fx := range fixtures {
		if issues := Check(loadDoc(t, fx.schema)); len(issues) > 0 {
			t.Errorf("%s: %v", fx.name, issues)
		}
	}
	if issues := Check(loadBase(t)); len(issues) > 0 {
		t.Errorf("base: %v", issues)
	}
}

func TestPointerEscapes(t *testing.T) {
	if got := pointer("/components/schemas", "a/b~c"); got != "/components/schemas/a~1b~0c" {
		t.Errorf("got %q", got)
	}
}

func TestGoPattern(t *testing.T) {
	ref := regexp.MustCompile(`\\u([0-9A-F]{4})`)
	for _, p := range []string{"", "abc", `\u00E9`, `^[\u00E9\u00e9]+$`, `\\u0041`, `\u00E`, `\u`, `x\u0041\u0042y`, `\u00G1`} {
		if got, want := goPattern(p), ref.ReplaceAllString(p, `\x{$1}`); got != want {
			t.Errorf("goPattern(%q) = %q, want %q", p, got, want)
		}
	}
}
