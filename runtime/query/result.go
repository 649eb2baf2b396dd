package query

// ListResult is the list wire shape shared with Halo: exactly these nine
// fields. Build it with NewListResult so the derived fields agree.
type ListResult[T any] struct {
	Page        int   `json:"page"`
	Size        int   `json:"size"`
	Total       int64 `json:"total"`
	Items       []T   `json:"items"`
	First       bool  `json:"first"`
	Last        bool  `json:"last"`
	HasNext     bool  `json:"hasNext"`
	HasPrevious bool  `json:"hasPrevious"`
	TotalPages  int64 `json:"totalPages"`
}

// NewListResult derives the paging flags: totalPages is 1 when size is 0
// and ceil(total/size) otherwise (0 when total is 0); items is never nil.
// A page below 1 is taken as 1 and a negative size as 0, as Halo does.
func NewListResult[T any](page, size int, total int64, items []T) ListResult[T] {
	if items == nil {
		items = []T{}
	}
	page = max(page, 1)
	size = max(size, 0)
	var pages int64
	switch {
	case size == 0:
		pages = 1
	case total > 0:
		pages = (total-1)/int64(size) + 1 // ceil, without overflow for a huge size
	}
	r := ListResult[T]{Page: page, Size: size, Total: total, Items: items, TotalPages: pages}
	r.HasNext = int64(page) < pages
	r.HasPrevious = page > 1
	r.First = !r.HasPrevious
	r.Last = !r.HasNext
	return r
}
