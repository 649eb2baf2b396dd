package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Watch scenario limits: how many handshakes run at once, and how long to
// wait after the last write for events still on their way.
const (
	dialParallel = 50
	dialTimeout  = 10 * time.Second
	drainLimit   = 5 * time.Second
)

// watchStats is the watch scenario's detail in the JSON report.
type watchStats struct {
	Watchers        int     `json:"watchers"`
	Connected       int     `json:"connected"`
	ConnectErrors   int     `json:"connectErrors"`
	ConnectSeconds  float64 `json:"connectSeconds"`
	Dropped         int     `json:"dropped"` // streams that ended before the scenario did
	Writes          int64   `json:"writes"`
	WritesOK        int64   `json:"writesOK"` // events every watcher should get
	WriteErrors     int64   `json:"writeErrors"`
	SkippedTicks    int64   `json:"skippedTicks"` // writes not sent: too many in flight
	WriteP50Ms      float64 `json:"writeP50Ms"`
	WriteP99Ms      float64 `json:"writeP99Ms"`
	Expected        int64   `json:"expectedDeliveries"`
	Delivered       int64   `json:"delivered"`
	PerWatcherMin   int64   `json:"perWatcherMin"`
	PerWatcherMax   int64   `json:"perWatcherMax"`
	PerWatcherMean  float64 `json:"perWatcherMean"`
	Complete        int     `json:"complete"` // watchers that got every event
	DrainSeconds    float64 `json:"drainSeconds"`
	DeliveryP50Ms   float64 `json:"deliveryP50Ms"`
	DeliveryP99Ms   float64 `json:"deliveryP99Ms"`
	DeliveryMaxMs   float64 `json:"deliveryMaxMs"`
	DeliveryMeanMs  float64 `json:"deliveryMeanMs"`
	DeliverySamples uint64  `json:"deliverySamples"`
	// AckLag*: on the first watcher, from the write's 201 reaching the
	// writer to the event's arrival (0 when the event came first): the
	// replication lag proper, without the write's own commit time.
	AckLagP50Ms   float64 `json:"ackLagP50Ms"`
	AckLagP99Ms   float64 `json:"ackLagP99Ms"`
	AckLagSamples uint64  `json:"ackLagSamples"`
}

// watcher is one open watch stream.
type watcher struct {
	conn     *websocket.Conn
	received atomic.Int64
	ended    atomic.Bool // the stream ended before the scenario closed it
	err      error       // why it ended; read after done is closed
	done     chan struct{}
	// arrivals, kept by the first watcher only: when each write's event
	// arrived, by the write's send time (ack→event lag).
	arrivals map[int64]time.Time
}

// delivery is the latency histogram all watchers record into.
type delivery struct {
	mu   sync.Mutex
	hist Histogram
}

// runWatch opens cfg.Watchers watch streams on the collection, then
// creates persons at cfg.WatchRate for cfg.Duration. Each create carries
// its send time; every watcher measures, for every event, the time from
// that send to the event's arrival.
func runWatch(ctx context.Context, c *client, cfg *config, stderr io.Writer) (*result, error) {
	st := &watchStats{Watchers: cfg.Watchers}
	wctx, stopWatchers := context.WithCancel(ctx)
	defer stopWatchers()

	// Connect.
	marker := []byte(`"` + runLabel + `":"` + c.runID + `"`)
	var lat delivery
	watchers := make([]*watcher, cfg.Watchers)
	var connectErrs atomic.Int64
	var firstErr atomic.Value
	sem := make(chan struct{}, dialParallel)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range watchers {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			w, err := c.openWatch(wctx, marker, &lat, i == 0)
			if err != nil {
				connectErrs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			watchers[i] = w
		})
	}
	wg.Wait()
	st.ConnectSeconds = time.Since(start).Seconds()
	st.ConnectErrors = int(connectErrs.Load())
	live := watchers[:0]
	for _, w := range watchers {
		if w != nil {
			live = append(live, w)
		}
	}
	watchers = live
	st.Connected = len(watchers)
	defer func() {
		stopWatchers()
		for _, w := range watchers {
			w.conn.CloseNow()
		}
	}()
	fmt.Fprintf(stderr, "loadgen: watch: %d/%d watchers connected in %.2fs\n", st.Connected, st.Watchers, st.ConnectSeconds)
	if st.ConnectErrors > 0 {
		fmt.Fprintf(stderr, "loadgen: watch: %d connect errors, first: %v\n", st.ConnectErrors, firstErr.Load())
	}
	if st.Connected == 0 {
		return nil, fmt.Errorf("no watcher could connect: %v", firstErr.Load())
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	// Write at a steady rate (pace), each create without waiting for the
	// previous ones, so a slow write does not lower the rate; a write is
	// skipped only when too many are in flight.
	var writes, writesOK, writeErrs, skipped atomic.Int64
	var wmu sync.Mutex
	var writeHist Histogram
	acks := map[int64]time.Time{} // by send time; under wmu
	// Up to one second's worth of writes (at least --concurrency) may be
	// in flight at once.
	inflight := make(chan struct{}, max(cfg.Concurrency, int(cfg.WatchRate)))
	dctx, cancelWrites := context.WithTimeout(ctx, cfg.Duration)
	defer cancelWrites()
	sendWrite := func(n int) {
		wg.Go(func() {
			defer func() { <-inflight }()
			name := fmt.Sprintf("%s-w-%s-%d", cfg.Prefix, c.runID, n)
			labels := map[string]string{"team": "t" + strconv.Itoa(n%10), runLabel: c.runID}
			sent := time.Now()
			body := personBody(name, n, labels, map[string]string{sentAnnotation: strconv.FormatInt(sent.UnixNano(), 10)})
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			status, err := c.do(rctx, http.MethodPost, c.coll, body, nil)
			cancel()
			acked := time.Now()
			writes.Add(1)
			ok := err == nil && status == http.StatusCreated
			if ok {
				writesOK.Add(1)
			} else {
				writeErrs.Add(1)
			}
			wmu.Lock()
			writeHist.Record(acked.Sub(sent))
			if ok {
				acks[sent.UnixNano()] = acked
			}
			wmu.Unlock()
		})
	}
	writeStart := time.Now()
	skipped.Store(pace(dctx, cfg.WatchRate, func(n int) bool {
		select {
		case inflight <- struct{}{}:
			sendWrite(n)
			return true
		default:
			return false
		}
	}))
	sendWindow := time.Since(writeStart) // the rate is of writes sent in it
	wg.Wait()
	st.Writes, st.WritesOK, st.WriteErrors, st.SkippedTicks = writes.Load(), writesOK.Load(), writeErrs.Load(), skipped.Load()
	st.WriteP50Ms, st.WriteP99Ms = ms(writeHist.Quantile(0.5)), ms(writeHist.Quantile(0.99))

	// Give the events still in flight a moment to arrive.
	drainStart := time.Now()
	for time.Since(drainStart) < drainLimit && ctx.Err() == nil {
		waiting := false
		for _, w := range watchers {
			if !w.ended.Load() && w.received.Load() < st.WritesOK {
				waiting = true
				break
			}
		}
		if !waiting {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.DrainSeconds = time.Since(drainStart).Seconds()

	// Count.
	stopWatchers()
	st.Expected = int64(len(watchers)) * st.WritesOK
	st.PerWatcherMin = -1
	var endErrs []string
	for _, w := range watchers {
		got := w.received.Load()
		st.Delivered += got
		if st.PerWatcherMin < 0 || got < st.PerWatcherMin {
			st.PerWatcherMin = got
		}
		st.PerWatcherMax = max(st.PerWatcherMax, got)
		if got >= st.WritesOK {
			st.Complete++
		}
		if w.ended.Load() {
			st.Dropped++
			<-w.done
			if len(endErrs) < 3 && w.err != nil {
				endErrs = append(endErrs, w.err.Error())
			}
		}
	}
	st.PerWatcherMean = float64(st.Delivered) / float64(len(watchers))
	if len(endErrs) > 0 {
		fmt.Fprintf(stderr, "loadgen: watch: %d streams ended early, e.g. %s\n", st.Dropped, strings.Join(endErrs, "; "))
	}

	lat.mu.Lock()
	h := lat.hist
	var ackLag Histogram
	if first := watchers[0]; first.arrivals != nil {
		wmu.Lock()
		for sent, acked := range acks {
			if arrived, ok := first.arrivals[sent]; ok {
				ackLag.Record(max(arrived.Sub(acked), 0))
			}
		}
		wmu.Unlock()
	}
	lat.mu.Unlock()
	st.AckLagP50Ms, st.AckLagP99Ms, st.AckLagSamples = ms(ackLag.Quantile(0.5)), ms(ackLag.Quantile(0.99)), ackLag.Count()
	st.DeliveryP50Ms, st.DeliveryP99Ms = ms(h.Quantile(0.5)), ms(h.Quantile(0.99))
	st.DeliveryMaxMs, st.DeliveryMeanMs, st.DeliverySamples = ms(h.Max()), ms(h.Mean()), h.Count()

	t := &tally{hist: h, requests: st.Writes}
	for range st.WriteErrors {
		t.fail("write")
	}
	for range st.ConnectErrors {
		t.fail("connect")
	}
	for range st.Dropped {
		t.fail("dropped")
	}
	r := newResult("watch", t, st.WritesOK, sendWindow)
	pct := 100.0
	if st.Expected > 0 {
		pct = 100 * float64(st.Delivered) / float64(st.Expected)
	}
	r.Notes = fmt.Sprintf("latency=write sent→event received; watchers=%d/%d events=%d/%d (%.2f%%) per-watcher min/mean/max=%d/%.1f/%d of %d, complete=%d write p50/p99=%.3f/%.3fms ack→event p50/p99=%.3f/%.3fms",
		st.Connected, st.Watchers, st.Delivered, st.Expected, pct,
		st.PerWatcherMin, st.PerWatcherMean, st.PerWatcherMax, st.WritesOK, st.Complete, st.WriteP50Ms, st.WriteP99Ms, st.AckLagP50Ms, st.AckLagP99Ms)
	if st.SkippedTicks > 0 {
		r.Notes += fmt.Sprintf(" skipped-ticks=%d", st.SkippedTicks)
	}
	r.Watch = st
	return r, nil
}

// watchURL is the collection's watch URL: ws:// or wss://.
func (c *client) watchURL() string {
	return "ws" + strings.TrimPrefix(c.wcoll, "http") + "?watch=true"
}

// openWatch opens one watch stream and starts reading it. Events of this
// run's writes are counted and timed into lat; other events are ignored.
func (c *client) openWatch(ctx context.Context, marker []byte, lat *delivery, keepArrivals bool) (*watcher, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, c.watchURL(), &websocket.DialOptions{HTTPClient: c.ws, HTTPHeader: c.authHeader()})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("watch handshake: status %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	conn.SetReadLimit(4 << 20)
	w := &watcher{conn: conn, done: make(chan struct{})}
	if keepArrivals {
		w.arrivals = map[int64]time.Time{}
	}
	go w.read(ctx, marker, lat)
	return w, nil
}

func (w *watcher) read(ctx context.Context, marker []byte, lat *delivery) {
	defer close(w.done)
	// A thousand readers share the cores with the server, so each frame
	// costs as little as it can: one buffer per watcher, and no context per
	// read (the scenario ends streams by closing them).
	var buf bytes.Buffer
	for {
		_, r, err := w.conn.Reader(context.Background())
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		arrived := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				w.err = err
				w.ended.Store(true)
			}
			return
		}
		sent, ok := sentTime(buf.Bytes(), marker)
		if !ok {
			continue
		}
		w.received.Add(1)
		lat.mu.Lock()
		if w.arrivals != nil {
			w.arrivals[sent.UnixNano()] = arrived
		}
		lat.hist.Record(arrived.Sub(sent))
		lat.mu.Unlock()
	}
}

var (
	addedPrefix = []byte(`{"type":"ADDED",`)
	sentKey     = []byte(`"` + sentAnnotation + `":"`)
)

// sentTime returns the send time of an ADDED event of an object carrying
// marker (this run's label). With a thousand streams the client decodes
// tens of thousands of events a second on the server's machine, so this
// scans bytes instead of decoding JSON: the server writes each event as
// {"type":"<TYPE>","object":<object as stored>}, and the stored object is
// encoding/json output, whose strings for these keys and values (ASCII
// letters, digits, '.', '-', '/') need no escaping.
func sentTime(data, marker []byte) (time.Time, bool) {
	if !bytes.HasPrefix(data, addedPrefix) || !bytes.Contains(data, marker) {
		return time.Time{}, false
	}
	i := bytes.Index(data, sentKey)
	if i < 0 {
		return time.Time{}, false
	}
	rest := data[i+len(sentKey):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// pace calls send(1), send(2), … at rate per second until ctx ends. A
// ticker drops the ticks its reader misses (a busy machine delays the
// loop), so each tick sends what the elapsed time says is due: the rate
// offered is the rate asked for. send returns false when it cannot take
// a write now; what was due then is skipped, and pace returns how many.
func pace(ctx context.Context, rate float64, send func(n int) bool) (skipped int64) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	return paceWith(ctx, rate, tick.C, time.Now, send)
}

// paceWith is pace on a given tick channel and clock (tests).
func paceWith(ctx context.Context, rate float64, tick <-chan time.Time, now func() time.Time, send func(n int) bool) (skipped int64) {
	start := now()
	seq := 0
	for {
		select {
		case <-ctx.Done():
			return skipped
		case <-tick:
		}
		due := int(now().Sub(start).Seconds() * rate)
		for seq < due && ctx.Err() == nil {
			if !send(seq + 1) {
				skipped += int64(due - seq)
				seq = due
				break
			}
			seq++
		}
	}
}
