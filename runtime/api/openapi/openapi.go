package openapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/schemas"
)

// OpenAPIVersion is the OpenAPI version of the documents Build writes.
const OpenAPIVersion = "3.0.3"

// Defaults for Options.Title and Options.Version.
const (
	DefaultTitle   = "svc API"
	DefaultVersion = "0.0.0"
)

// Options configure Build.
type Options struct {
	// Title and Version fill the document's info; empty ones get
	// DefaultTitle and DefaultVersion.
	Title   string
	Version string

	// Schemas holds the real schema of a model's objects, keyed by Kind,
	// or by the model's GVK().String() ("group/version/Kind") to tell
	// apart models that share a Kind; the GVK key wins. Without an entry
	// the object schema has free-form spec and status. A supplied schema
	// is used as is (its own apiVersion, kind and metadata included); a
	// SchemaRef with a Ref must point at a component this document will
	// hold (for example one of an Extra document) and, as kin-openapi
	// validation requires, carry that component's schema as its Value. Keys that name no model
	// are ignored, so a schema may outlive its model being served.
	Schemas map[string]*openapi3.SchemaRef

	// Extra documents are merged in, in order: their paths, components and
	// tags (info, servers, security and the rest are not taken). A path
	// may gain operations from several documents, but one operation, one
	// component or one operation id defined twice differently is an error
	// naming it; an identical definition is accepted once. Extra
	// documents are not modified, but the result shares their values.
	Extra []*openapi3.T
}

// Build returns the document of the generic API of models, the core
// endpoints and the Extra documents. The models need not be sorted; two
// models with the same group, version and kind, or the same path, are an
// error.
func Build(models []*model.Model, opts Options) (*openapi3.T, error) {
	ms := slices.Clone(models)
	for _, m := range ms {
		if m == nil {
			return nil, errors.New("openapi: nil model")
		}
		if m.Version == "" || m.Kind == "" || m.Plural == "" {
			return nil, fmt.Errorf("openapi: model %s: version, kind and plural are required", m.GVK())
		}
	}
	slices.SortFunc(ms, func(a, b *model.Model) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Plural, b.Plural))
	})
	paths := map[string]*model.Model{}
	for i, m := range ms {
		if i > 0 && ms[i-1].GVK() == m.GVK() {
			return nil, fmt.Errorf("openapi: model %s is given twice", m.GVK())
		}
		if o, ok := paths[basePath(m)]; ok {
			return nil, fmt.Errorf("openapi: models %s and %s are both served at %s", o.GVK(), m.GVK(), basePath(m))
		}
		paths[basePath(m)] = m
	}
	names, err := assignNames(ms)
	if err != nil {
		return nil, err
	}

	meta, err := objectMeta()
	if err != nil {
		return nil, err
	}
	doc := &openapi3.T{
		OpenAPI: OpenAPIVersion,
		Info: &openapi3.Info{
			Title:       cmp.Or(opts.Title, DefaultTitle),
			Version:     cmp.Or(opts.Version, DefaultVersion),
			Description: docDescription,
		},
		Paths:      openapi3.NewPaths(),
		Components: sharedComponents(meta),
		Security: openapi3.SecurityRequirements{
			{securityBasic: []string{}},
			{securityBearer: []string{}},
		},
	}
	addCoreEndpoints(doc)
	for i, m := range ms {
		if err := addModel(doc, m, names[i], opts.Schemas); err != nil {
			return nil, err
		}
	}
	for i, extra := range opts.Extra {
		if extra == nil {
			continue
		}
		if err := merge(doc, extra, i); err != nil {
			return nil, err
		}
	}
	if err := checkOperationIDs(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// JSON renders doc with sorted keys, two-space indentation and without
// HTML escaping; the same document always gives the same bytes.
func JSON(doc *openapi3.T) ([]byte, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: marshal: %w", err)
	}
	// kin-openapi marshals through maps (sorted keys) with json.Marshal
	// (HTML-escaped). Re-encoding the generic value keeps the order and
	// writes "<index>" instead of "\u003cindex\u003e"; UseNumber keeps
	// numbers exactly as they were.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("openapi: re-read: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return b.Bytes(), nil
}

const docDescription = "The generic CRUD API of every served model and the core endpoints. " +
	"Errors are RFC 7807 problem documents (application/problem+json). " +
	"Lists carry exactly the nine fields page, size, total, items, first, last, hasNext, hasPrevious and totalPages."

// basePath is where a model's collection is served (docs/api.md).
func basePath(m *model.Model) string {
	if m.Group == "" {
		return "/api/" + m.Version + "/" + m.Plural
	}
	return "/apis/" + m.Group + "/" + m.Version + "/" + m.Plural
}

// ---- references ----

func schemaRef(name string, c *openapi3.Components) *openapi3.SchemaRef {
	return &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: c.Schemas[name].Value}
}

func paramRef(name string, c *openapi3.Components) *openapi3.ParameterRef {
	return &openapi3.ParameterRef{Ref: "#/components/parameters/" + name, Value: c.Parameters[name].Value}
}

func responseRef(name string, c *openapi3.Components) *openapi3.ResponseRef {
	return &openapi3.ResponseRef{Ref: "#/components/responses/" + name, Value: c.Responses[name].Value}
}

// ---- small schema helpers ----

func described(s *openapi3.Schema, desc string) *openapi3.SchemaRef {
	s.Description = desc
	return s.NewRef()
}

func str(desc string) *openapi3.SchemaRef     { return described(openapi3.NewStringSchema(), desc) }
func integer(desc string) *openapi3.SchemaRef { return described(openapi3.NewIntegerSchema(), desc) }
func int64s(desc string) *openapi3.SchemaRef  { return described(openapi3.NewInt64Schema(), desc) }
func boolean(desc string) *openapi3.SchemaRef { return described(openapi3.NewBoolSchema(), desc) }

func stringMap(desc string) *openapi3.SchemaRef {
	s := openapi3.NewObjectSchema().WithAdditionalProperties(openapi3.NewStringSchema())
	s.Description = desc
	return s.NewRef()
}

func freeObject(desc string) *openapi3.Schema {
	s := openapi3.NewObjectSchema().WithAnyAdditionalProperties()
	s.Description = desc
	return s
}

func jsonContent(s *openapi3.SchemaRef) openapi3.Content {
	return openapi3.Content{"application/json": openapi3.NewMediaType().WithSchemaRef(s)}
}

func response(desc string, content openapi3.Content) *openapi3.ResponseRef {
	return &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(desc).WithContent(content)}
}

func header(desc string, s *openapi3.SchemaRef) *openapi3.HeaderRef {
	return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{Description: desc, Schema: s}}}
}

// ---- shared components ----

// Names of the shared parameters and responses.
const (
	paramName              = "name"
	paramPage              = "page"
	paramSize              = "size"
	paramLabelSelector     = "labelSelector"
	paramWatch             = "watch"
	paramSendInitialEvents = "sendInitialEvents"

	respBadRequest     = "BadRequest"
	respUnauthorized   = "Unauthorized"
	respForbidden      = "Forbidden"
	respNotFound       = "NotFound"
	respConflict       = "Conflict"
	respTooLarge       = "PayloadTooLarge"
	respUnsupported    = "UnsupportedMediaType"
	respNotReady       = "ServiceUnavailable"
	respDefaultProblem = "Problem"
)

// problemStatus maps the status code of each problem response to its
// component name.
var problemStatus = map[int]string{
	400: respBadRequest,
	401: respUnauthorized,
	403: respForbidden,
	404: respNotFound,
	409: respConflict,
	413: respTooLarge,
	415: respUnsupported,
	503: respNotReady,
}

func sharedComponents(meta *openapi3.Schema) *openapi3.Components {
	c := &openapi3.Components{
		Schemas:         openapi3.Schemas{},
		Parameters:      openapi3.ParametersMap{},
		Responses:       openapi3.ResponseBodies{},
		SecuritySchemes: openapi3.SecuritySchemes{},
	}

	// ObjectMeta, as the generator adds it to every model (schemas/base.yaml).
	c.Schemas[schemaObjectMeta] = meta.NewRef()

	// Problem (docs/api.md).
	fieldErr := openapi3.NewObjectSchema()
	fieldErr.Properties = openapi3.Schemas{
		"field":   str("Path of the field at fault, such as spec.age or metadata.labels[app]."),
		"message": str("What is wrong with it."),
	}
	fieldErr.Required = []string{"field", "message"}
	errs := openapi3.NewArraySchema()
	errs.Items = fieldErr.NewRef()
	errs.Description = "Every field at fault, all at once."
	problem := openapi3.NewObjectSchema()
	problem.Description = "An RFC 7807 problem document."
	problem.Properties = openapi3.Schemas{
		"type":      str("A URI reference identifying the problem type; about:blank when the status says it all."),
		"title":     str("The status text."),
		"status":    integer("The HTTP status code."),
		"detail":    str("What went wrong, for a person to read."),
		"instance":  str("The request URI."),
		"requestId": str("Identifies the request in the server log."),
		"errors":    errs.NewRef(),
	}
	problem.Required = []string{"type", "title", "status", "detail", "instance"}
	c.Schemas[schemaProblem] = problem.NewRef()

	// JSON Patch (RFC 6902).
	op := openapi3.NewObjectSchema()
	op.Properties = openapi3.Schemas{
		"op":    openapi3.NewStringSchema().WithEnum("add", "remove", "replace", "move", "copy", "test").NewRef(),
		"path":  str("A JSON Pointer (RFC 6901) to the target location."),
		"value": &openapi3.SchemaRef{Value: &openapi3.Schema{Description: "The value to add, replace or test: any JSON value."}},
		"from":  str("A JSON Pointer to the source location, for move and copy."),
	}
	op.Required = []string{"op", "path"}
	patch := openapi3.NewArraySchema()
	patch.Items = op.NewRef()
	patch.Description = "An RFC 6902 JSON Patch: operations applied in order, all or none."
	c.Schemas[schemaJSONPatch] = patch.NewRef()

	// Parameters.
	explode := true
	name2 := openapi3.NewPathParameter(paramName).WithDescription("metadata.name of the object.").WithSchema(openapi3.NewStringSchema())
	c.Parameters[paramName] = &openapi3.ParameterRef{Value: name2}
	page := openapi3.NewQueryParameter(paramPage).WithDescription("1-based page number; a value below 1 is taken as 1.").
		WithSchema(openapi3.NewIntegerSchema().WithMin(1).WithDefault(1))
	c.Parameters[paramPage] = &openapi3.ParameterRef{Value: page}
	size := openapi3.NewQueryParameter(paramSize).WithDescription("Page size; absent or 0 returns every object.").
		WithSchema(openapi3.NewIntegerSchema().WithMin(0).WithDefault(0))
	c.Parameters[paramSize] = &openapi3.ParameterRef{Value: size}
	labels := openapi3.NewQueryParameter(paramLabelSelector).
		WithDescription("Label terms, one per value, all ANDed: `k=v`, `k!=v` (objects without k match), `k`, `!k`, `k=(v1,v2)`.").
		WithSchema(openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()))
	labels.Style, labels.Explode = openapi3.SerializationForm, &explode
	c.Parameters[paramLabelSelector] = &openapi3.ParameterRef{Value: labels}
	watch := openapi3.NewQueryParameter(paramWatch).
		WithDescription("With true, stream changes over a WebSocket instead of listing (the request must be a WebSocket upgrade). " +
			"Each text frame is `{\"type\":\"ADDED\"|\"MODIFIED\"|\"DELETED\",\"object\":{...}}`; labelSelector and fieldSelector apply.").
		WithSchema(openapi3.NewBoolSchema().WithDefault(false))
	c.Parameters[paramWatch] = &openapi3.ParameterRef{Value: watch}
	initial := openapi3.NewQueryParameter(paramSendInitialEvents).
		WithDescription("For a watch: first send ADDED for every object that matches now.").
		WithSchema(openapi3.NewBoolSchema().WithDefault(false))
	c.Parameters[paramSendInitialEvents] = &openapi3.ParameterRef{Value: initial}

	// Problem responses.
	problemContent := openapi3.Content{"application/problem+json": openapi3.NewMediaType().WithSchemaRef(schemaRef(schemaProblem, c))}
	problemResp := func(desc string, headers openapi3.Headers) *openapi3.ResponseRef {
		r := openapi3.NewResponse().WithDescription(desc).WithContent(problemContent)
		r.Headers = headers
		return &openapi3.ResponseRef{Value: r}
	}
	c.Responses[respBadRequest] = problemResp("Bad request: malformed JSON, a wrong type, a constraint violation, a bad name, an unknown field, "+
		"a bad query parameter, sorting or selecting on a field without an index, or a kind, apiVersion or name that does not match the URL.", nil)
	c.Responses[respUnauthorized] = problemResp("No credentials, or bad ones, on a request that needs them.", openapi3.Headers{
		"WWW-Authenticate": header("The authentication scheme to use: Basic realm=\"svc\".", str("")),
	})
	c.Responses[respForbidden] = problemResp("Authenticated, but no role grants the request.", nil)
	c.Responses[respNotFound] = problemResp("No such object, or no such route.", nil)
	c.Responses[respConflict] = problemResp("Version mismatch, duplicate name or unique index clash.", nil)
	c.Responses[respTooLarge] = problemResp("The request body is larger than the server's limit (3 MiB by default).", nil)
	c.Responses[respUnsupported] = problemResp("The Content-Type is not a supported patch media type.", nil)
	c.Responses[respNotReady] = problemResp("Not ready: the model's plugin has not started yet (its indexes are being built), or the server is shutting down.", openapi3.Headers{
		"Retry-After": header("Seconds to wait before retrying.", integer("")),
	})
	c.Responses[respDefaultProblem] = problemResp("Any other error.", nil)

	// Security schemes (docs/api.md).
	c.SecuritySchemes[securityBasic] = &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
		Type: "http", Scheme: "basic", Description: "A user's name and password.",
	}}
	c.SecuritySchemes[securityBearer] = &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
		Type: "http", Scheme: "bearer", Description: "A personal access token.",
	}}
	return c
}

// withProblems adds the problem responses for the given statuses and the
// default one.
func withProblems(r *openapi3.Responses, c *openapi3.Components, statuses ...int) *openapi3.Responses {
	for _, s := range statuses {
		name, ok := problemStatus[s]
		if !ok {
			panic(fmt.Sprintf("openapi: no problem response for status %d", s))
		}
		r.Set(fmt.Sprint(s), responseRef(name, c))
	}
	r.Set("default", responseRef(respDefaultProblem, c))
	return r
}

// ---- core endpoints ----

const coreTag = "Server"

func addCoreEndpoints(doc *openapi3.T) {
	c := doc.Components
	public := &openapi3.SecurityRequirements{}
	health := openapi3.NewObjectSchema()
	health.Properties = openapi3.Schemas{"status": openapi3.NewStringSchema().WithEnum("ok").NewRef()}
	health.Required = []string{"status"}

	doc.Paths.Set("/healthz", &openapi3.PathItem{Get: &openapi3.Operation{
		Tags: []string{coreTag}, OperationID: opHealthz, Summary: "Liveness: the server is up.", Security: public,
		Responses: withProblems(openapi3.NewResponses(openapi3.WithStatus(200, response("Alive.", jsonContent(health.NewRef())))), c),
	}})
	doc.Paths.Set("/readyz", &openapi3.PathItem{Get: &openapi3.Operation{
		Tags: []string{coreTag}, OperationID: opReadyz, Summary: "Readiness: every enabled plugin has started.", Security: public,
		Responses: withProblems(openapi3.NewResponses(openapi3.WithStatus(200, response("Ready.", jsonContent(health.NewRef())))), c, 503),
	}})
	doc.Paths.Set("/openapi.json", &openapi3.PathItem{Get: &openapi3.Operation{
		Tags: []string{coreTag}, OperationID: opOpenAPI, Summary: "This document: every served API, core and plugins.", Security: public,
		Responses: withProblems(openapi3.NewResponses(openapi3.WithStatus(200,
			response("An OpenAPI 3 document.", jsonContent(freeObject("An OpenAPI 3 document.").NewRef())))), c),
	}})
	doc.Tags = append(doc.Tags, &openapi3.Tag{Name: coreTag, Description: "Health, readiness and this document; public."})
}

// ---- one model ----

func addModel(doc *openapi3.T, m *model.Model, n modelNames, schemas map[string]*openapi3.SchemaRef) error {
	c := doc.Components
	obj, err := objectSchema(m, n, schemas, c)
	if err != nil {
		return err
	}
	c.Schemas[n.ident] = obj
	c.Schemas[n.list] = listSchema(m, n, c).NewRef()

	base := basePath(m)
	objRef := &openapi3.SchemaRef{Ref: "#/components/schemas/" + n.ident, Value: obj.Value}
	listRef := schemaRef(n.list, c)
	tags := []string{n.tag}
	body := func(desc string) *openapi3.RequestBodyRef {
		return &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithDescription(desc).WithRequired(true).WithContent(jsonContent(objRef))}
	}
	ok := func(desc string) *openapi3.ResponseRef { return response(desc, jsonContent(objRef)) }
	selectors := func() openapi3.Parameters {
		return openapi3.Parameters{paramRef(paramLabelSelector, c), {Value: fieldSelector(m)}}
	}
	upgrade := &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(
		"Switching Protocols: a WebSocket upgrade starts a watch stream of JSON text frames " +
			"`{\"type\":\"ADDED\"|\"MODIFIED\"|\"DELETED\",\"object\":{...}}`.")}

	listParams := openapi3.Parameters{
		paramRef(paramPage, c), paramRef(paramSize, c), {Value: sortParam(m)},
	}
	listParams = append(listParams, selectors()...)
	listParams = append(listParams, paramRef(paramWatch, c), paramRef(paramSendInitialEvents, c))
	listResponses := openapi3.NewResponses(
		openapi3.WithStatus(200, response("One page of "+m.Kind+" objects.", jsonContent(listRef))),
		openapi3.WithStatus(101, upgrade),
	)
	created := ok("Created: the stored object.")
	created.Value.Headers = openapi3.Headers{"Location": header("The URL of the new object: "+base+"/<name>.",
		openapi3.NewStringSchema().WithFormat("uri-reference").NewRef())}

	doc.Paths.Set(base, &openapi3.PathItem{
		Get: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["list"], Summary: "List " + m.Kind + " objects, or watch them.",
			Description: "Sorting always ends with metadata.creationTimestamp,desc then metadata.name,asc. " +
				"With watch=true (and a WebSocket upgrade) the response is a stream of change events instead.",
			Parameters: listParams,
			Responses:  withProblems(listResponses, c, 400, 401, 403, 404, 503),
		},
		Post: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["create"], Summary: "Create a " + m.Kind + ".",
			Description: "metadata.name, or generateName, names the object; a taken name is a 409. A status in the body is dropped: status is written through the status subresource.",
			RequestBody: body("The object to create."),
			Responses:   withProblems(openapi3.NewResponses(openapi3.WithStatus(201, created)), c, 400, 401, 403, 404, 409, 413, 503),
		},
		Delete: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["deleteCollection"], Summary: "Delete every " + m.Kind + " the selectors match.",
			Description: "Deletion is soft: each object gets a deletionTimestamp and stays readable while it has finalizers.",
			Parameters:  selectors(),
			Responses: withProblems(openapi3.NewResponses(openapi3.WithStatus(200,
				response("The objects marked deleted.", jsonContent(listRef)))), c, 400, 401, 403, 404, 503),
		},
	})
	doc.Paths.Set(base+"/{"+paramName+"}", &openapi3.PathItem{
		Parameters: openapi3.Parameters{paramRef(paramName, c)},
		Get: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["get"], Summary: "Read a " + m.Kind + ", or watch it.",
			Description: "With a WebSocket upgrade the response is a stream of the object's change events instead.",
			Responses: withProblems(openapi3.NewResponses(
				openapi3.WithStatus(200, ok("The object.")),
				openapi3.WithStatus(101, upgrade),
			), c, 400, 401, 403, 404, 503),
		},
		Put: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["update"], Summary: "Replace a " + m.Kind + ".",
			Description: "The body must carry the current metadata.version (else 409) and metadata.name equal to the path's name. " +
				"The stored status is kept: a change to it is ignored (see the status subresource).",
			RequestBody: body("The whole object."),
			Responses:   withProblems(openapi3.NewResponses(openapi3.WithStatus(200, ok("The stored object."))), c, 400, 401, 403, 404, 409, 413, 503),
		},
		Patch: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["patch"], Summary: "Patch a " + m.Kind + ".",
			Description: "Any other Content-Type is a 415. The stored version is the precondition unless the patch sets metadata.version. " +
				"The stored status is kept: a change to it is ignored (see the status subresource).",
			RequestBody: &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
				"application/json-patch+json":  openapi3.NewMediaType().WithSchemaRef(schemaRef(schemaJSONPatch, c)),
				"application/merge-patch+json": openapi3.NewMediaType().WithSchema(freeObject("An RFC 7386 merge patch: the fields to set; null removes a field.")),
			})},
			Responses: withProblems(openapi3.NewResponses(openapi3.WithStatus(200, ok("The stored object."))), c, 400, 401, 403, 404, 409, 413, 415, 503),
		},
		Delete: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["delete"], Summary: "Delete a " + m.Kind + ".",
			Description: "Deletion is soft: the object gets a deletionTimestamp (once) and stays readable while it has finalizers; " +
				"with none left it is removed for good.",
			Responses: withProblems(openapi3.NewResponses(openapi3.WithStatus(200, ok("The object, carrying its deletionTimestamp."))), c, 401, 403, 404, 503),
		},
	})
	doc.Paths.Set(base+"/{"+paramName+"}/status", &openapi3.PathItem{
		Parameters: openapi3.Parameters{paramRef(paramName, c)},
		Put: &openapi3.Operation{
			Tags: tags, OperationID: n.opIDs["updateStatus"], Summary: "Replace the status of a " + m.Kind + ".",
			Description: "Only status is taken from the body: spec, labels, annotations and finalizers stay as stored. " +
				"The body must carry the current metadata.version (else 409).",
			RequestBody: body("The object with its new status."),
			Responses:   withProblems(openapi3.NewResponses(openapi3.WithStatus(200, ok("The stored object."))), c, 400, 401, 403, 404, 409, 413, 503),
		},
	})
	doc.Tags = append(doc.Tags, &openapi3.Tag{Name: n.tag, Description: m.Kind + " objects (" + m.APIVersion() + ") at " + base + "."})
	return nil
}

// objectMeta is the ObjectMeta schema of schemas/base.yaml, the one the
// generator puts into every model, so that the served document and the
// generated ones describe metadata alike.
func objectMeta() (*openapi3.Schema, error) {
	base, err := openapi3.NewLoader().LoadFromData(schemas.Base)
	if err != nil {
		return nil, fmt.Errorf("openapi: load schemas/base.yaml: %w", err)
	}
	meta := base.Components.Schemas[schemaObjectMeta]
	if meta == nil || meta.Value == nil {
		return nil, fmt.Errorf("openapi: schemas/base.yaml has no %s schema", schemaObjectMeta)
	}
	return meta.Value, nil
}

// sameSchema reports whether a and b encode to the same JSON.
func sameSchema(a, b *openapi3.Schema) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// objectSchema is the caller's schema for m, else the model's own
// (model.Model.Schema), else the envelope with free-form spec and status.
func objectSchema(m *model.Model, n modelNames, schemas map[string]*openapi3.SchemaRef, c *openapi3.Components) (*openapi3.SchemaRef, error) {
	given, ok := schemas[m.GVK().String()]
	if !ok {
		given, ok = schemas[m.Kind]
	}
	if ok {
		switch {
		case given == nil || (given.Ref == "" && given.Value == nil):
			return nil, fmt.Errorf("openapi: the schema given for %s is empty", m.GVK())
		case given.Ref == "#/components/schemas/"+n.ident:
			return nil, fmt.Errorf("openapi: the schema given for %s refers to itself (%s)", m.GVK(), given.Ref)
		case given.Ref != "":
			return given, nil
		}
		return &openapi3.SchemaRef{Value: given.Value}, nil
	}
	if len(m.Schema) > 0 {
		var own openapi3.Schema
		if err := json.Unmarshal(m.Schema, &own); err != nil {
			return nil, fmt.Errorf("openapi: the schema of model %s: %w", m.GVK(), err)
		}
		// The generator inlines metadata into every model's schema; the
		// document describes it once, as the shared component.
		if md := own.Properties["metadata"]; md != nil && md.Ref == "" && sameSchema(md.Value, c.Schemas[schemaObjectMeta].Value) {
			own.Properties["metadata"] = schemaRef(schemaObjectMeta, c)
		}
		return own.NewRef(), nil
	}
	s := openapi3.NewObjectSchema().WithAnyAdditionalProperties()
	s.Description = fmt.Sprintf("A %s object (apiVersion %s). The model publishes no field schema: spec and status are free-form, "+
		"and kinds may carry other top-level fields.", m.Kind, m.APIVersion())
	s.Properties = openapi3.Schemas{
		"apiVersion": openapi3.NewStringSchema().WithEnum(m.APIVersion()).NewRef(),
		"kind":       openapi3.NewStringSchema().WithEnum(m.Kind).NewRef(),
		"metadata":   schemaRef(schemaObjectMeta, c),
		"spec":       freeObject("The desired state.").NewRef(),
		"status":     freeObject("The observed state; written through the status subresource.").NewRef(),
	}
	s.Required = []string{"apiVersion", "kind", "metadata"}
	return s.NewRef(), nil
}

// listSchema is the nine-field ListResult of m (docs/api.md).
func listSchema(m *model.Model, n modelNames, c *openapi3.Components) *openapi3.Schema {
	items := openapi3.NewArraySchema()
	items.Items = &openapi3.SchemaRef{Ref: "#/components/schemas/" + n.ident, Value: c.Schemas[n.ident].Value}
	items.Description = "The objects of this page; never null."
	s := openapi3.NewObjectSchema()
	s.Description = "One page of " + m.Kind + " objects."
	s.Properties = openapi3.Schemas{
		"page":        integer("The normalised page number (1-based)."),
		"size":        integer("The normalised page size; 0 means every object."),
		"total":       int64s("How many objects match, over all pages."),
		"items":       items.NewRef(),
		"first":       boolean("!hasPrevious."),
		"last":        boolean("!hasNext."),
		"hasNext":     boolean("page < totalPages."),
		"hasPrevious": boolean("page > 1."),
		"totalPages":  int64s("1 when size is 0, else ceil(total/size) (0 when total is 0)."),
	}
	s.Required = []string{"page", "size", "total", "items", "first", "last", "hasNext", "hasPrevious", "totalPages"}
	return s
}

// indexNames lists the indexes sort and fieldSelector may name: every
// index except the labels index, which labelSelector covers.
func indexNames(m *model.Model) []string {
	var out []string
	for _, ix := range m.AllIndexes() {
		if ix.Name != model.IndexLabels {
			out = append(out, fmt.Sprintf("`%s` (%s)", ix.Name, ix.Type))
		}
	}
	return out
}

func sortParam(m *model.Model) *openapi3.Parameter {
	explode := true
	p := openapi3.NewQueryParameter("sort").
		WithDescription("Sort order, repeatable, each `<index>[,asc|desc]`. Indexes of " + m.Kind + ": " +
			strings.Join(indexNames(m), ", ") + ". The order always ends with metadata.creationTimestamp,desc then metadata.name,asc; " +
			"absent values sort first ascending and last descending. Any other field is a 400.").
		WithSchema(openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()))
	p.Style, p.Explode = openapi3.SerializationForm, &explode
	return p
}

func fieldSelector(m *model.Model) *openapi3.Parameter {
	explode := true
	p := openapi3.NewQueryParameter("fieldSelector").
		WithDescription("Field terms, one per value, all ANDed: `f=v`, `f!=v` (objects with no value are excluded), `f=(v1,v2)`, " +
			"and on integer, number, string and date-time indexes the ranges `f<v`, `f<=v`, `f>v`, `f>=v` (in the index's type's order); " +
			"`name` means metadata.name. Indexed fields of " + m.Kind + ": " + strings.Join(indexNames(m), ", ") +
			". Any other field, or a value not of the index's type, is a 400.").
		WithSchema(openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema()))
	p.Style, p.Explode = openapi3.SerializationForm, &explode
	return p
}

// checkOperationIDs reports two operations whose ids are the same as
// OperationIDKey sees them, naming both: client generators would give
// them one name (oapi-codegen makes CreateUser of createUser and
// CreateUser alike).
func checkOperationIDs(doc *openapi3.T) error {
	seen := map[string]string{}
	for _, path := range sortedKeys(doc.Paths.Map()) {
		ops := doc.Paths.Value(path).Operations()
		for _, method := range sortedKeys(ops) {
			id := ops[method].OperationID
			if id == "" {
				continue
			}
			where := fmt.Sprintf("%s %s (%q)", method, path, id)
			if prev, ok := seen[OperationIDKey(id)]; ok {
				return fmt.Errorf("openapi: operations %s and %s have one operation id to client generators, which ignore case and punctuation", prev, where)
			}
			seen[OperationIDKey(id)] = where
		}
	}
	return nil
}

// OperationIDKey is what a client generator keeps of an operation id when
// it names a method: its letters and digits, case folded. Two ids with the
// same key would give one name twice.
func OperationIDKey(id string) string {
	var b strings.Builder
	for _, r := range id {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// OperationIDs maps the OperationIDKey of every operation id of doc to
// where it is used ("GET /path (\"id\")").
func OperationIDs(doc *openapi3.T) map[string]string {
	out := map[string]string{}
	if doc.Paths == nil {
		return out
	}
	for _, path := range sortedKeys(doc.Paths.Map()) {
		ops := doc.Paths.Value(path).Operations()
		for _, method := range sortedKeys(ops) {
			if id := ops[method].OperationID; id != "" {
				out[OperationIDKey(id)] = fmt.Sprintf("%s %s (%q)", method, path, id)
			}
		}
	}
	return out
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
