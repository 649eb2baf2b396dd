package query_test

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/svcrun/svc/runtime/query"
)

// ExampleParse reads a list request's query string. The page is normalised,
// "name" stands for metadata.name, and selector parameters repeat, one term
// per value, all ANDed.
func ExampleParse() {
	v, _ := url.ParseQuery("page=0&size=20&sort=spec.priority,desc&sort=name" +
		"&labelSelector=app%3Dblog&labelSelector=!svc.run/hidden&fieldSelector=spec.phase%3D(Draft,Published)")
	q, err := query.Parse(v)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("page:", q.Page, "size:", q.Size)
	fmt.Println("sort:", q.Sorts)
	fmt.Println("labels:", q.Labels)
	fmt.Println("fields:", q.Fields)

	// A bad parameter is a *ParamError naming it (the HTTP layer answers 400).
	_, err = query.Parse(url.Values{"size": {"-1"}})
	var pe *query.ParamError
	fmt.Println(errors.As(err, &pe), pe.Param, err)

	// The list response derives its paging flags from page, size and total.
	r := query.NewListResult(q.Page, q.Size, 45, []string{"post-1"})
	fmt.Println("totalPages:", r.TotalPages, "hasNext:", r.HasNext, "first:", r.First)
	// Output:
	// page: 1 size: 20
	// sort: [spec.priority,desc metadata.name,asc]
	// labels: app=blog,!svc.run/hidden
	// fields: spec.phase=(Draft,Published)
	// true size invalid size "-1": must not be negative (0 or no size means all objects)
	// totalPages: 3 hasNext: true first: true
}
