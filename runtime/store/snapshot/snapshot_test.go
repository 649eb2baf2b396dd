package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type rec struct {
	kind    byte
	payload []byte
}

func makeRecords(n, size int, salt byte) []rec {
	out := make([]rec, n)
	for i := range out {
		p := make([]byte, size)
		for j := range p {
			p[j] = byte(i*7+j) ^ salt
		}
		out[i] = rec{kind: byte(i % 5), payload: p}
	}
	return out
}

func writeRecords(t testing.TB, dir string, seq uint64, recs []rec) {
	t.Helper()
	err := Write(dir, seq, func(w *Writer) error {
		for _, r := range recs {
			if err := w.Add(r.kind, r.payload); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Write(%d): %v", seq, err)
	}
}

// load returns what Load delivers, and checks that it told start the
// seq it returns, once, before the first record.
func load(t testing.TB, dir string) (uint64, bool, []rec, error) {
	t.Helper()
	var got []rec
	var started []uint64
	seq, found, err := Load(dir, func(s uint64) error {
		if len(got) > 0 {
			t.Errorf("start(%d) after %d records", s, len(got))
		}
		started = append(started, s)
		return nil
	}, func(kind byte, p []byte) error {
		got = append(got, rec{kind, bytes.Clone(p)})
		return nil
	})
	if err == nil && found && !slices.Equal(started, []uint64{seq}) || !found && len(started) > 0 {
		t.Errorf("start told %v; Load returned %d, found %v", started, seq, found)
	}
	return seq, found, got, err
}

// TestStartErrorStopsTheLoad: an error from start is Load's, before any
// record.
func TestStartErrorStopsTheLoad(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 10, makeRecords(3, 10, 1))
	stop := errors.New("stop")
	n := 0
	if _, _, err := Load(dir, func(uint64) error { return stop }, func(byte, []byte) error { n++; return nil }); err != stop || n != 0 {
		t.Fatalf("Load = %v after %d records, want the start's error before any", err, n)
	}
}

func equalRecords(a, b []rec) bool {
	return slices.EqualFunc(a, b, func(x, y rec) bool {
		return x.kind == y.kind && bytes.Equal(x.payload, y.payload)
	})
}

// captureLog routes slog.Default to a buffer for the rest of the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestRoundTrip(t *testing.T) {
	allKinds := make([]rec, 256)
	for i := range allKinds {
		allKinds[i] = rec{byte(i), []byte{byte(i), 1, 2}}
	}
	tests := []struct {
		name string
		recs []rec
	}{
		{"no records", nil},
		{"empty payload", []rec{{kind: 3}}},
		{"every kind", allKinds},
		{"many small", makeRecords(1000, 40, 0)},
		{"larger than the buffer", []rec{{1, bytes.Repeat([]byte("x"), 3<<20)}, {2, []byte("after")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRecords(t, dir, 42, tt.recs)
			seq, found, got, err := load(t, dir)
			if err != nil || !found || seq != 42 {
				t.Fatalf("Load = %d, %v, %v; want 42, true, nil", seq, found, err)
			}
			if !equalRecords(got, tt.recs) {
				t.Fatalf("loaded %d records, differing from the %d written", len(got), len(tt.recs))
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{fileName(42)}) {
				t.Fatalf("dir holds %v", names)
			}
		})
	}
}

func TestLoadPicksNewest(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []uint64{10, 30, 20} {
		writeRecords(t, dir, s, makeRecords(3, 10, byte(s)))
	}
	seq, found, got, err := load(t, dir)
	if err != nil || !found || seq != 30 || !equalRecords(got, makeRecords(3, 10, 30)) {
		t.Fatalf("Load = %d, %v, %v; want 30 with its records", seq, found, err)
	}
	if seqs, err := List(dir); err != nil || !slices.Equal(seqs, []uint64{10, 20, 30}) {
		t.Fatalf("List = %v, %v", seqs, err)
	}
}

func TestMissingOrEmptyDir(t *testing.T) {
	for name, dir := range map[string]string{
		"missing": filepath.Join(t.TempDir(), "nope"),
		"empty":   t.TempDir(),
	} {
		t.Run(name, func(t *testing.T) {
			called := false
			seq, found, err := Load(dir, func(uint64) error { called = true; return nil }, func(byte, []byte) error { called = true; return nil })
			if seq != 0 || found || err != nil || called {
				t.Fatalf("Load = %d, %v, %v (called %v); want 0, false, nil", seq, found, err, called)
			}
			if err := Prune(dir, 1); err != nil {
				t.Fatalf("Prune: %v", err)
			}
		})
	}
}

// newestDamaged writes an older and a newer snapshot and damages the newer
// one with mutate; Load must return the older one and never show the newer
// one's records.
func newestDamaged(t *testing.T, mutate func([]byte) []byte) {
	t.Helper()
	dir := t.TempDir()
	older, newer := makeRecords(4, 30, 1), makeRecords(5, 30, 2)
	writeRecords(t, dir, 10, older)
	writeRecords(t, dir, 20, newer)
	path := filepath.Join(dir, fileName(20))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, mutate(b), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := captureLog(t)
	seq, found, got, err := load(t, dir)
	if err != nil || !found || seq != 10 {
		t.Fatalf("Load = %d, %v, %v; want fallback to 10", seq, found, err)
	}
	if !equalRecords(got, older) {
		t.Fatalf("got %d records, want exactly the %d of the older snapshot", len(got), len(older))
	}
	if !strings.Contains(logs.String(), "damaged") || !strings.Contains(logs.String(), fileName(20)) {
		t.Fatalf("no warning naming the damaged file; log: %s", logs.String())
	}
}

func TestTruncatedNewestFallsBack(t *testing.T) {
	const fileSize = headerSize + 5*(frameSize+30) + trailerSize
	tests := []struct {
		name string
		size int
	}{
		{"empty file", 0},
		{"half header", headerSize / 2},
		{"header only", headerSize},
		{"mid record frame", headerSize + 4},
		{"mid payload", headerSize + frameSize + 10},
		{"at a record boundary", headerSize + 2*(frameSize+30)},
		{"trailer missing", fileSize - trailerSize},
		{"trailer cut", fileSize - 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newestDamaged(t, func(b []byte) []byte {
				if len(b) != fileSize {
					t.Fatalf("file is %d bytes, test assumes %d", len(b), fileSize)
				}
				return b[:tt.size]
			})
		})
	}
	t.Run("bytes after trailer", func(t *testing.T) {
		newestDamaged(t, func(b []byte) []byte { return append(b, 0) })
	})
}

func TestFlippedByteDetected(t *testing.T) {
	// Every single-byte flip of the newest file must be noticed.
	dir := t.TempDir()
	older, newer := makeRecords(2, 8, 1), makeRecords(3, 8, 2)
	writeRecords(t, dir, 10, older)
	writeRecords(t, dir, 20, newer)
	captureLog(t)
	path := filepath.Join(dir, fileName(20))
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range orig {
		b := bytes.Clone(orig)
		b[i] ^= 0x01
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		seq, found, got, err := load(t, dir)
		if err != nil || !found || seq != 10 || !equalRecords(got, older) {
			t.Errorf("flip at offset %d: Load = %d, %v, %v with %d records; want fallback to 10", i, seq, found, err, len(got))
		}
	}
}

func TestAllDamagedIsAnError(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 7, makeRecords(3, 10, 0))
	path := filepath.Join(dir, fileName(7))
	b, _ := os.ReadFile(path)
	b[headerSize+frameSize] ^= 0xff
	os.WriteFile(path, b, 0o644)
	captureLog(t)
	seq, found, got, err := load(t, dir)
	var ce *CorruptError
	if !errors.As(err, &ce) || found || seq != 0 || len(got) != 0 {
		t.Fatalf("Load = %d, %v, %v with %d records; want a CorruptError and nothing delivered", seq, found, err, len(got))
	}
	if ce.File != path || ce.Offset != headerSize {
		t.Fatalf("CorruptError at %s:%d, want %s:%d", ce.File, ce.Offset, path, headerSize)
	}
}

func TestLoadCallbackError(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 5, makeRecords(10, 10, 0))
	stop := errors.New("stop")
	n := 0
	_, found, err := Load(dir, nil, func(byte, []byte) error {
		n++
		if n == 4 {
			return stop
		}
		return nil
	})
	if err != stop || found || n != 4 {
		t.Fatalf("Load = %v, found %v after %d calls; want stop after 4", err, found, n)
	}
}

func TestWriteFailureLeavesNoTmp(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		fill func(w *Writer) error
	}{
		{"fill fails at once", func(w *Writer) error { return boom }},
		{"fill fails after records", func(w *Writer) error {
			for _, r := range makeRecords(100, 1000, 3) {
				if err := w.Add(r.kind, r.payload); err != nil {
					return err
				}
			}
			return boom
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRecords(t, dir, 10, makeRecords(3, 10, 1))
			before, _ := os.ReadFile(filepath.Join(dir, fileName(10)))

			if err := Write(dir, 20, tt.fill); !errors.Is(err, boom) {
				t.Fatalf("Write = %v, want boom", err)
			}
			if err := Write(dir, 10, tt.fill); !errors.Is(err, boom) { // same seq as the existing one
				t.Fatalf("Write = %v, want boom", err)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{fileName(10)}) {
				t.Fatalf("dir holds %v, want only the old snapshot", names)
			}
			after, _ := os.ReadFile(filepath.Join(dir, fileName(10)))
			if !bytes.Equal(before, after) {
				t.Fatal("existing snapshot changed")
			}
		})
	}
}

func TestAddAfterFill(t *testing.T) {
	var kept *Writer
	writeErr := Write(t.TempDir(), 1, func(w *Writer) error { kept = w; return nil })
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	if err := kept.Add(1, nil); err == nil {
		t.Fatal("Add after fill returned succeeded")
	}
}

func TestPrune(t *testing.T) {
	tests := []struct {
		keep int
		want []uint64
	}{
		{0, nil},
		{1, []uint64{40}},
		{2, []uint64{30, 40}},
		{4, []uint64{10, 20, 30, 40}},
		{9, []uint64{10, 20, 30, 40}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("keep=", tt.keep), func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range []uint64{10, 20, 30, 40} {
				writeRecords(t, dir, s, makeRecords(1, 5, 0))
			}
			stray := filepath.Join(dir, prefix+"00000000000000000050-123.tmp")
			other := filepath.Join(dir, "unrelated.txt")
			for _, p := range []string{stray, other} {
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := Prune(dir, tt.keep); err != nil {
				t.Fatalf("Prune: %v", err)
			}
			if got, _ := List(dir); !slices.Equal(got, tt.want) {
				t.Fatalf("after Prune(%d): %v, want %v", tt.keep, got, tt.want)
			}
			if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stray tmp file survived: %v", err)
			}
			if _, err := os.Stat(other); err != nil {
				t.Errorf("unrelated file removed: %v", err)
			}
		})
	}
	if err := Prune(t.TempDir(), -1); err == nil {
		t.Error("Prune(-1) succeeded")
	}
}

func TestListIgnoresOtherNames(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, 3, nil)
	for _, name := range []string{
		"snapshot-3.snap", "snapshot-0000000000000000000x.snap", "snapshot-00000000000000000004.snapx",
		"x-00000000000000000005.snap", "snapshot-00000000000000000006.snap.tmp",
	} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, fileName(9)), 0o755)
	if got, err := List(dir); err != nil || !slices.Equal(got, []uint64{3}) {
		t.Fatalf("List = %v, %v; want [3]", got, err)
	}
}

func FuzzLoad(f *testing.F) {
	seedDir := f.TempDir()
	writeRecords(f, seedDir, 7, []rec{{1, []byte("hello")}, {2, nil}, {255, []byte("world")}})
	valid, err := os.ReadFile(filepath.Join(seedDir, fileName(7)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:headerSize])
	f.Add([]byte{})
	f.Add(append(bytes.Clone(valid), 0))
	old := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler))
	f.Cleanup(func() { slog.SetDefault(old) })

	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, fileName(7)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		seq, found, got, err := load(t, dir)
		if err != nil || !found {
			if len(got) != 0 {
				t.Fatalf("records delivered from a file that failed: %v", err)
			}
			return
		}
		if seq != 7 {
			t.Fatalf("seq = %d, want 7", seq)
		}
		// A file that loads is canonical: writing its records again must
		// reproduce it byte for byte.
		out := t.TempDir()
		writeRecords(t, out, 7, got)
		again, err := os.ReadFile(filepath.Join(out, fileName(7)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("loaded file is not what Write produces for its records")
		}
	})
}

func BenchmarkWrite100kRecords600B(b *testing.B) {
	const n, size = 100_000, 600
	payload := bytes.Repeat([]byte{0xab}, size)
	dir := b.TempDir()
	b.ReportAllocs()
	b.SetBytes(n * size)
	for b.Loop() {
		err := Write(dir, 1, func(w *Writer) error {
			for i := range n {
				if err := w.Add(byte(i%4), payload); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad100kRecords600B(b *testing.B) {
	const n, size = 100_000, 600
	dir := b.TempDir()
	payload := bytes.Repeat([]byte{0xab}, size)
	err := Write(dir, 1, func(w *Writer) error {
		for i := range n {
			if err := w.Add(byte(i%4), payload); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(n * size)
	for b.Loop() {
		count := 0
		if _, _, err := Load(dir, nil, func(byte, []byte) error { count++; return nil }); err != nil || count != n {
			b.Fatalf("Load: %v, %d records", err, count)
		}
	}
}
