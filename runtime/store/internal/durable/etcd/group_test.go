package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEtcd stands in for sendGroup: it reports each group it is handed
// and holds it until released, as a transaction in flight.
type fakeEtcd struct {
	sent    chan []*queued
	release chan struct{}
	closed  chan struct{} // at the test's end: every transaction returns
}

func newGrouping(t *testing.T) (*Backend, *fakeEtcd) {
	t.Helper()
	f := &fakeEtcd{sent: make(chan []*queued, 1000), release: make(chan struct{}, 1000), closed: make(chan struct{})}
	b := &Backend{prefix: "/t/", opts: Options{MaxValueBytes: DefaultMaxValueBytes},
		queue: make(chan *queued, 1024), stop: make(chan struct{}), stopped: make(chan struct{})}
	var rev atomic.Int64
	b.send = func(qs []*queued) {
		f.sent <- qs
		select {
		case <-f.release:
		case <-f.closed:
		}
		r := rev.Add(1)
		for _, q := range qs {
			q.done <- result{rev: r}
		}
	}
	go b.group()
	t.Cleanup(func() {
		select {
		case <-b.stop:
		default:
			close(b.stop)
		}
		close(f.closed)
		<-b.stopped
	})
	return b, f
}

// write queues a write of name and returns where its answer arrives.
func write(b *Backend, name string) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := b.Write(context.Background(), Write{Table: "t", Name: name, Value: []byte("v")})
		out <- err
	}()
	return out
}

func (f *fakeEtcd) next(t *testing.T) []string {
	t.Helper()
	select {
	case qs := <-f.sent:
		names := make([]string, len(qs))
		for i, q := range qs {
			names[i] = q.w.Name
		}
		return names
	case <-time.After(5 * time.Second):
		t.Fatal("no transaction sent")
		return nil
	}
}

func (f *fakeEtcd) none(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case qs := <-f.sent:
		t.Fatalf("a transaction of %d writes was sent while one was in flight", len(qs))
	case <-time.After(within):
	}
}

// settle gives the writes just started time to reach the loop's group
// (each is sent from its own goroutine).
func settle() { time.Sleep(20 * time.Millisecond) }

func TestGroupWaitsForTheTransactionInFlight(t *testing.T) {
	b, f := newGrouping(t)
	first := write(b, "a")
	if got := f.next(t); len(got) != 1 || got[0] != "a" {
		t.Fatalf("first transaction: %v, want [a]", got)
	}
	var rest []<-chan error
	for i := range 3 {
		rest = append(rest, write(b, fmt.Sprint("b", i)))
	}
	// Three writes are fewer than minSecond: they wait for "a" to return
	// rather than take a transaction of their own beside it.
	f.none(t, 100*time.Millisecond)
	f.release <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := f.next(t); len(got) != 3 {
		t.Fatalf("second transaction: %v, want the three writes that waited", got)
	}
	f.release <- struct{}{}
	for _, c := range rest {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
}

func TestGroupSendsASecondWhenEnoughWait(t *testing.T) {
	b, f := newGrouping(t)
	write(b, "a")
	f.next(t)
	for i := range minSecond {
		write(b, fmt.Sprint("b", i))
	}
	// "a" is still in flight.
	if got := f.next(t); len(got) != minSecond {
		t.Fatalf("second transaction: %d writes, want %d", len(got), minSecond)
	}
	// Never a third while two are in flight, however many wait.
	for i := range 2 * minSecond {
		write(b, fmt.Sprint("c", i))
	}
	f.none(t, 100*time.Millisecond)
}

func TestGroupNamesAKeyOnceAndKeepsOrder(t *testing.T) {
	b, f := newGrouping(t)
	write(b, "first")
	f.next(t)
	write(b, "a")
	settle()
	write(b, "a") // the same key: not in the same transaction
	settle()
	write(b, "b") // after it: waits too, so writes go out in arrival order
	settle()
	f.release <- struct{}{}
	if got := f.next(t); fmt.Sprint(got) != "[a]" {
		t.Fatalf("second transaction: %v, want [a]", got)
	}
	f.release <- struct{}{}
	if got := f.next(t); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("third transaction: %v, want [a b]", got)
	}
}

func TestGroupBoundsItsOperations(t *testing.T) {
	b, f := newGrouping(t)
	write(b, "first")
	f.next(t)
	const n = 100 // two operations each (compare and put): more than a transaction holds
	for i := range n {
		write(b, fmt.Sprint("w", i))
	}
	settle()
	for range n {
		f.release <- struct{}{} // every transaction returns at once from here on
	}
	total, most := 0, 0
	for total < n {
		got := f.next(t)
		if ops := 2 * len(got); ops > maxGroupOps {
			t.Fatalf("a transaction of %d operations, limit %d", ops, maxGroupOps)
		}
		total += len(got)
		most = max(most, len(got))
	}
	if most != maxGroupOps/2 {
		t.Errorf("largest transaction: %d writes, want %d (full)", most, maxGroupOps/2)
	}
}

func TestGroupCloseAnswersEveryWrite(t *testing.T) {
	b, f := newGrouping(t)
	inFlight := write(b, "a")
	f.next(t)
	var waiting []<-chan error
	for i := range 3 {
		waiting = append(waiting, write(b, fmt.Sprint("b", i)))
	}
	settle()
	close(b.stop)
	f.release <- struct{}{}
	if err := <-inFlight; err != nil {
		t.Fatalf("the write in flight: %v", err)
	}
	for _, c := range waiting {
		select {
		case err := <-c:
			var ue *UnavailableError
			if !errors.As(err, &ue) {
				t.Fatalf("a write queued at close: %v, want unavailable", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a write queued at close was never answered")
		}
	}
}
