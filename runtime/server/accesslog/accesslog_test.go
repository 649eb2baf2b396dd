package accesslog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/server/accesslog"
	"github.com/svcrun/svc/runtime/server/logbuf"
)

// viaSlog is the line log/slog's JSONHandler writes for the same request
// (the record the API logs when no access log is given).
func viaSlog(t testing.TB, at time.Time, method, path, id string, status, n int, took time.Duration) string {
	t.Helper()
	var out bytes.Buffer
	if err := slog.NewJSONHandler(&out, nil).Handle(context.Background(), api.AccessRecord(at, method, path, id, status, n, took)); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestLinesAreWhatSlogWrites(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("east", 5*3600+30*60), time.FixedZone("west", -7*3600)}
	cases := []struct {
		method, path, id string
		status, n        int
		took             time.Duration
	}{
		{"GET", "/apis/people.example.com/v1alpha1/persons/lg-1", "4da4ed00-2jxz", 200, 612, 7 * time.Microsecond},
		{"POST", "/apis/people.example.com/v1alpha1/persons", "b-1", 201, 0, 1500 * time.Millisecond},
		{"DELETE", "/a\"b\\c\nd\re\tf\x00g\x1fh\x7f<>&", "x", 404, 120, 0},
		{"GET", "/caf\u00e9/\u2028/\u2029/\U0001F600/\xff\xfe/end", "", 500, 1 << 20, 999 * time.Nanosecond},
		{"PATCH", "", "id", 415, 3, 123456789 * time.Microsecond},
	}
	for _, loc := range zones {
		for _, ms := range []int{0, 1, 10, 100, 999} {
			at := time.Date(2026, 11, 24, 5, 6, 7, ms*1e6+123456, loc)
			for _, c := range cases {
				got := string(accesslog.AppendLine(nil, at, c.method, c.path, c.id, c.status, c.n, c.took))
				if want := viaSlog(t, at, c.method, c.path, c.id, c.status, c.n, c.took); got != want {
					t.Errorf("line\n got %s\nwant %s", got, want)
				}
			}
		}
	}
}

// TestRequestGoesThroughTheBuffer: lines are held until a flush, whole,
// and in order with what slog writes to the same Writer; after Close they
// go out at once.
func TestRequestGoesThroughTheBuffer(t *testing.T) {
	var out bytes.Buffer
	w := logbuf.New(&out, time.Hour)
	l := accesslog.New(w)
	log := slog.New(slog.NewJSONHandler(w, nil))
	l.Request("GET", "/one", "r1", 200, 10, time.Millisecond)
	log.Info("between")
	l.Request("PUT", "/two", "r2", 409, 20, 2*time.Millisecond)
	if out.Len() != 0 {
		t.Fatalf("written before a flush: %q", out.String())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l.Request("GET", "/late", "r3", 200, 1, 0)
	if !strings.HasSuffix(out.String(), `"path":"/late","status":200,"bytes":1,"durationMs":0,"requestId":"r3"}`+"\n") {
		t.Fatalf("a line after Close was not written at once: %q", out.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")[:3]
	var want = []string{"/one", "between", "/two"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines: %q", len(lines), out.String())
	}
	for i, line := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d %q: %v", i, line, err)
		}
		if v["path"] != want[i] && v["msg"] != want[i] {
			t.Errorf("line %d = %s, want %s", i, line, want[i])
		}
	}
}

// FuzzAppendString: any string is escaped exactly as slog escapes it, and
// the result is one JSON string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x1f\x7f", "\u2028\u2029", "\xff", "é😀", "<>&"} {
		f.Add(s)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got := accesslog.AppendLine(nil, at, "GET", s, "id", 200, 1, 0)
		if want := viaSlog(t, at, "GET", s, "id", 200, 1, 0); string(got) != want {
			t.Fatalf("path %q\n got %s\nwant %s", s, got, want)
		}
		var v struct{ Path string }
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("path %q: %s is not JSON: %v", s, got, err)
		}
		// Each invalid byte reads back as one U+FFFD, as a rune conversion
		// makes it.
		if want := string([]rune(s)); v.Path != want {
			t.Fatalf("path %q read back as %q, want %q", s, v.Path, want)
		}
	})
}

func BenchmarkRequest(b *testing.B) {
	w := logbuf.New(discard{}, time.Hour)
	defer w.Close()
	l := accesslog.New(w)
	b.ReportAllocs()
	for b.Loop() {
		l.Request("GET", "/apis/people.example.com/v1alpha1/persons/lg-12345", "4da4ed00-2jxz", 200, 612, 70*time.Microsecond)
	}
}

func BenchmarkSlog(b *testing.B) {
	w := logbuf.New(discard{}, time.Hour)
	defer w.Close()
	h := logbuf.Handler(slog.NewJSONHandler(w, nil), w, slog.LevelWarn)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h.Handle(ctx, api.AccessRecord(time.Now(), "GET", "/apis/people.example.com/v1alpha1/persons/lg-12345", "4da4ed00-2jxz", 200, 612, 70*time.Microsecond))
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
