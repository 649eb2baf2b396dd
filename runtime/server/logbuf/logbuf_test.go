package logbuf_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/server/logbuf"
)

// sink records every write it gets.
type sink struct {
	mu     sync.Mutex
	writes []string
	fail   error
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, s.fail
	}
	s.writes = append(s.writes, string(p))
	return len(p), nil
}

func (s *sink) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

func TestLinesAreBatchedInOrderAndWhole(t *testing.T) {
	s := &sink{}
	w := logbuf.New(s, time.Hour)
	var want strings.Builder
	for i := range 5000 { // about 80 KiB: more than one buffer
		line := fmt.Sprintf("line %d %s\n", i, strings.Repeat("x", i%7))
		want.WriteString(line)
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	held := len(s.get())
	if held == 0 || held > 3 {
		t.Errorf("before Close: %d writes, want the full buffers only (1 or 2)", held)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := s.get()
	for i, chunk := range got {
		if !strings.HasSuffix(chunk, "\n") {
			t.Errorf("write %d splits a line: ends %q", i, chunk[max(0, len(chunk)-20):])
		}
	}
	if strings.Join(got, "") != want.String() {
		t.Error("lines lost, repeated or reordered")
	}
	if _, err := w.Write([]byte("late\n")); err != nil || s.get()[len(s.get())-1] != "late\n" {
		t.Errorf("a write after Close must go straight through: %v", err)
	}
}

func TestHeldLinesGoOutWithinTheInterval(t *testing.T) {
	s := &sink{}
	w := logbuf.New(s, 10*time.Millisecond)
	defer w.Close()
	w.Write([]byte("a\n"))
	deadline := time.Now().Add(10 * time.Second)
	for len(s.get()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a held line was never written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.get(); len(got) != 1 || got[0] != "a\n" {
		t.Errorf("got %q", got)
	}
}

func TestWarningsGoOutAtOnceWithWhatCameBefore(t *testing.T) {
	s := &sink{}
	w := logbuf.New(s, time.Hour)
	defer w.Close()
	log := slog.New(logbuf.Handler(slog.NewJSONHandler(w, nil), w, slog.LevelWarn)).With("component", "test")
	log.Info("request", "status", 200)
	if got := s.get(); len(got) != 0 {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.WithGroup("g").Warn("disk slow")
	got := strings.Join(s.get(), "")
	if !strings.Contains(got, `"msg":"request"`) || !strings.Contains(got, `"msg":"disk slow"`) ||
		strings.Index(got, "request") > strings.Index(got, "disk slow") {
		t.Errorf("after a warning: %q", got)
	}
}

func TestALineLargerThanTheBufferIsWrittenWhole(t *testing.T) {
	s := &sink{}
	w := logbuf.New(s, time.Hour)
	w.Write([]byte("small\n"))
	big := strings.Repeat("y", 100<<10) + "\n"
	w.Write([]byte(big))
	if got := s.get(); len(got) != 2 || got[0] != "small\n" || got[1] != big {
		t.Errorf("got %d writes", len(got))
	}
	w.Close()
}

func TestAWriteErrorIsReported(t *testing.T) {
	broken := errors.New("disk full")
	s := &sink{fail: broken}
	w := logbuf.New(s, time.Hour)
	w.Write([]byte("a\n"))
	if err := w.Close(); !errors.Is(err, broken) {
		t.Errorf("Close = %v, want the write error", err)
	}
	if _, err := w.Write([]byte("b\n")); !errors.Is(err, broken) {
		t.Errorf("Write after a failure = %v, want the write error", err)
	}
}

// BenchmarkAccessLine compares one access-log line per request written
// straight to a file with the same lines batched.
func BenchmarkAccessLine(b *testing.B) {
	for _, batched := range []bool{false, true} {
		b.Run(fmt.Sprintf("batched=%v", batched), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var h slog.Handler = slog.NewJSONHandler(f, nil)
			if batched {
				w := logbuf.New(f, 100*time.Millisecond)
				defer w.Close()
				h = logbuf.Handler(slog.NewJSONHandler(w, nil), w, slog.LevelWarn)
			}
			log := slog.New(h)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					log.Info("request", "method", "GET", "path", "/apis/people.example.com/v1alpha1/persons/lg-1", "status", 200, "bytes", 317, "durationMs", 0.007, "requestId", "4da4ed00-2jxz")
				}
			})
		})
	}
}
