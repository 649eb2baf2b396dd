package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/store/storetest"
)

// TestConcurrentReadersOfAStaleViewAllReturn: readers that find the view
// behind the log race to copy a fresh one; the losers must not wait for a
// write that may never come.
func TestConcurrentReadersOfAStaleViewAllReturn(t *testing.T) {
	m := storetest.PersonModel()
	s := storetest.New(t, m)
	for round := range 200 {
		if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("p%03d", round), Spec{Name: "x", Age: storetest.Int64(int64(round % 100))})); err != nil {
			t.Fatal(err)
		}
		q := mustQuery(t, "sort=spec.age,desc&size=5")
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 8 {
			wg.Go(func() {
				<-start
				if _, err := s.List(ctx, m, q); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: a List on an idle store did not return", round)
		}
	}
}
