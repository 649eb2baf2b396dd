package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Max() != 0 {
		t.Fatal("empty histogram should report zeros")
	}
	// 1..10000 µs, shuffled order does not matter to a histogram.
	for i := 10000; i >= 1; i-- {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5000 * time.Microsecond}, {0.99, 9900 * time.Microsecond}, {0.001, 10 * time.Microsecond}} {
		got := h.Quantile(c.q)
		if diff := float64(got-c.want) / float64(c.want); diff < -0.01 || diff > 0.01 {
			t.Errorf("Quantile(%v) = %v, want %v within 1%%", c.q, got, c.want)
		}
	}
	if h.Max() != 10*time.Millisecond || h.Quantile(1) != 10*time.Millisecond {
		t.Errorf("max = %v, Quantile(1) = %v, want exactly 10ms", h.Max(), h.Quantile(1))
	}
	if h.Count() != 10000 {
		t.Errorf("count = %d", h.Count())
	}

	// Small values are exact, and merging adds samples.
	var a, b Histogram
	for i := 1; i <= 50; i++ {
		a.Record(time.Duration(i))
		b.Record(time.Duration(50 + i))
	}
	a.Merge(&b)
	if a.Count() != 100 || a.Quantile(0.5) != 50 || a.Quantile(0.99) != 99 || a.Max() != 100 {
		t.Errorf("merged: count %d p50 %d p99 %d max %d, want 100 50 99 100", a.Count(), a.Quantile(0.5), a.Quantile(0.99), a.Max())
	}

	// Bucket bounds round-trip over the whole range.
	for _, v := range []int64{0, 1, 127, 128, 129, 1000, 123456789, 1<<62 + 12345, 1<<63 - 1} {
		i := histIndex(v)
		lo, w := histBounds(i)
		if i >= histBuckets || v < lo || v >= lo+w && lo+w > lo {
			t.Errorf("value %d: bucket %d [%d, +%d) does not hold it", v, i, lo, w)
		}
	}
}

func TestParseFlagsLoopback(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8090", "http://localhost:8090", "http://[::1]:8090/", "https://127.8.9.10"} {
		if _, err := parseFlags([]string{"--url", u}, io.Discard); err != nil {
			t.Errorf("%s: unexpected error %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.5:8090", "http://example.com", "http://0.0.0.0:8090", "http://localhost.example.com"} {
		_, err := parseFlags([]string{"--url", u}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("%s: error %v, want a refusal naming --allow-remote", u, err)
		}
		if _, err := parseFlags([]string{"--url", u, "--allow-remote"}, io.Discard); err != nil {
			t.Errorf("%s with --allow-remote: %v", u, err)
		}
	}
	for _, args := range [][]string{
		{"--url", "ftp://127.0.0.1"},
		{"--url", "http://127.0.0.1/apis"},
		{"--url", "http://u:p@127.0.0.1"},
		{"--scenarios", "get,bogus"},
		{"--concurrency", "0"},
		{"--duration", "0s"},
		{"--prefix", "Bad_Prefix"},
		{"--password", "x"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
	cfg, err := parseFlags([]string{"--scenarios", " watch, get,watch ", "--user", "u", "--password", "p"}, io.Discard)
	if err != nil || strings.Join(cfg.Scenarios, ",") != "watch,get" || cfg.Concurrency != 32 || cfg.Objects != 100000 || cfg.SkipPreload {
		t.Errorf("defaults/scenarios: %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags([]string{"--skip-preload"}, io.Discard); err != nil || !cfg.SkipPreload {
		t.Errorf("--skip-preload: %+v, %v", cfg, err)
	}
}

func TestSentTime(t *testing.T) {
	marker := []byte(`"loadgen.example.com/run":"abc123"`)
	ev := []byte(`{"type":"ADDED","object":{"metadata":{"name":"lg-w-abc123-1","labels":{"loadgen.example.com/run":"abc123","team":"t1"},` +
		`"annotations":{"loadgen.example.com/sent-unix-nano":"1700000000123456789"}},"spec":{"name":"x"}}}`)
	if got, ok := sentTime(ev, marker); !ok || got.UnixNano() != 1700000000123456789 {
		t.Errorf("sentTime = %v, %v", got, ok)
	}
	if _, ok := sentTime(ev, []byte(`"loadgen.example.com/run":"other1"`)); ok {
		t.Error("another run's event was accepted")
	}
	if _, ok := sentTime([]byte(strings.Replace(string(ev), "ADDED", "DELETED", 1)), marker); ok {
		t.Error("a DELETED event was accepted")
	}
}

// TestPreloadBodyPadsToSize: --preload-size pads a preloaded person's
// body to the size asked, within the few bytes a name's length varies,
// and leaves it as it was at 0 or below its own size.
func TestPreloadBodyPadsToSize(t *testing.T) {
	plain := preloadBody(preloadName("lg", 42), 42, 0)
	for _, size := range []int{0, 100, 520, 4096} {
		body := preloadBody(preloadName("lg", 42), 42, size)
		var p struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("size %d: %v: %s", size, err, body)
		}
		_, padded := p.Metadata.Annotations[padAnnotation]
		switch {
		case size <= len(plain):
			if padded || !bytes.Equal(body, plain) {
				t.Errorf("size %d: padded a body of %d bytes: %s", size, len(plain), body)
			}
		case !padded || len(body) != size:
			t.Errorf("size %d: body of %d bytes (padded %v)", size, len(body), padded)
		}
	}
}
