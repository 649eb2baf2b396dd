package snapshot

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	magic       = "SVCSNAP\x00"
	version     = 1
	headerSize  = 20
	frameSize   = 9
	trailerSize = 16
	trailerMark = math.MaxUint32
	maxPayload  = math.MaxUint32 - 1

	prefix = "snapshot-"
	ext    = ".snap"
	tmpExt = ".tmp"

	bufSize = 1 << 20
	// Read buffers above this size are not kept for the next record file.
	keepBufCap = 4 << 20
)

var (
	le         = binary.LittleEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// CorruptError reports a snapshot file that fails verification.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("snapshot: corrupt file %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

var errWriterDone = errors.New("snapshot: Add called after fill returned")

// Writer appends records to a snapshot being written. It is only valid
// during the fill callback of [Write] and is not safe for concurrent use.
type Writer struct {
	bw    *bufio.Writer
	sum   uint32 // running CRC of header and record frames, for the trailer
	count uint64
	frame [frameSize]byte
	err   error // sticky write error
	done  bool
}

// Add appends one record. kind is the caller's record type.
func (w *Writer) Add(kind byte, payload []byte) error {
	if w.done {
		return errWriterDone
	}
	if w.err != nil {
		return w.err
	}
	if uint64(len(payload)) > maxPayload {
		return fmt.Errorf("snapshot: record of %d bytes exceeds limit %d", len(payload), uint64(maxPayload))
	}
	fr := w.frame[:]
	le.PutUint32(fr[0:], uint32(len(payload)))
	fr[8] = kind
	le.PutUint32(fr[4:], recordSum(fr, payload))
	w.write(fr)
	w.write(payload)
	w.sum = crc32.Update(w.sum, castagnoli, fr)
	w.count++
	return w.err
}

func (w *Writer) write(b []byte) {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
}

// recordSum is the CRC of a record: length field, kind byte and payload.
func recordSum(frame, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, frame[0:4])
	c = crc32.Update(c, castagnoli, frame[8:9])
	return crc32.Update(c, castagnoli, payload)
}

// Write creates the snapshot for seq in dir (created if needed): fill adds
// the records, then the file is completed, fsynced, renamed into place and
// the directory fsynced. On any error, including one returned by fill, the
// temporary file is removed and existing snapshots are left as they were. A
// snapshot already present for the same seq is replaced atomically.
func Write(dir string, seq uint64, fill func(w *Writer) error) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("snapshot: write: %w", err)
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%020d-*%s", prefix, seq, tmpExt))
	if err != nil {
		return fmt.Errorf("snapshot: write: %w", err)
	}
	tmp := f.Name()
	open := true
	defer func() {
		if err != nil {
			if open {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()

	w := &Writer{bw: bufio.NewWriterSize(f, bufSize)}
	var h [headerSize]byte
	copy(h[:], magic)
	le.PutUint32(h[8:], version)
	le.PutUint64(h[12:], seq)
	w.write(h[:])
	w.sum = crc32.Update(0, castagnoli, h[:])

	if err := fill(w); err != nil {
		w.done = true
		return fmt.Errorf("snapshot: write %d: %w", seq, err)
	}
	w.done = true
	var t [trailerSize]byte
	le.PutUint32(t[0:], trailerMark)
	le.PutUint64(t[4:], w.count)
	le.PutUint32(t[12:], w.sum)
	w.write(t[:])
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("snapshot: write %s: %w", tmp, w.err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("snapshot: sync %s: %w", tmp, err)
	}
	open = false
	if err := f.Close(); err != nil {
		return fmt.Errorf("snapshot: close %s: %w", tmp, err)
	}
	final := filepath.Join(dir, fileName(seq))
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("snapshot: rename %s: %w", tmp, err)
	}
	// Until the directory is synced the rename may not survive a crash; the
	// caller must not truncate the WAL on this error.
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("snapshot: write %s: %w", final, err)
	}
	return nil
}

// Load delivers the records of the newest snapshot in dir that verifies
// completely and returns its seq. Damaged snapshots are skipped with a
// warning. start, if set, is told that seq once the snapshot has
// verified, before its first record. fn sees only records of a fully
// verified file, in the order they were added; payload is valid only
// during the call. An error from start or fn stops the load and is
// returned as is.
//
// No snapshot (or no dir) gives found == false and a nil error. Snapshots
// that are all damaged give an error: starting empty would lose data.
func Load(dir string, start func(seq uint64) error, fn func(kind byte, payload []byte) error) (seq uint64, found bool, err error) {
	seqs, err := List(dir)
	if err != nil {
		return 0, false, err
	}
	var r reader
	var errs []error
	for _, s := range slices.Backward(seqs) {
		path := filepath.Join(dir, fileName(s))
		if err := r.read(path, s, nil); err != nil {
			slog.Default().Warn("snapshot: skipping damaged snapshot", "file", path, "err", err)
			errs = append(errs, err)
			continue
		}
		if start != nil {
			if err := start(s); err != nil {
				return 0, false, err
			}
		}
		if err := r.read(path, s, fn); err != nil {
			if r.cbErr != nil {
				return 0, false, r.cbErr
			}
			// Verified a moment ago, so it changed underneath us; records
			// were delivered already, so falling back is no longer possible.
			return 0, false, err
		}
		return s, true, nil
	}
	if len(errs) == 0 {
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("snapshot: no intact snapshot in %s: %w", dir, errors.Join(errs...))
}

// reader reads snapshot files; its buffers are reused across passes.
type reader struct {
	br    *bufio.Reader
	buf   []byte
	cbErr error // set when the callback failed
}

// read checks the whole file at path and, if fn is not nil, delivers each
// record as soon as its own CRC checks out.
func (r *reader) read(path string, seq uint64, fn func(byte, []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("snapshot: load: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("snapshot: load: %w", err)
	}
	size := st.Size()
	r.cbErr = nil
	defer func() {
		if cap(r.buf) > keepBufCap {
			r.buf = nil
		}
	}()
	if r.br == nil {
		r.br = bufio.NewReaderSize(f, bufSize)
	} else {
		r.br.Reset(f)
	}
	defer r.br.Reset(nil)
	corrupt := func(off int64, format string, args ...any) error {
		return &CorruptError{File: path, Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
	readFull := func(b []byte) error {
		if _, err := io.ReadFull(r.br, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the file shrank since Stat
			}
			return fmt.Errorf("snapshot: load %s: %w", path, err)
		}
		return nil
	}

	if size < headerSize+trailerSize {
		return corrupt(0, "file is %d bytes, shorter than header and trailer", size)
	}
	var h [headerSize]byte
	if err := readFull(h[:]); err != nil {
		return err
	}
	if string(h[:8]) != magic {
		return corrupt(0, "bad magic %q", h[:8])
	}
	if v := le.Uint32(h[8:]); v != version {
		return corrupt(8, "unsupported format version %d", v)
	}
	if s := le.Uint64(h[12:]); s != seq {
		return corrupt(12, "header says sequence %d, file name says %d", s, seq)
	}
	sum := crc32.Update(0, castagnoli, h[:])

	var fr [frameSize]byte
	var count uint64
	for off := int64(headerSize); ; {
		left := size - off
		if left < 4 {
			return corrupt(off, "truncated: no trailer")
		}
		if err := readFull(fr[:4]); err != nil {
			return err
		}
		n := le.Uint32(fr[:4])
		if n == trailerMark {
			if left != trailerSize {
				return corrupt(off, "trailer with %d bytes to end of file, want %d", left, trailerSize)
			}
			var t [trailerSize - 4]byte
			if err := readFull(t[:]); err != nil {
				return err
			}
			if c := le.Uint64(t[0:]); c != count {
				return corrupt(off, "trailer counts %d records, file holds %d", c, count)
			}
			if c := le.Uint32(t[8:]); c != sum {
				return corrupt(off, "file checksum mismatch: stored %#08x, computed %#08x", c, sum)
			}
			return nil
		}
		if left < frameSize {
			return corrupt(off, "truncated record header")
		}
		if int64(n) > left-frameSize {
			return corrupt(off, "record of %d bytes with %d bytes left", n, left-frameSize)
		}
		if err := readFull(fr[4:]); err != nil {
			return err
		}
		if int64(cap(r.buf)) < int64(n) {
			r.buf = make([]byte, n)
		}
		p := r.buf[:n]
		if err := readFull(p); err != nil {
			return err
		}
		if c := recordSum(fr[:], p); c != le.Uint32(fr[4:]) {
			return corrupt(off, "record checksum mismatch: stored %#08x, computed %#08x", le.Uint32(fr[4:]), c)
		}
		sum = crc32.Update(sum, castagnoli, fr[:])
		if fn != nil {
			if err := fn(fr[8], p); err != nil {
				r.cbErr = err
				return err
			}
		}
		count++
		off += frameSize + int64(n)
	}
}

// List returns the sequence numbers of the snapshot files in dir, ascending.
// A missing dir holds no snapshots.
func List(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: list %s: %w", dir, err)
	}
	var seqs []uint64
	for _, e := range ents {
		if s, ok := parseName(e.Name()); ok && e.Type().IsRegular() {
			seqs = append(seqs, s)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// Prune deletes all but the newest keep snapshots in dir and every leftover
// temporary file. It must not run concurrently with Write on the same dir,
// whose temporary file it would delete.
func Prune(dir string, keep int) error {
	if keep < 0 {
		return fmt.Errorf("snapshot: prune: keep = %d, must be >= 0", keep)
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot: prune %s: %w", dir, err)
	}
	var victims []string
	var seqs []uint64
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, prefix) && strings.HasSuffix(name, tmpExt) {
			victims = append(victims, name)
		} else if s, ok := parseName(name); ok && e.Type().IsRegular() {
			seqs = append(seqs, s)
		}
	}
	slices.Sort(seqs)
	for _, s := range seqs[:max(len(seqs)-keep, 0)] {
		victims = append(victims, fileName(s))
	}
	if len(victims) == 0 {
		return nil
	}
	var errs []error
	for _, name := range victims {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := syncDir(dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("snapshot: prune %s: %w", dir, err)
	}
	return nil
}

func fileName(seq uint64) string {
	return fmt.Sprintf("%s%020d%s", prefix, seq, ext)
}

func parseName(name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, ext)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	s, err := strconv.ParseUint(digits, 10, 64)
	return s, err == nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return d.Close()
}
