// Package logbuf batches log lines into few writes. A server that logs one
// access line per request otherwise pays a write system call per request
// (about as much as serving a small GET). Lines are held for at most one
// flush interval and never split; a record at or above a chosen level
// (warnings and errors) goes out at once with everything before it, so
// what matters for diagnosis is not delayed, and Close writes the rest.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// limit is the buffered size that triggers a write before the interval.
const limit = 64 << 10

// Writer buffers whole writes (log lines) for out. It is safe for
// concurrent use.
type Writer struct {
	mu     sync.Mutex
	out    io.Writer
	buf    []byte
	err    error // the first write error; later lines are dropped
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// New returns a Writer that writes what it holds to out every interval.
func New(out io.Writer, interval time.Duration) *Writer {
	w := &Writer{out: out, buf: make([]byte, 0, limit), stop: make(chan struct{}), done: make(chan struct{})}
	go w.flushEvery(interval)
	return w
}

func (w *Writer) flushEvery(interval time.Duration) {
	defer close(w.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			w.Flush()
		}
	}
}

// Write holds a copy of p; after Close, or when p alone fills the buffer,
// it writes p through.
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) >= limit {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
		return w.writeOut(p)
	}
	if err := w.Append(func(b []byte) []byte { return append(b, p...) }); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Append holds the line that add appends to the buffer it is given, so
// a caller formats in place instead of handing over a copy; once the
// buffer reaches its limit (or after Close) it is written. add runs under
// the Writer's lock and must only append.
func (w *Writer) Append(add func([]byte) []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = add(w.buf)
	if w.closed || len(w.buf) >= limit {
		return w.flushLocked()
	}
	return nil
}

// Flush writes what the Writer holds.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.err != nil || len(w.buf) == 0 {
		return w.err
	}
	_, err := w.writeOut(w.buf)
	w.buf = w.buf[:0]
	return err
}

func (w *Writer) writeOut(p []byte) (int, error) {
	n, err := w.out.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// Close stops the periodic flush and writes what is held; later writes go
// straight through.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.err
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	return w.Flush()
}

// Handler wraps h, which writes to w, so that a record at or above level
// is written out at once.
func Handler(h slog.Handler, w *Writer, level slog.Level) slog.Handler {
	return &handler{Handler: h, w: w, level: level}
}

type handler struct {
	slog.Handler
	w     *Writer
	level slog.Level
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= h.level {
		if ferr := h.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{Handler: h.Handler.WithAttrs(attrs), w: h.w, level: h.level}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{Handler: h.Handler.WithGroup(name), w: h.w, level: h.level}
}
