package content

import (
	"encoding/json"
)

// OpenAPI implements plugin.Documented: the user-centre routes under
// brand, for /openapi.json (the generic Post API is documented from the
// model).
func (Plugin) OpenAPI(brand string) []byte {
	base := "/apis/" + UserCentreGroup(brand) + "/" + Version + "/posts"
	post := map[string]any{"$ref": "#/components/schemas/UserCentrePost"}
	name := []any{map[string]any{"name": "name", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}}
	obj := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": post}}}
	}
	problem := map[string]any{"description": "A problem (RFC 7807).", "content": map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"type": "object"}}}}
	errs := func(codes ...string) map[string]any {
		out := map[string]any{}
		for _, c := range codes {
			out[c] = problem
		}
		return out
	}
	with := func(m map[string]any, codes ...string) map[string]any {
		for k, v := range errs(codes...) {
			m[k] = v
		}
		return m
	}
	op := func(id, summary string, params []any, body bool, responses map[string]any) map[string]any {
		o := map[string]any{"operationId": id, "summary": summary, "tags": []any{"user centre: posts"}, "responses": responses}
		if params != nil {
			o["parameters"] = params
		}
		if body {
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": post}}}
		}
		return o
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "content module: user centre", "version": Version},
		"paths": map[string]any{
			base: map[string]any{
				"get": op("listMyPosts", "List the caller's posts (page, size, sort, labelSelector, fieldSelector as in every list).", nil, false,
					with(map[string]any{"200": map[string]any{"description": "A ListResult of the caller's posts.", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}}}, "400", "401", "403")),
				"post": op("createMyPost", "Create a draft owned by the caller.", nil, true, with(map[string]any{"201": obj("The stored post.")}, "400", "401", "403", "409")),
			},
			base + "/{name}": map[string]any{
				"get":    op("getMyPost", "One of the caller's posts.", name, false, with(map[string]any{"200": obj("The post.")}, "401", "403", "404")),
				"put":    op("updateMyPost", "Update one of the caller's posts; owner and publish state are kept.", name, true, with(map[string]any{"200": obj("The stored post.")}, "400", "401", "403", "404", "409")),
				"delete": op("deleteMyPost", "Delete one of the caller's posts.", name, false, with(map[string]any{"200": obj("The post marked deleted.")}, "401", "403", "404")),
			},
			base + "/{name}/publish": map[string]any{
				"put": op("publishMyPost", "Publish one of the caller's posts (post-author).", name, false, with(map[string]any{"200": obj("The published post.")}, "401", "403", "404", "409")),
			},
			base + "/{name}/unpublish": map[string]any{
				"put": op("unpublishMyPost", "Take one of the caller's posts back to draft (post-author).", name, false, with(map[string]any{"200": obj("The post, a draft again.")}, "401", "403", "404", "409")),
			},
		},
		"components": map[string]any{"schemas": map[string]any{
			"UserCentrePost": map[string]any{"type": "object", "description": "A Post object (apiVersion " + Group(brand) + "/" + Version + ", kind Post)."},
		}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err) // maps of strings only
	}
	return b
}
