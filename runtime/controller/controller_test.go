package controller_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
	"github.com/svcrun/svc/runtime/watch"
)

// wait bounds every wait for something that should happen soon; generous,
// because a loaded 2-core machine can stall goroutines for a long time.
const wait = 20 * time.Second

type Spec = storetest.PersonSpec

// recorder counts reconciles per name.
type recorder struct {
	mu    sync.Mutex
	calls map[string]int
}

func newRecorder() *recorder { return &recorder{calls: map[string]int{}} }

func (r *recorder) add(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[name]++
	return r.calls[name]
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

// logBuffer collects log output from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Contains(b.buf.String(), s)
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// env is a memory store with the Person model.
type env struct {
	st *store.Store
	m  *model.Model
}

func newEnv(t *testing.T, opts store.Options) *env {
	t.Helper()
	m := storetest.PersonModel()
	return &env{st: storetest.Open(t, opts, m), m: m}
}

func (e *env) create(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := e.st.Create(context.Background(), e.m, storetest.NewPerson(n, Spec{Name: n})); err != nil {
			t.Fatalf("create %s: %v", n, err)
		}
	}
}

func (e *env) controller(r controller.Reconciler, mod ...func(*controller.Options)) *controller.Controller {
	opts := controller.Options{Name: "test", Store: e.st, Model: e.m, Reconciler: r, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}
	for _, f := range mod {
		f(&opts)
	}
	return controller.New(opts)
}

// start runs c until the test ends, then checks that Start returns nil.
func start(t *testing.T, c *controller.Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Start returned %v after cancel, want nil", err)
			}
		case <-time.After(wait):
			t.Errorf("Start did not return within %v of cancel", wait)
		}
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", wait, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stays checks that cond holds for a while. It can only miss a bug on a
// slow machine, never report one that is not there.
func stays(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 50 {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestInitialReconcileAndEvents(t *testing.T) {
	e := newEnv(t, store.Options{})
	e.create(t, "ann", "bob", "cat")
	rec := newRecorder()
	var missing sync.Map
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		if _, err := e.st.Get(ctx, e.m, req.Name); errors.Is(err, store.ErrNotFound) {
			missing.Store(req.Name, true)
		}
		rec.add(req.Name)
		return controller.Result{}, nil
	}))
	start(t, c)
	eventually(t, "the initial reconcile of ann, bob and cat", func() bool {
		return rec.count("ann") >= 1 && rec.count("bob") >= 1 && rec.count("cat") >= 1
	})

	t.Run("create", func(t *testing.T) {
		e.create(t, "dan")
		eventually(t, "dan reconciled", func() bool { return rec.count("dan") >= 1 })
	})
	t.Run("update", func(t *testing.T) {
		before := rec.count("ann")
		cur, err := e.st.Get(context.Background(), e.m, "ann")
		if err != nil {
			t.Fatal(err)
		}
		p := storetest.NewPerson("ann", Spec{Name: "Ann Changed"})
		p.Metadata.SetVersion(cur.Version)
		if _, err := e.st.Update(context.Background(), e.m, p); err != nil {
			t.Fatal(err)
		}
		eventually(t, "ann reconciled after its update", func() bool { return rec.count("ann") > before })
	})
	t.Run("delete", func(t *testing.T) {
		before := rec.count("bob")
		if _, err := e.st.Delete(context.Background(), e.m, "bob"); err != nil {
			t.Fatal(err)
		}
		eventually(t, "bob reconciled after its deletion", func() bool { return rec.count("bob") > before })
		eventually(t, "bob's reconcile not finding it", func() bool { _, ok := missing.Load("bob"); return ok })
	})
}

func TestEnqueue(t *testing.T) {
	e := newEnv(t, store.Options{})
	rec := newRecorder()
	var c *controller.Controller
	c = e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		if rec.add(req.Name) == 1 && req.Name == "early" {
			c.Enqueue("from-reconciler")
		}
		return controller.Result{}, nil
	}))
	c.Enqueue("early") // before Start: kept until started
	start(t, c)
	eventually(t, "early and from-reconciler reconciled", func() bool {
		return rec.count("early") == 1 && rec.count("from-reconciler") == 1
	})
}

func TestErrorIsRetriedWithBackoff(t *testing.T) {
	e := newEnv(t, store.Options{})
	e.create(t, "ann")
	rec := newRecorder()
	var (
		mu    sync.Mutex
		times []time.Time
	)
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		n := rec.add(req.Name)
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if n <= 4 {
			return controller.Result{}, fmt.Errorf("attempt %d: %w", n, errors.New("flaky"))
		}
		return controller.Result{}, nil
	}), func(o *controller.Options) { o.BaseDelay, o.MaxDelay = 10*time.Millisecond, time.Second })
	start(t, c)
	eventually(t, "ann reconciled five times (four failures, then success)", func() bool { return rec.count("ann") >= 5 })
	stays(t, "no reconcile after the success", func() bool { return rec.count("ann") == 5 })
	// Waits before retries 1..4 are at least 10, 20, 40, 80ms.
	mu.Lock()
	defer mu.Unlock()
	for i, want := range []time.Duration{10, 20, 40, 80} {
		if got := times[i+1].Sub(times[i]); got < want*time.Millisecond {
			t.Errorf("retry %d came %v after the failure, want at least %vms", i+1, got, want)
		}
	}
}

func TestTerminalErrorIsNotRetried(t *testing.T) {
	e := newEnv(t, store.Options{})
	e.create(t, "ann")
	rec := newRecorder()
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		rec.add(req.Name)
		return controller.Result{}, fmt.Errorf("reconcile %s: %w", req.Name, controller.TerminalError(errors.New("malformed")))
	}))
	start(t, c)
	eventually(t, "ann reconciled", func() bool { return rec.count("ann") >= 1 })
	stays(t, "a single reconcile of ann", func() bool { return rec.count("ann") == 1 })
	// The next change brings it back.
	c.Enqueue("ann")
	eventually(t, "ann reconciled after Enqueue", func() bool { return rec.count("ann") == 2 })
}

func TestTerminalErrorDetection(t *testing.T) {
	base := errors.New("bad")
	term := fmt.Errorf("wrapped: %w", controller.TerminalError(base))
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"terminal", controller.TerminalError(base), true},
		{"wrapped terminal", term, true},
		{"ordinary", base, false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := controller.IsTerminal(c.err); got != c.want {
				t.Errorf("IsTerminal(%v) = %v, want %v", c.err, got, c.want)
			}
			if got := errors.Is(c.err, controller.TerminalError(errors.New("any"))); got != c.want {
				t.Errorf("errors.Is(%v, TerminalError(…)) = %v, want %v", c.err, got, c.want)
			}
		})
	}
	if !errors.Is(term, base) {
		t.Error("a terminal error does not unwrap to its cause")
	}
	if controller.TerminalError(nil) != nil {
		t.Error("TerminalError(nil) != nil")
	}
}

func TestRequeueAfter(t *testing.T) {
	e := newEnv(t, store.Options{})
	e.create(t, "ann")
	rec := newRecorder()
	var first time.Time
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		n := rec.add(req.Name)
		if n == 1 {
			first = time.Now()
		}
		if n < 3 {
			return controller.Result{RequeueAfter: 30 * time.Millisecond}, nil
		}
		return controller.Result{}, nil
	}))
	start(t, c)
	eventually(t, "ann reconciled three times", func() bool { return rec.count("ann") >= 3 })
	if el := time.Since(first); el < 60*time.Millisecond {
		t.Errorf("three reconciles took %v, want at least two RequeueAfter delays of 30ms", el)
	}
	stays(t, "no reconcile after a zero Result", func() bool { return rec.count("ann") == 3 })
}

func TestPanicIsRetried(t *testing.T) {
	e := newEnv(t, store.Options{})
	e.create(t, "ann")
	rec := newRecorder()
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		if rec.add(req.Name) == 1 {
			panic("boom")
		}
		return controller.Result{}, nil
	}))
	start(t, c)
	eventually(t, "ann reconciled again after a panic", func() bool { return rec.count("ann") >= 2 })
}

func TestWorkersNeverShareAName(t *testing.T) {
	e := newEnv(t, store.Options{})
	var busy sync.Map
	var overlaps, calls atomic.Int64
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		if _, loaded := busy.LoadOrStore(req.Name, true); loaded {
			overlaps.Add(1)
		}
		time.Sleep(50 * time.Microsecond)
		busy.Delete(req.Name)
		calls.Add(1)
		return controller.Result{}, nil
	}), func(o *controller.Options) { o.Workers = 4 })
	start(t, c)
	for i := range 4000 {
		c.Enqueue(fmt.Sprint("n", i%5))
	}
	c.Enqueue("last")
	eventually(t, "some reconciles", func() bool { return calls.Load() > 5 })
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d reconciles overlapped another of the same name", n)
	}
}

func TestResubscribeAfterSlowDrop(t *testing.T) {
	// A one-event buffer and a watch held up in the hook make the store
	// drop the controller's subscription as too slow.
	e := newEnv(t, store.Options{WatchBuffer: 1})
	rec := newRecorder()
	var logs logBuffer
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		rec.add(req.Name)
		return controller.Result{}, nil
	}), func(o *controller.Options) { o.Logger = logs.logger() })
	release := make(chan struct{})
	held := make(chan struct{})
	var annEvents atomic.Int64
	var once sync.Once
	controller.SetEventHook(c, func(ev store.Event) {
		if ev.Object.Name == "ann" && ev.Type == watch.Added {
			annEvents.Add(1)
		}
		once.Do(func() { close(held); <-release })
	})
	start(t, c)
	e.create(t, "ann")
	select {
	case <-held:
	case <-time.After(wait):
		t.Fatal("the controller never saw ann's event")
	}
	e.create(t, "bob", "cat", "dan", "eve") // overflow the held subscription
	close(release)
	eventually(t, "every object reconciled after the resubscription", func() bool {
		for _, n := range []string{"ann", "bob", "cat", "dan", "eve"} {
			if rec.count(n) == 0 {
				return false
			}
		}
		return true
	})
	eventually(t, "ann's initial event again on the new subscription", func() bool { return annEvents.Load() >= 2 })
	if !logs.contains("resubscribing") {
		t.Error("the slow drop was not logged")
	}
	e.create(t, "fay")
	eventually(t, "fay reconciled through the new subscription", func() bool { return rec.count("fay") >= 1 })
}

func TestModelUnregisteredLeavesControllerIdle(t *testing.T) {
	e := newEnv(t, store.Options{})
	e.create(t, "ann")
	rec := newRecorder()
	var logs logBuffer
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		rec.add(req.Name)
		return controller.Result{}, nil
	}), func(o *controller.Options) { o.Logger = logs.logger() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	eventually(t, "ann reconciled", func() bool { return rec.count("ann") >= 1 })
	if err := e.st.Unregister(context.Background(), e.m); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the controller to log that it is idle", func() bool { return logs.contains("controller idle until stopped") })
	select {
	case err := <-done:
		t.Fatalf("Start returned %v before its context ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Start returned %v, want nil", err)
		}
	case <-time.After(wait):
		t.Fatal("Start did not return after cancel")
	}
}

func TestWaitsForModelToBeReady(t *testing.T) {
	m := storetest.PersonModel()
	st := storetest.Open(t, store.Options{})
	if err := st.Reserve(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	e := &env{st: st, m: m}
	rec := newRecorder()
	c := e.controller(controller.Func(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		rec.add(req.Name)
		return controller.Result{}, nil
	}))
	start(t, c) // the watch fails with ErrNotReady and is retried
	time.Sleep(10 * time.Millisecond)
	if err := st.Register(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	e.create(t, "ann")
	eventually(t, "ann reconciled once the model is ready", func() bool { return rec.count("ann") >= 1 })
}

func TestStartErrors(t *testing.T) {
	e := newEnv(t, store.Options{})
	nop := controller.Func(func(context.Context, controller.Request) (controller.Result, error) { return controller.Result{}, nil })
	cases := []struct {
		name string
		opts controller.Options
	}{
		{"no store", controller.Options{Model: e.m, Reconciler: nop}},
		{"no model", controller.Options{Store: e.st, Reconciler: nop}},
		{"no reconciler", controller.Options{Store: e.st, Model: e.m}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := controller.New(tc.opts).Start(context.Background()); err == nil {
				t.Fatal("Start = nil, want an error")
			}
		})
	}
	t.Run("twice", func(t *testing.T) {
		c := e.controller(nop)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.Start(ctx); err != nil {
			t.Fatalf("first Start = %v, want nil", err)
		}
		if err := c.Start(ctx); err == nil {
			t.Fatal("second Start = nil, want an error")
		}
	})
}

func TestIgnoreNotFound(t *testing.T) {
	other := errors.New("disk full")
	for _, c := range []struct{ in, want error }{
		{nil, nil},
		{fmt.Errorf("get ann: %w", store.ErrNotFound), nil},
		{other, other},
	} {
		if got := controller.IgnoreNotFound(c.in); got != c.want {
			t.Errorf("IgnoreNotFound(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
