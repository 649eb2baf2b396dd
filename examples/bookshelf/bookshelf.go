// Package bookshelf is the minimal plugin of docs/plugins.md: books, three
// role templates, a summary route and a controller shelving each book.
package bookshelf

//go:generate go run github.com/svcrun/svc/generator/cmd/svcgen -schema api/openapi.yaml -extensions extensions -out . -plugin bookshelf -register

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/plugin"
)

// Start serves books and their summaries, and shelves each book under its
// author's initial.
func (Plugin) Start(_ context.Context, h *plugin.Host) error {
	books := NewBookClient(h.Store(), BookModel())
	h.Model(books.Model(), RegisterBookRoutes)
	h.Routes("api.library.example.com/v1alpha1", func(r gin.IRouter) {
		r.GET("/books/:name/summary", func(c *gin.Context) {
			if b, err := books.Get(c, c.Param("name")); err != nil {
				h.Fail(c, err) // a missing book is a 404 problem
			} else {
				c.JSON(200, gin.H{"summary": b.Spec.Title + " by " + b.Spec.Author})
			}
		})
	})
	shelve := func(ctx context.Context, req controller.Request) (controller.Result, error) {
		b, err := books.Get(ctx, req.Name)
		if err == nil && b.Status == nil { // neither deleted nor shelved yet
			b.Status = &BookStatus{Shelf: b.Spec.Author[:1]}
			_, err = books.UpdateStatus(ctx, b)
		}
		return controller.Result{}, controller.IgnoreNotFound(err)
	}
	h.Run(controller.New(controller.Options{Name: "bookshelf", Store: h.Store(), Model: books.Model(), Reconciler: controller.Func(shelve)}))
	return nil
}
