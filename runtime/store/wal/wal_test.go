package wal

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type rec struct {
	seq     uint64
	payload []byte
}

// payloadFor makes a payload whose bytes depend on seq, so a record delivered
// under the wrong sequence number is noticed.
func payloadFor(seq uint64, size int) []byte {
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(seq*31 + uint64(i))
	}
	return p
}

func mustOpen(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// appendEach appends n records of size bytes, one Append each.
func appendEach(t testing.TB, l *Log, n, size int) {
	t.Helper()
	for range n {
		seq := l.LastSeq() + 1
		first, last, err := l.Append([][]byte{payloadFor(seq, size)})
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		if first != seq || last != seq {
			t.Fatalf("Append = (%d, %d), want (%d, %d)", first, last, seq, seq)
		}
	}
}

func replayAll(t testing.TB, l *Log, after uint64) []rec {
	t.Helper()
	var out []rec
	err := l.Replay(after, func(seq uint64, p []byte) error {
		out = append(out, rec{seq, bytes.Clone(p)})
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%d): %v", after, err)
	}
	return out
}

// checkRecords asserts recs are seqs from..to with payloadFor contents.
func checkRecords(t testing.TB, recs []rec, from, to uint64, size int) {
	t.Helper()
	want := 0
	if from <= to {
		want = int(to - from + 1)
	}
	if len(recs) != want {
		t.Fatalf("got %d records, want seqs %d..%d", len(recs), from, to)
	}
	for i, r := range recs {
		seq := from + uint64(i)
		if r.seq != seq {
			t.Fatalf("record %d: seq %d, want %d", i, r.seq, seq)
		}
		if !bytes.Equal(r.payload, payloadFor(seq, size)) {
			t.Fatalf("record %d: payload mismatch", seq)
		}
	}
}

func segNames(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func dirSize(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	for _, name := range segNames(t, dir) {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// encodeRecord frames one record independently of Append.
func encodeRecord(seq uint64, payload []byte) []byte {
	b := make([]byte, headerSize+len(payload))
	le.PutUint32(b[0:], uint32(len(payload)))
	le.PutUint64(b[8:], seq)
	copy(b[headerSize:], payload)
	c := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	c.Write(b[0:4])
	c.Write(b[8:])
	le.PutUint32(b[4:], c.Sum32())
	return b
}

func TestAppendReplayRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		segSize  int64
		batches  []int // records per Append
		size     int   // payload bytes
		wantSegs int   // minimum number of segment files
	}{
		{"one segment", 0, []int{1, 1, 1, 1}, 100, 1},
		{"segment per few records", 300, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 100, 5},
		{"batches across segments", 1000, []int{3, 7, 1, 12, 5}, 64, 3},
		{"batch larger than a segment", 100, []int{5, 5}, 200, 2},
		{"empty payloads", 64, []int{4, 4, 4}, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, Options{SegmentSize: tt.segSize})
			next := uint64(1)
			for _, n := range tt.batches {
				batch := make([][]byte, n)
				for i := range batch {
					batch[i] = payloadFor(next+uint64(i), tt.size)
				}
				first, last, err := l.Append(batch)
				if err != nil {
					t.Fatalf("Append: %v", err)
				}
				if first != next || last != next+uint64(n)-1 {
					t.Fatalf("Append = (%d, %d), want (%d, %d)", first, last, next, next+uint64(n)-1)
				}
				next += uint64(n)
			}
			total := next - 1
			if got := l.LastSeq(); got != total {
				t.Fatalf("LastSeq = %d, want %d", got, total)
			}
			checkRecords(t, replayAll(t, l, 0), 1, total, tt.size)
			if got := len(segNames(t, dir)); got < tt.wantSegs {
				t.Errorf("%d segment files, want at least %d", got, tt.wantSegs)
			}
			if got, want := l.Size(), dirSize(t, dir); got != want {
				t.Errorf("Size = %d, files hold %d", got, want)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}

			l = mustOpen(t, dir, Options{SegmentSize: tt.segSize})
			defer l.Close()
			checkRecords(t, replayAll(t, l, 0), 1, total, tt.size)
			if got, want := l.Size(), dirSize(t, dir); got != want {
				t.Errorf("after reopen: Size = %d, files hold %d", got, want)
			}
		})
	}
}

func TestReopenContinuesSequence(t *testing.T) {
	tests := []struct {
		name   string
		before int  // records before reopen
		cut    bool // Cut before closing
	}{
		{"empty log", 0, false},
		{"records", 7, false},
		{"records then cut", 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, Options{})
			appendEach(t, l, tt.before, 10)
			if tt.cut {
				if err := l.Cut(); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()

			l = mustOpen(t, dir, Options{})
			defer l.Close()
			if got := l.LastSeq(); got != uint64(tt.before) {
				t.Fatalf("LastSeq after reopen = %d, want %d", got, tt.before)
			}
			appendEach(t, l, 3, 10)
			checkRecords(t, replayAll(t, l, 0), 1, uint64(tt.before)+3, 10)
		})
	}
}

func TestReplayAfter(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{SegmentSize: 5 * (headerSize + 20)})
	defer l.Close()
	appendEach(t, l, 12, 20)
	for _, after := range []uint64{0, 1, 4, 5, 6, 11, 12, 13, 1000} {
		t.Run(fmt.Sprint("after=", after), func(t *testing.T) {
			checkRecords(t, replayAll(t, l, after), after+1, 12, 20)
		})
	}
}

func TestReplayCallbackError(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{})
	defer l.Close()
	appendEach(t, l, 5, 8)
	stop := errors.New("stop")
	var n int
	err := l.Replay(0, func(seq uint64, p []byte) error {
		n++
		if seq == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("Replay = %v after %d calls, want stop after 3", err, n)
	}
}

func TestTruncateBefore(t *testing.T) {
	const size = 20
	segSize := int64(5 * (headerSize + size)) // segments 1, 6, 11, 16 (active)
	tests := []struct {
		seq      uint64
		wantSegs []uint64
	}{
		{0, []uint64{1, 6, 11, 16}},
		{4, []uint64{1, 6, 11, 16}},
		{5, []uint64{6, 11, 16}},
		{12, []uint64{11, 16}},
		{15, []uint64{16}},
		{18, []uint64{16}},
		{1000, []uint64{16}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("seq=", tt.seq), func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, Options{SegmentSize: segSize})
			appendEach(t, l, 18, size)
			if err := l.TruncateBefore(tt.seq); err != nil {
				t.Fatalf("TruncateBefore: %v", err)
			}
			var want []string
			for _, s := range tt.wantSegs {
				want = append(want, segmentName(s))
			}
			if got := segNames(t, dir); !slices.Equal(got, want) {
				t.Fatalf("segments = %v, want %v", got, want)
			}
			first := tt.wantSegs[0]
			if got := l.FirstSeq(); got != first {
				t.Errorf("FirstSeq = %d, want %d", got, first)
			}
			if got, want := l.Size(), dirSize(t, dir); got != want {
				t.Errorf("Size = %d, files hold %d", got, want)
			}
			checkRecords(t, replayAll(t, l, first-1), first, 18, size)
			if first > 1 {
				err := l.Replay(first-2, func(uint64, []byte) error { return nil })
				if !errors.Is(err, ErrTruncated) {
					t.Errorf("Replay(%d) = %v, want ErrTruncated", first-2, err)
				}
			}
			l.Close()

			// The sequence survives truncation and reopen.
			l = mustOpen(t, dir, Options{SegmentSize: segSize})
			defer l.Close()
			appendEach(t, l, 1, size)
			checkRecords(t, replayAll(t, l, first-1), first, 19, size)
		})
	}
}

func TestTruncateEverythingKeepsSequence(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{})
	appendEach(t, l, 4, 10)
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateBefore(4); err != nil {
		t.Fatal(err)
	}
	if got, want := segNames(t, dir), []string{segmentName(5)}; !slices.Equal(got, want) {
		t.Fatalf("segments = %v, want %v", got, want)
	}
	l.Close()
	l = mustOpen(t, dir, Options{})
	defer l.Close()
	if l.LastSeq() != 4 || l.FirstSeq() != 5 || l.Size() != 0 {
		t.Fatalf("LastSeq, FirstSeq, Size = %d, %d, %d; want 4, 5, 0", l.LastSeq(), l.FirstSeq(), l.Size())
	}
	if got := replayAll(t, l, 4); len(got) != 0 {
		t.Fatalf("Replay(4) returned %d records", len(got))
	}
	appendEach(t, l, 1, 10)
	checkRecords(t, replayAll(t, l, 4), 5, 5, 10)
}

func TestCut(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{})
	defer l.Close()
	if err := l.Cut(); err != nil { // empty active segment: nothing to do
		t.Fatal(err)
	}
	appendEach(t, l, 3, 10)
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	appendEach(t, l, 2, 10)
	if got, want := segNames(t, dir), []string{segmentName(1), segmentName(4)}; !slices.Equal(got, want) {
		t.Fatalf("segments = %v, want %v", got, want)
	}
	checkRecords(t, replayAll(t, l, 0), 1, 5, 10)
}

// TestStickyError: a failure the log cannot repair (its file is gone)
// fails every later Append, each retrying the repair; Cut reports it.
// (fault_test.go covers failures that clear.)
func TestStickyError(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{})
	defer l.Close()
	appendEach(t, l, 1, 10)
	l.f.Close() // the next write fails, and so does every repair
	_, _, err1 := l.Append([][]byte{[]byte("x")})
	if err1 == nil {
		t.Fatal("Append on a failed file succeeded")
	}
	_, _, err2 := l.Append([][]byte{[]byte("y")})
	if err2 == nil || !strings.Contains(err2.Error(), err1.Error()) {
		t.Fatalf("second Append = %v, want a failed repair after %v", err2, err1)
	}
	if err := l.Cut(); err != err1 {
		t.Fatalf("Cut = %v, want the sticky %v", err, err1)
	}
	if got := l.LastSeq(); got != 1 {
		t.Fatalf("LastSeq = %d after failed appends, want 1", got)
	}
}

func TestClosed(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, _, err := l.Append([][]byte{{1}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append = %v, want ErrClosed", err)
	}
	if err := l.Replay(0, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Replay = %v, want ErrClosed", err)
	}
}

func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{SegmentSize: 4096})
	defer l.Close()
	const workers, perWorker = 4, 15
	var mu sync.Mutex
	got := map[uint64][]byte{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				batch := make([][]byte, 1+i%3)
				for j := range batch {
					batch[j] = fmt.Appendf(nil, "w%d-i%d-j%d", w, i, j)
				}
				first, last, err := l.Append(batch)
				if err != nil {
					t.Error(err)
					return
				}
				if int(last-first)+1 != len(batch) {
					t.Errorf("Append of %d records = (%d, %d)", len(batch), first, last)
					return
				}
				mu.Lock()
				for j, p := range batch {
					got[first+uint64(j)] = p
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	recs := replayAll(t, l, 0)
	if len(recs) != len(got) || uint64(len(recs)) != l.LastSeq() {
		t.Fatalf("replayed %d records, appended %d, LastSeq %d", len(recs), len(got), l.LastSeq())
	}
	for i, r := range recs {
		if r.seq != uint64(i+1) || !bytes.Equal(r.payload, got[r.seq]) {
			t.Fatalf("record %d: seq %d payload %q, want %q", i+1, r.seq, r.payload, got[uint64(i+1)])
		}
	}
}

func TestOpenRejectsStrayFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junk.wal"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil {
		t.Fatal("Open accepted a malformed segment name")
	}
}

// Corruption layout: 15 records of recSize payload bytes, 5 per segment, in
// segments 1 (seq 1-5), 6 (6-10) and 11 (11-15, last). Record k of a segment
// starts at offset k*frame.
const (
	recSize = 100
	frame   = headerSize + recSize
)

func TestCorruption(t *testing.T) {
	seg := func(first uint64) string { return segmentName(first) }
	off := func(idx int) int64 { return int64(idx * frame) }

	mutateFile := func(t *testing.T, path string, fn func([]byte) []byte) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, fn(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(at int64) func([]byte) []byte {
		return func(b []byte) []byte { b[at] ^= 0x40; return b }
	}
	cut := func(at int64) func([]byte) []byte {
		return func(b []byte) []byte { return b[:at] }
	}
	appendBytes := func(extra []byte) func([]byte) []byte {
		return func(b []byte) []byte { return append(b, extra...) }
	}
	zero := func(from, to int64) func([]byte) []byte {
		return func(b []byte) []byte { clear(b[from:to]); return b }
	}

	tests := []struct {
		name   string
		file   string
		mutate func([]byte) []byte
		remove bool // delete file instead of mutating it

		// Either the log opens with records first..last ...
		wantFirst, wantLast uint64
		wantWarn            bool
		// ... or Open fails with a CorruptError at file, offset.
		wantCorrupt bool
		wantFile    string // if not tt.file
		wantOffset  int64
	}{
		{name: "intact", file: seg(11), mutate: func(b []byte) []byte { return b }, wantFirst: 1, wantLast: 15},
		{name: "cut mid-header of last record", file: seg(11), mutate: cut(off(4) + 7), wantFirst: 1, wantLast: 14, wantWarn: true},
		{name: "cut mid-payload of last record", file: seg(11), mutate: cut(off(4) + headerSize + 50), wantFirst: 1, wantLast: 14, wantWarn: true},
		{name: "cut after header of last record", file: seg(11), mutate: cut(off(4) + headerSize), wantFirst: 1, wantLast: 14, wantWarn: true},
		{name: "flip CRC byte of last record", file: seg(11), mutate: flip(off(4) + 4), wantFirst: 1, wantLast: 14, wantWarn: true},
		{name: "flip payload byte of last record", file: seg(11), mutate: flip(off(4) + headerSize + 99), wantFirst: 1, wantLast: 14, wantWarn: true},
		{name: "flip length byte of last record", file: seg(11), mutate: flip(off(4) + 1), wantFirst: 1, wantLast: 14, wantWarn: true},
		// A zero-filled end is also what preallocated space looks like:
		// dropped without a warning.
		{name: "last record zeroed", file: seg(11), mutate: zero(off(4), off(5)), wantFirst: 1, wantLast: 14},
		{name: "zero-filled tail", file: seg(11), mutate: appendBytes(make([]byte, 4096)), wantFirst: 1, wantLast: 15},
		{name: "garbage tail", file: seg(11), mutate: appendBytes([]byte("\x07\x00\x00\x00partial garbage")), wantFirst: 1, wantLast: 15, wantWarn: true},
		{name: "torn tail of a two-record batch", file: seg(11),
			mutate:    appendBytes(append(encodeRecord(16, payloadFor(16, recSize)), encodeRecord(17, payloadFor(17, recSize))[:30]...)),
			wantFirst: 1, wantLast: 16, wantWarn: true},
		{name: "empty last segment", file: seg(16), mutate: func([]byte) []byte { return nil }, wantFirst: 1, wantLast: 15},
		{name: "first segment deleted (truncated log)", file: seg(1), remove: true, wantFirst: 6, wantLast: 15},

		{name: "flip payload byte of middle record", file: seg(11), mutate: flip(off(1) + headerSize + 10), wantCorrupt: true, wantOffset: off(1)},
		{name: "flip CRC byte of middle record", file: seg(11), mutate: flip(off(2) + 5), wantCorrupt: true, wantOffset: off(2)},
		{name: "flip length byte of first record", file: seg(11), mutate: flip(off(0)), wantCorrupt: true, wantOffset: off(0)},
		{name: "middle record zeroed", file: seg(11), mutate: zero(off(2), off(3)), wantCorrupt: true, wantOffset: off(2)},
		{name: "flip byte in non-last segment", file: seg(6), mutate: flip(off(4) + headerSize + 3), wantCorrupt: true, wantOffset: off(4)},
		{name: "non-last segment cut short", file: seg(1), mutate: cut(off(4) + 20), wantCorrupt: true, wantOffset: off(4)},
		{name: "garbage after non-last segment", file: seg(6), mutate: appendBytes(make([]byte, 10)), wantCorrupt: true, wantOffset: off(5)},
		{name: "middle segment deleted", file: seg(6), remove: true, wantCorrupt: true, wantFile: seg(11), wantOffset: 0},
		{name: "repeated sequence at tail", file: seg(11), mutate: appendBytes(encodeRecord(15, payloadFor(15, recSize))), wantCorrupt: true, wantOffset: off(5)},
		{name: "sequence jump at tail", file: seg(11), mutate: appendBytes(encodeRecord(17, payloadFor(17, recSize))), wantCorrupt: true, wantOffset: off(5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{SegmentSize: 5 * frame}
			l := mustOpen(t, dir, opts)
			appendEach(t, l, 15, recSize)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := segNames(t, dir), []string{seg(1), seg(6), seg(11)}; !slices.Equal(got, want) {
				t.Fatalf("setup: segments = %v, want %v", got, want)
			}
			path := filepath.Join(dir, tt.file)
			if tt.remove {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				if err := os.WriteFile(path, tt.mutate(nil), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				mutateFile(t, path, tt.mutate)
			}

			var logBuf bytes.Buffer
			opts.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
			l, err := Open(dir, opts)
			if tt.wantCorrupt {
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("Open = %v, want *CorruptError", err)
				}
				wantFile := path
				if tt.wantFile != "" {
					wantFile = filepath.Join(dir, tt.wantFile)
				}
				if ce.File != wantFile || ce.Offset != tt.wantOffset {
					t.Fatalf("CorruptError at %s:%d, want %s:%d (%v)", ce.File, ce.Offset, wantFile, tt.wantOffset, err)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "wal:") || !strings.Contains(msg, wantFile) ||
					!strings.Contains(msg, fmt.Sprint(tt.wantOffset)) {
					t.Fatalf("error text %q should start with wal: and name file and offset", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if warned := strings.Contains(logBuf.String(), "torn tail"); warned != tt.wantWarn {
				t.Errorf("warning logged = %v, want %v; log: %s", warned, tt.wantWarn, logBuf.String())
			}
			if l.FirstSeq() != tt.wantFirst || l.LastSeq() != tt.wantLast {
				t.Fatalf("FirstSeq, LastSeq = %d, %d; want %d, %d", l.FirstSeq(), l.LastSeq(), tt.wantFirst, tt.wantLast)
			}
			checkRecords(t, replayAll(t, l, tt.wantFirst-1), tt.wantFirst, tt.wantLast, recSize)

			// Appending after the repair continues the sequence, and the
			// repaired log reopens cleanly.
			appendEach(t, l, 2, recSize)
			l.Close()
			logBuf.Reset()
			l = mustOpen(t, dir, opts)
			defer l.Close()
			if logBuf.Len() != 0 {
				t.Errorf("reopen of a repaired log logged: %s", logBuf.String())
			}
			checkRecords(t, replayAll(t, l, tt.wantFirst-1), tt.wantFirst, tt.wantLast+2, recSize)
			if got, want := l.Size(), dirSize(t, dir); got != want {
				t.Errorf("Size = %d, files hold %d", got, want)
			}
		})
	}
}

// waitPrepared waits until l has a prepared file ready.
func waitPrepared(t testing.TB, l *Log) {
	t.Helper()
	for range 2000 {
		l.mu.Lock()
		ready := l.ready != nil
		l.mu.Unlock()
		if ready {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no prepared segment after 10 s")
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// copyDir copies the files of src into a new directory, as a crash would
// leave them (the log is still open).
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestPreallocate(t *testing.T) {
	dir := t.TempDir()
	const segSize = 64 << 10
	var logBuf bytes.Buffer
	opts := Options{SegmentSize: segSize, Preallocate: true, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}
	l := mustOpen(t, dir, opts)
	waitPrepared(t, l)

	// The empty first segment is replaced by the zero-filled file.
	appendEach(t, l, 10, recSize)
	first := filepath.Join(dir, segmentName(1))
	if got := fileSize(t, first); got != segSize {
		t.Fatalf("first segment is %d bytes, want the preallocated %d", got, segSize)
	}
	if got, want := l.Size(), int64(10*frame); got != want {
		t.Fatalf("Size = %d, want %d (records only, not the zeros)", got, want)
	}

	// A crash now leaves records followed by zeros: all of them are read
	// back, the zeros dropped quietly.
	crashed := copyDir(t, dir)
	logBuf.Reset()
	c := mustOpen(t, crashed, Options{SegmentSize: segSize, Logger: opts.Logger})
	checkRecords(t, replayAll(t, c, 0), 1, 10, recSize)
	c.Close()
	if strings.Contains(logBuf.String(), "torn") {
		t.Errorf("preallocated space reported as a torn tail: %s", logBuf.String())
	}
	if _, err := os.Stat(filepath.Join(crashed, preparedName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open left the crashed log's prepared file: %v", err)
	}

	// Filling segments moves to prepared files; a cut drops the padding
	// of the segment it closes.
	n := 3 * segSize / frame
	for i := 0; i < n; i += 20 {
		waitPrepared(t, l)
		appendEach(t, l, min(20, n-i), recSize)
	}
	total := uint64(10 + n)
	names := segNames(t, dir)
	if len(names) < 4 {
		t.Fatalf("segments %v: want at least 4 after %d records", names, total)
	}
	var sum int64
	for _, name := range names[:len(names)-1] {
		sz := fileSize(t, filepath.Join(dir, name))
		if sz%frame != 0 {
			t.Errorf("closed segment %s is %d bytes: padding left behind", name, sz)
		}
		sum += sz
	}
	if last := l.segs[len(l.segs)-1]; sum+last.size != l.Size() {
		t.Errorf("Size = %d, closed segments %d + active %d", l.Size(), sum, last.size)
	}
	checkRecords(t, replayAll(t, l, 0), 1, total, recSize)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, preparedName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the prepared file: %v", err)
	}
	// A clean close trims the active segment's padding: the next Open has
	// nothing to drop, so it says nothing about it.
	for _, name := range segNames(t, dir) {
		if sz := fileSize(t, filepath.Join(dir, name)); sz%frame != 0 {
			t.Errorf("after a clean close, segment %s is %d bytes: padding left behind", name, sz)
		}
	}
	logBuf.Reset()
	debug := Options{SegmentSize: segSize, Preallocate: true, Logger: slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))}

	// Reopened, the log goes on after its last record.
	l = mustOpen(t, dir, debug)
	if strings.Contains(logBuf.String(), "preallocated") || strings.Contains(logBuf.String(), "torn") {
		t.Errorf("reopening a cleanly closed log reports a trimmed end: %s", logBuf.String())
	}
	defer l.Close()
	appendEach(t, l, 3, recSize)
	checkRecords(t, replayAll(t, l, 0), 1, total+3, recSize)
}

// refParse is an independent reader of the format: the longest prefix of
// well-formed, consecutive records starting at sequence 1.
func refParse(data []byte) (recs []rec, end int) {
	for want := uint64(1); len(data)-end >= headerSize; want++ {
		h := data[end:]
		n := int(le.Uint32(h))
		if n > len(h)-headerSize {
			break
		}
		c := crc32.Checksum(slices.Concat(h[0:4], h[8:headerSize+n]), crc32.MakeTable(crc32.Castagnoli))
		if c != le.Uint32(h[4:]) || le.Uint64(h[8:]) != want {
			break
		}
		recs = append(recs, rec{want, h[headerSize : headerSize+n]})
		end += headerSize + n
	}
	return recs, end
}

func FuzzReplay(f *testing.F) {
	valid := slices.Concat(encodeRecord(1, []byte("one")), encodeRecord(2, nil), encodeRecord(3, []byte("three")))
	f.Add([]byte{})
	f.Add(valid)
	f.Add(valid[:len(valid)-2])
	f.Add(append(slices.Clone(valid), make([]byte, 40)...))
	f.Add(slices.Concat(encodeRecord(1, []byte("a")), encodeRecord(3, []byte("b"))))
	bad := slices.Clone(valid)
	bad[headerSize+4] ^= 1
	f.Add(bad)

	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, segmentName(1))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Open(dir, Options{})
		if err != nil {
			return // refusing to start is always allowed
		}
		defer l.Close()
		want, end := refParse(data)
		var got []rec
		if err := l.Replay(0, func(seq uint64, p []byte) error {
			got = append(got, rec{seq, bytes.Clone(p)})
			return nil
		}); err != nil {
			t.Fatalf("Replay after successful Open: %v", err)
		}
		if len(got) != len(want) {
			t.Fatalf("replayed %d records, the valid prefix has %d", len(got), len(want))
		}
		for i := range got {
			if got[i].seq != want[i].seq || !bytes.Equal(got[i].payload, want[i].payload) {
				t.Fatalf("record %d differs from the valid prefix", i)
			}
		}
		if st, err := os.Stat(path); err != nil || st.Size() != int64(end) {
			t.Fatalf("file is %v bytes (%v) after Open, valid prefix ends at %d", st.Size(), err, end)
		}
		if l.LastSeq() != uint64(len(want)) {
			t.Fatalf("LastSeq = %d, want %d", l.LastSeq(), len(want))
		}
	})
}

func benchmarkAppend(b *testing.B, size, batch int) {
	l := mustOpen(b, b.TempDir(), Options{Preallocate: true})
	waitPrepared(b, l)
	defer l.Close()
	payloads := make([][]byte, batch)
	for i := range payloads {
		payloads[i] = payloadFor(uint64(i), size)
	}
	b.ReportAllocs()
	b.SetBytes(int64(size * batch))
	for b.Loop() {
		if _, _, err := l.Append(payloads); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend1KiBBatch1(b *testing.B)  { benchmarkAppend(b, 1024, 1) }
func BenchmarkAppend1KiBBatch32(b *testing.B) { benchmarkAppend(b, 1024, 32) }
