package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/etcdtest"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// On replicas of a shared store a controller runs on one replica at a
// time, and another takes over when the leader stops.
func TestControllerRunsOnOneReplicaAndFailsOver(t *testing.T) {
	c := etcdtest.Start(t, 1)
	m := storetest.PersonModel()
	const n = 3
	stores := make([]*store.Store, n)
	for i := range stores {
		stores[i] = storetest.Open(t, store.Options{Etcd: &store.EtcdOptions{Endpoints: c.Endpoints(), Prefix: "/ctl/"}}, m)
	}
	var mu sync.Mutex
	by := map[string]map[int]bool{} // object -> replicas that reconciled it
	cancels := make([]context.CancelFunc, n)
	done := make([]chan struct{}, n)
	for i, st := range stores {
		ctl := controller.New(controller.Options{Name: "lead-test", Store: st, Model: m,
			Reconciler: controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
				mu.Lock()
				if by[req.Name] == nil {
					by[req.Name] = map[int]bool{}
				}
				by[req.Name][i] = true
				mu.Unlock()
				return controller.Result{}, nil
			})})
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i], done[i] = cancel, make(chan struct{})
		go func() { defer close(done[i]); ctl.Start(ctx) }()
	}
	t.Cleanup(func() {
		for i := range cancels {
			cancels[i]()
			<-done[i]
		}
	})
	leader := func(name string) int {
		deadline := time.Now().Add(wait)
		for time.Now().Before(deadline) {
			mu.Lock()
			got := by[name]
			mu.Unlock()
			if len(got) > 1 {
				t.Fatalf("%s reconciled on replicas %v, want one", name, got)
			}
			for r := range got {
				return r
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s never reconciled", name)
		return -1
	}
	for i := 0; i < 5; i++ {
		if _, err := stores[i%n].Create(context.Background(), m, storetest.NewPerson(fmt.Sprintf("a%d", i), Spec{Name: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	first := leader("a0")
	for i := 1; i < 5; i++ {
		if r := leader(fmt.Sprintf("a%d", i)); r != first {
			t.Fatalf("a%d reconciled on replica %d, a0 on %d: two leaders", i, r, first)
		}
	}
	// The leader stops; another replica takes over and reconciles what
	// is written next.
	cancels[first]()
	<-done[first]
	start := time.Now()
	other := (first + 1) % n
	if _, err := stores[other].Create(context.Background(), m, storetest.NewPerson("after", Spec{Name: "x"})); err != nil {
		t.Fatal(err)
	}
	next := leader("after")
	if next == first {
		t.Fatalf("the stopped replica %d reconciled", first)
	}
	t.Logf("replica %d took over from %d in %v", next, first, time.Since(start))
}
