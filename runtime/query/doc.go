// Package query holds what a list request asks for and what it gets back:
// the parsed list parameters (page, size, sort, label and field selectors),
// their validation with errors that name the parameter at fault, and the
// ListResult wire shape (docs/api.md).
//
// Executing a query against indexes is the store's job (runtime/store,
// list.go); this package only describes it. The selector grammar lives in
// query/selector.
package query
