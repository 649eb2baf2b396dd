package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder notes the order in which runnables start and stop.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) note(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// part starts (noting it), waits to be stopped, and stops with err.
func (r *recorder) part(name string, err error) Runnable {
	return RunnableFunc(func(ctx context.Context) error {
		r.note("start " + name)
		<-ctx.Done()
		r.note("stop " + name)
		return err
	})
}

// stops are the stop events, in order; runnables start in goroutines, so
// only their stops are ordered.
func stops(events []string) []string {
	var out []string
	for _, e := range events {
		if strings.HasPrefix(e, "stop") {
			out = append(out, e)
		}
	}
	return out
}

func TestGroupStopsInReverseOrder(t *testing.T) {
	var rec recorder
	g := newGroup(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	for _, name := range []string{"store", "access control", "plugins", "serve"} {
		var err error
		if name == "plugins" {
			err = errors.New("controller left behind")
		}
		if err := g.start(ctx, name, rec.part(name, err)); err != nil {
			t.Fatal(err)
		}
	}
	// The caller's context does not stop the parts: only stop does.
	cancel()
	time.Sleep(20 * time.Millisecond)
	for _, e := range rec.get() {
		if strings.HasPrefix(e, "stop") {
			t.Fatalf("cancelling the start context stopped a part: %v", rec.get())
		}
	}
	err := g.stop()
	if got, want := stops(rec.get()), []string{"stop serve", "stop plugins", "stop access control", "stop store"}; !slices.Equal(got, want) {
		t.Errorf("stopped %v, want %v", got, want)
	}
	if err == nil || err.Error() != "plugins: controller left behind" {
		t.Errorf("stop = %v, want the plugins' error, named", err)
	}
	if again := g.stop(); again != err {
		t.Errorf("second stop = %v, want the first's %v", again, err)
	}
	if err := g.start(context.Background(), "late", rec.part("late", nil)); err == nil {
		t.Error("a stopped group started a part")
	}
}

func TestGroupFirstFailureStopsTheRest(t *testing.T) {
	var rec recorder
	g := newGroup(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	if err := g.start(ctx, "store", rec.part("store", nil)); err != nil {
		t.Fatal(err)
	}
	if err := g.start(ctx, "access control", rec.part("access control", nil)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("listener closed")
	if err := g.start(ctx, "serve", RunnableFunc(func(context.Context) error { return boom })); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.failed:
	case <-time.After(10 * time.Second):
		t.Fatal("a failed part did not mark the group failed")
	}
	err := g.stop() // waits for the stop the failure began
	if !errors.Is(err, boom) {
		t.Errorf("stop = %v, want it to carry %v", err, boom)
	}
	if got, want := stops(rec.get()), []string{"stop access control", "stop store"}; !slices.Equal(got, want) {
		t.Errorf("stopped %v, want %v", got, want)
	}
	if err := g.start(ctx, "plugins", rec.part("plugins", nil)); err == nil || !errors.Is(err, boom) {
		t.Errorf("start after a failure = %v, want a refusal naming %v", err, boom)
	}
}
