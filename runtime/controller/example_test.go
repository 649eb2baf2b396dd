package controller_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// Example registers a reconciler that labels every Person as greeted. It
// is level-based: the label it writes comes back as an event, and the
// second look finds nothing to do.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.Open(store.Options{}) // no Dir: in memory
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	m := storetest.PersonModel()
	if err := st.Register(ctx, m); err != nil {
		fmt.Println(err)
		return
	}
	persons := client.New[*storetest.Person](st, m)
	for _, name := range []string{"ann", "bob"} {
		if _, err := persons.Create(ctx, storetest.NewPerson(name, storetest.PersonSpec{Name: name})); err != nil {
			fmt.Println(err)
			return
		}
	}

	greeted := make(chan string)
	greeter := controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		p, err := persons.Get(ctx, req.Name)
		if errors.Is(err, store.ErrNotFound) {
			return controller.Result{}, nil // deleted: nothing to do
		}
		if err != nil {
			return controller.Result{}, err
		}
		if p.Metadata.Labels["greeted"] == "true" {
			return controller.Result{}, nil
		}
		if p.Metadata.Labels == nil {
			p.Metadata.Labels = map[string]string{}
		}
		p.Metadata.Labels["greeted"] = "true"
		if _, err := persons.Update(ctx, p); err != nil {
			return controller.Result{}, err // a conflict is retried
		}
		select {
		case greeted <- req.Name:
		case <-ctx.Done():
		}
		return controller.Result{}, nil
	})

	c := controller.New(controller.Options{Name: "greeter", Store: st, Model: m, Reconciler: greeter})
	done := make(chan error)
	go func() { done <- c.Start(ctx) }()

	// Existing objects are reconciled once at start, in name order.
	fmt.Println("greeted", <-greeted)
	fmt.Println("greeted", <-greeted)
	// Then every change is.
	if _, err := persons.Create(ctx, storetest.NewPerson("cat", storetest.PersonSpec{Name: "cat"})); err != nil {
		fmt.Println(err)
	}
	fmt.Println("greeted", <-greeted)

	cancel()
	fmt.Println("stopped:", <-done)
	// Output:
	// greeted ann
	// greeted bob
	// greeted cat
	// stopped: <nil>
}
