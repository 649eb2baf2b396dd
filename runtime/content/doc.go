// Package content is the built-in content module (docs/api.md): the Post
// model in group content.<brand> and the user-centre API under
// uc.api.content.<brand>, which gives the built-in roles post-contributor,
// post-author and post-editor their meaning.
//
// Post editors manage every post through the generic CRUD API
// (/apis/content.<brand>/v1alpha1/posts). Contributors and authors use the
// user-centre API (/apis/uc.api.content.<brand>/v1alpha1/posts), which
// acts only on the caller's own posts (spec.owner): others' posts are 404
// there, as if they did not exist. Creating a post there makes a draft
// owned by the caller; only publish and unpublish change whether it is
// published, and access control lets only authors reach those. A caller
// who may not publish may not change a published post either.
//
// The package registers the plugin "content" from init, so a server binary
// that imports it serves the module.
package content
