package wal

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

const (
	headerSize         = 16
	defaultSegmentSize = 64 << 20
	segmentExt         = ".wal"
	maxPayload         = math.MaxUint32
	// Batch buffers above this size are dropped after use so one huge batch
	// does not pin memory for the life of the process.
	keepBufCap  = 4 << 20
	readBufSize = 256 << 10
)

var (
	le         = binary.LittleEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// ErrClosed is returned by operations on a closed Log.
var ErrClosed = errors.New("wal: log is closed")

// ErrTruncated is returned by Replay when asked to start before the oldest
// record still on disk: those records were deleted by TruncateBefore, and
// replaying the rest would silently skip them.
var ErrTruncated = errors.New("wal: records before the start of the log were truncated")

// CorruptError reports damage that Open cannot attribute to a crash during the
// last write: a bad record with valid data after it, a bad record in a segment
// other than the last, or a gap in the sequence numbers.
type CorruptError struct {
	File   string // path of the segment file
	Offset int64  // byte offset of the bad record in File
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("wal: corrupt segment %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

// Options tune a Log. The zero value is usable.
type Options struct {
	// SegmentSize is the size in bytes after which Append starts a new
	// segment. A batch larger than this goes into a segment of its own.
	// Default 64 MiB.
	SegmentSize int64
	// Logger receives warnings about repaired torn tails. Nil discards them.
	Logger *slog.Logger
	// FS is the file system the log writes through; nil means OSFS.
	// Tests inject write and fsync failures through it.
	FS FS
	// Preallocate keeps a zero-filled segment file ready, prepared in the
	// background, and moves appends into it: overwriting allocated blocks
	// lets fdatasync skip the file-size journal commit an append needs,
	// which halves its latency on ext4. Segment boundaries then depend on
	// timing (a log moves to a ready file as soon as it has one), which
	// nothing but this package's own format tests cares about.
	Preallocate bool
}

// minPrealloc is the size of the first file prepared for a log; each next
// one doubles, up to the segment size, so that a short-lived log (a test,
// a small server) never writes a full segment of zeros.
const minPrealloc = 4 << 20

// preparedName is the file a log prepares its next segment in. It does not
// end in .wal, so a crash leaves it ignored (and Open removes it).
const preparedName = "prepared.tmp"

type segment struct {
	path  string
	first uint64 // sequence number in the file name
	size  int64  // bytes of valid records
	alloc int64  // bytes preallocated (zero-filled) in the file; 0 if none
}

// Log is an open write-ahead log. Its methods are safe for concurrent use;
// Append calls are serialized, each one a single write plus one fsync.
type Log struct {
	mu     sync.Mutex
	dir    string
	segLim int64
	logger *slog.Logger

	segs  []segment // oldest first; the last one is active
	fs    FS
	f     File   // active segment, written at segs[last].size
	last  uint64 // last assigned sequence number
	total int64  // sum of segs[i].size
	buf   []byte // batch buffer reused across Appends
	// err is set after a failed write, sync or segment switch: the
	// active file's end is unknown until repair truncates it.
	err    error
	closed bool

	// With Options.Preallocate: the prepared file, once ready, its size,
	// and the size of the next one to prepare.
	prealloc  bool
	preparing bool
	ready     File
	readySize int64
	nextSize  int64
	prepWG    sync.WaitGroup
}

// Open opens the log in dir, creating dir and a first segment if needed. It
// reads and checks every record; see the package documentation for how a
// torn tail is repaired and what counts as corruption ([*CorruptError]).
func Open(dir string, opts Options) (*Log, error) {
	l := &Log{dir: dir, segLim: opts.SegmentSize, logger: opts.Logger, prealloc: opts.Preallocate, fs: opts.FS}
	if l.fs == nil {
		l.fs = OSFS{}
	}
	if l.segLim <= 0 {
		l.segLim = defaultSegmentSize
	}
	l.nextSize = min(l.segLim, minPrealloc)
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	segs, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{preparedName, probeName} {
		if err := l.fs.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("wal: open %s: %w", dir, err)
		}
	}
	if len(segs) == 0 {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := l.createSegment(1); err != nil {
			return nil, err
		}
		return l, nil
	}

	sc := newScanner()
	next := segs[0].first
	for i := range segs {
		s := &segs[i]
		if s.first != next {
			return nil, &CorruptError{File: s.path, Offset: 0,
				Reason: fmt.Sprintf("segment starts at sequence %d, want %d (records missing)", s.first, next)}
		}
		next, err = l.recoverSegment(sc, s, i == len(segs)-1)
		if err != nil {
			return nil, err
		}
		l.total += s.size
	}
	l.segs = segs
	l.last = next - 1

	active := segs[len(segs)-1].path
	f, err := l.fs.OpenFile(active, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", active, err)
	}
	l.f = f
	l.mu.Lock()
	l.startPrepare()
	l.mu.Unlock()
	return l, nil
}

// recoverSegment checks every record of s, repairing a torn tail if s is the
// last segment. It sets s.size and returns the sequence number after the
// segment's last record.
func (l *Log) recoverSegment(sc *scanner, s *segment, isLast bool) (uint64, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return 0, fmt.Errorf("wal: open %s: %w", s.path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("wal: open %s: %w", s.path, err)
	}
	size := st.Size()
	next, bad, err := sc.scan(f, size, s.first, nil)
	if err != nil {
		return 0, fmt.Errorf("wal: open %s: %w", s.path, err)
	}
	if bad == nil {
		s.size = size
		return next, nil
	}
	cerr := &CorruptError{File: s.path, Offset: bad.off, Reason: bad.reason}
	if !isLast || bad.fatal {
		return 0, cerr
	}

	// Last segment: torn only if nothing valid follows the bad record.
	tail := make([]byte, size-bad.off)
	if _, err := f.ReadAt(tail, bad.off); err != nil {
		return 0, fmt.Errorf("wal: open %s: %w", s.path, err)
	}
	zeros := allZero(tail)
	if !zeros {
		if p := findRecord(tail[1:], next); p >= 0 {
			cerr.Reason = fmt.Sprintf("%s, but a valid record follows at offset %d", bad.reason, bad.off+1+int64(p))
			return 0, cerr
		}
	}
	if err := l.truncateFile(s.path, bad.off); err != nil {
		return 0, fmt.Errorf("wal: repair torn tail of %s: %w", s.path, err)
	}
	if zeros {
		// Preallocated space a crash left untrimmed, or a write the file
		// system allocated but never made: either way nothing acknowledged,
		// so this is routine and not worth an operator's attention.
		l.logger.Debug("wal: trimmed the unused, preallocated end of the last segment (normal after a crash; no record lost)",
			"file", s.path, "offset", bad.off, "bytes", size-bad.off)
	} else {
		l.logger.Warn("wal: dropped torn tail of last segment (crash during write)",
			"file", s.path, "offset", bad.off, "bytes", size-bad.off, "reason", bad.reason)
	}
	s.size = bad.off
	return next, nil
}

// Replay calls fn, in order, for every record with a sequence number greater
// than after, up to the last record appended before Replay was called. The
// payload is only valid during the call. An error from fn stops the replay and
// is returned as is. Replay returns an error wrapping [ErrTruncated] if records
// after `after` were already deleted by TruncateBefore.
//
// fn may call other methods of the Log; records appended meanwhile are not
// delivered.
func (l *Log) Replay(after uint64, fn func(seq uint64, payload []byte) error) error {
	type part struct {
		f   *os.File
		seg segment
	}
	var parts []part
	defer func() {
		for _, p := range parts {
			p.f.Close()
		}
	}()

	// Open the files under the lock: a concurrent TruncateBefore may unlink
	// them afterwards, but an open file stays readable.
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if first := l.segs[0].first; after < first-1 {
		l.mu.Unlock()
		return fmt.Errorf("wal: replay after %d: oldest record is %d: %w", after, first, ErrTruncated)
	}
	for i, s := range l.segs {
		segLast := l.last
		if i+1 < len(l.segs) {
			segLast = l.segs[i+1].first - 1
		}
		if s.size == 0 || segLast <= after {
			continue
		}
		f, err := os.Open(s.path)
		if err != nil {
			l.mu.Unlock()
			return fmt.Errorf("wal: replay: %w", err)
		}
		parts = append(parts, part{f, s})
	}
	l.mu.Unlock()

	var cbErr error
	deliver := func(seq uint64, payload []byte) error {
		if seq <= after {
			return nil
		}
		if err := fn(seq, payload); err != nil {
			cbErr = err
			return err
		}
		return nil
	}
	sc := newScanner()
	for _, p := range parts {
		// Read only the bytes that were valid when Replay started.
		_, bad, err := sc.scan(io.NewSectionReader(p.f, 0, p.seg.size), p.seg.size, p.seg.first, deliver)
		if cbErr != nil {
			return cbErr
		}
		if err != nil {
			return fmt.Errorf("wal: replay %s: %w", p.seg.path, err)
		}
		if bad != nil {
			// Verified at Open, so the file changed underneath us.
			return &CorruptError{File: p.seg.path, Offset: bad.off, Reason: bad.reason}
		}
	}
	return nil
}

// Append writes payloads as consecutive records with one write and makes them
// durable with one fdatasync before returning their first and last sequence
// numbers. It is the group-commit primitive: the caller collects the records
// of concurrent writers into one call. An empty batch returns (0, 0, nil).
//
// A failed write or sync fails the batch, none of which counts as logged:
// the log truncates the active segment back to its last good record and
// moves on to a new segment (repair). After a failed fsync the page cache
// no longer tells what is on disk (the kernel may have dropped the dirty
// pages and marked them clean), so nothing of the batch is kept or
// retried, and later records go to a new file. Until a repair succeeds
// every Append first retries it, and fails if it fails.
func (l *Log) Append(payloads [][]byte) (first, last uint64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, 0, ErrClosed
	}
	if l.err != nil {
		if err := l.repairLocked(); err != nil {
			return 0, 0, err
		}
	}
	if len(payloads) == 0 {
		return 0, 0, nil
	}
	total := 0
	for i, p := range payloads {
		if uint64(len(p)) > maxPayload {
			return 0, 0, fmt.Errorf("wal: append: record %d is %d bytes, limit %d", i, len(p), uint64(maxPayload))
		}
		total += headerSize + len(p)
	}
	act := &l.segs[len(l.segs)-1]
	switch {
	case l.ready != nil && act.size+int64(total) > act.alloc:
		// The batch does not fit in preallocated space and a prepared
		// file is ready: write there instead.
		if err := l.usePrepared(); err != nil {
			return 0, 0, err
		}
	case act.size > 0 && act.size+int64(total) > l.segLim:
		if err := l.cutLocked(); err != nil {
			return 0, 0, err
		}
	}

	buf := slices.Grow(l.buf[:0], total)
	seq := l.last
	for _, p := range payloads {
		seq++
		off := len(buf)
		buf = buf[:off+headerSize]
		h := buf[off:]
		le.PutUint32(h[0:], uint32(len(p)))
		le.PutUint64(h[8:], seq)
		le.PutUint32(h[4:], checksum(h, p))
		buf = append(buf, p...)
	}
	if cap(buf) <= keepBufCap {
		l.buf = buf[:0]
	} else {
		l.buf = nil
	}

	seg := &l.segs[len(l.segs)-1]
	if _, err := l.f.WriteAt(buf, seg.size); err != nil {
		return 0, 0, l.failed(fmt.Errorf("wal: write %s: %w", seg.path, err))
	}
	if err := l.f.Datasync(); err != nil {
		return 0, 0, l.failed(fmt.Errorf("wal: sync %s: %w", seg.path, err))
	}
	seg.size += int64(total)
	l.total += int64(total)
	first = l.last + 1
	l.last = seq
	return first, seq, nil
}

// LastSeq returns the sequence number of the last appended record, or the one
// before the first segment's name if the log holds no records.
func (l *Log) LastSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// FirstSeq returns the sequence number of the oldest record still on disk (or
// of the next record if there is none). Replay(after) needs after >= FirstSeq()-1.
func (l *Log) FirstSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segs[0].first
}

// Size returns the number of bytes in all live segments.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Cut closes the active segment and starts a new one named after the next
// sequence number. It does nothing if the active segment is empty.
func (l *Log) Cut() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.err != nil {
		return l.err
	}
	return l.cutLocked()
}

func (l *Log) cutLocked() error {
	act := &l.segs[len(l.segs)-1]
	if act.size == 0 {
		return nil // the next record would get this segment's name anyway
	}
	if act.alloc > act.size {
		// Only the last segment may end in zeros: drop them before
		// another segment follows.
		if err := l.f.Truncate(act.size); err != nil {
			l.err = fmt.Errorf("wal: cut %s: %w", act.path, err)
			return l.err
		}
		if err := l.f.Sync(); err != nil {
			l.err = fmt.Errorf("wal: cut %s: sync: %w", act.path, err)
			return l.err
		}
	}
	act.alloc = 0
	old := l.f
	if err := l.createSegment(l.last + 1); err != nil {
		return err
	}
	// Every Append already synced the old file; a close error loses nothing.
	if err := old.Close(); err != nil {
		l.logger.Warn("wal: closing segment", "err", err)
	}
	return nil
}

// usePrepared moves appends into the ready prepared file: in place of the
// active segment if that is empty, else as the next segment.
func (l *Log) usePrepared() error {
	act := &l.segs[len(l.segs)-1]
	if act.size > 0 {
		return l.cutLocked() // createSegment takes the prepared file
	}
	f, size := l.takePrepared(act.path)
	if f == nil {
		return nil // go on with the plain file
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		f.Close()
		l.err = fmt.Errorf("wal: prepare segment %s: %w", act.path, err)
		return l.err
	}
	if err := l.f.Close(); err != nil {
		l.logger.Warn("wal: closing segment", "err", err)
	}
	l.f, act.alloc = f, size
	l.startPrepare()
	return nil
}

// takePrepared renames the ready prepared file to path and returns it with
// its size; nil if there is none or the rename failed (the caller then
// goes on with a plain file). The caller syncs the directory.
func (l *Log) takePrepared(path string) (File, int64) {
	f, size := l.ready, l.readySize
	if f == nil {
		return nil, 0
	}
	l.ready = nil
	if err := l.fs.Rename(filepath.Join(l.dir, preparedName), path); err != nil {
		f.Close()
		l.logger.Warn("wal: using a prepared segment", "err", err)
		return nil, 0
	}
	return f, size
}

// createSegment makes an empty segment named first the active one, using
// the prepared file if one is ready; it syncs the file and the directory.
func (l *Log) createSegment(first uint64) error {
	path := filepath.Join(l.dir, segmentName(first))
	f, alloc := l.takePrepared(path)
	if f == nil {
		var err error
		f, err = l.fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("wal: create segment: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			l.fs.Remove(path)
			return fmt.Errorf("wal: create segment: sync %s: %w", path, err)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		// The directory entry may or may not survive a crash. An empty last
		// segment is valid at Open either way, but appending to it now
		// could be lost, so stop until a repair creates it again.
		f.Close()
		l.fs.Remove(path)
		l.err = fmt.Errorf("wal: create segment %s: %w", path, err)
		return l.err
	}
	l.f = f
	l.segs = append(l.segs, segment{path: path, first: first, alloc: alloc})
	l.startPrepare()
	return nil
}

// startPrepare starts preparing the next segment file in the background
// if the log preallocates and none is ready or under way. Called with l.mu
// held.
func (l *Log) startPrepare() {
	if !l.prealloc || l.preparing || l.ready != nil || l.closed {
		return
	}
	size := l.nextSize
	l.nextSize = min(l.segLim, 2*size)
	l.preparing = true
	l.prepWG.Add(1)
	go func() {
		defer l.prepWG.Done()
		path := filepath.Join(l.dir, preparedName)
		f, err := zeroFile(l.fs, path, size)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.preparing = false
		switch {
		case err != nil:
			l.logger.Warn("wal: preparing a segment; appends extend files instead", "err", err)
		case l.closed:
			f.Close()
			l.fs.Remove(path)
		default:
			l.ready, l.readySize = f, size
		}
	}()
}

// zeroFile creates path holding size zero bytes, written and synced, so
// that later writes into it change no file metadata.
func zeroFile(fs FS, path string, size int64) (File, error) {
	f, err := fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	zeros := make([]byte, min(size, 1<<20))
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if _, err := f.Write(zeros[:min(int64(len(zeros)), size-off)]); err != nil {
			f.Close()
			return nil, fmt.Errorf("zero-fill %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("zero-fill %s: sync: %w", path, err)
	}
	return f, nil
}

// TruncateBefore deletes, oldest first, every segment all of whose records
// have sequence numbers <= seq. It never deletes the active segment. Call it
// once a snapshot covering seq is durable.
func (l *Log) TruncateBefore(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	n := 0
	for n < len(l.segs)-1 && l.segs[n+1].first-1 <= seq {
		n++
	}
	if n == 0 {
		return nil
	}
	var rmErr error
	removed := 0
	// Oldest first, so a crash part-way leaves a contiguous log.
	for ; removed < n; removed++ {
		s := l.segs[removed]
		if err := l.fs.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			rmErr = fmt.Errorf("wal: truncate: %w", err)
			break
		}
		l.total -= s.size
	}
	l.segs = slices.Clone(l.segs[removed:])
	if err := l.fs.SyncDir(l.dir); err != nil && rmErr == nil {
		rmErr = fmt.Errorf("wal: truncate: %w", err)
	}
	return rmErr
}

// Close closes the log. Appended records are already durable. Calling Close
// again returns nil.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.buf = nil
	if l.ready != nil {
		l.ready.Close()
		l.fs.Remove(filepath.Join(l.dir, preparedName))
		l.ready = nil
	}
	var err error
	if l.f != nil {
		// A clean close trims the active segment's preallocated zeros, so
		// the next Open finds nothing to drop. Best effort: after a failure
		// (l.err) the end is unknown, and Open repairs it either way.
		if s := &l.segs[len(l.segs)-1]; s.alloc > s.size && l.err == nil {
			if terr := l.f.Truncate(s.size); terr == nil && l.f.Sync() == nil {
				s.alloc = 0
			}
		}
		if cerr := l.f.Close(); cerr != nil {
			err = fmt.Errorf("wal: close: %w", cerr)
		}
	}
	l.mu.Unlock()
	l.prepWG.Wait() // a preparation under way removes its own file
	return err
}

// checksum is the CRC-32C of a record: its length and sequence fields (h[0:4]
// and h[8:16]) and its payload.
func checksum(h, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, h[0:4])
	c = crc32.Update(c, castagnoli, h[8:16])
	return crc32.Update(c, castagnoli, payload)
}

type badRecord struct {
	off    int64
	reason string
	fatal  bool // corruption even at the tail (a CRC-valid record out of sequence)
}

// scanner reads records sequentially; its buffers are reused across segments.
type scanner struct {
	br  *bufio.Reader
	buf []byte
}

func newScanner() *scanner {
	return &scanner{br: bufio.NewReaderSize(nil, readBufSize)}
}

// scan reads size bytes of records from r, expecting the first to carry
// sequence number want, and calls fn (if not nil) for each good one. It stops
// at the first bad record and describes it; err is for I/O errors and fn's.
func (sc *scanner) scan(r io.Reader, size int64, want uint64, fn func(uint64, []byte) error) (next uint64, bad *badRecord, err error) {
	sc.br.Reset(r)
	defer sc.br.Reset(nil)
	var h [headerSize]byte
	for off := int64(0); off < size; {
		left := size - off
		if left < headerSize {
			return want, &badRecord{off: off, reason: fmt.Sprintf("short header: %d bytes", left)}, nil
		}
		if _, err := io.ReadFull(sc.br, h[:]); err != nil {
			return want, nil, noEOF(err)
		}
		n := int64(le.Uint32(h[0:]))
		seq := le.Uint64(h[8:])
		if n > left-headerSize {
			return want, &badRecord{off: off,
				reason: fmt.Sprintf("short payload: length %d, %d bytes left", n, left-headerSize)}, nil
		}
		if int64(cap(sc.buf)) < n {
			sc.buf = make([]byte, n)
		}
		p := sc.buf[:n]
		if _, err := io.ReadFull(sc.br, p); err != nil {
			return want, nil, noEOF(err)
		}
		if sum := checksum(h[:], p); sum != le.Uint32(h[4:]) {
			return want, &badRecord{off: off,
				reason: fmt.Sprintf("checksum mismatch: stored %#08x, computed %#08x", le.Uint32(h[4:]), sum)}, nil
		}
		if seq != want {
			return want, &badRecord{off: off, fatal: true,
				reason: fmt.Sprintf("sequence %d, want %d", seq, want)}, nil
		}
		if fn != nil {
			if err := fn(seq, p); err != nil {
				return want, nil, err
			}
		}
		off += headerSize + n
		want++
	}
	if cap(sc.buf) > keepBufCap {
		sc.buf = nil
	}
	return want, nil, nil
}

// noEOF turns an EOF inside a region the caller sized from Stat into an
// error: the file shrank while being read.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// findRecord returns the offset of the first well-formed record in b whose
// sequence number is at least minSeq, or -1. The sequence bound (each record
// is at least headerSize bytes, so at most len(b)/headerSize records fit)
// keeps random bytes from costing a CRC computation per offset.
func findRecord(b []byte, minSeq uint64) int {
	maxSeq := minSeq + uint64(len(b)/headerSize)
	if maxSeq < minSeq {
		maxSeq = math.MaxUint64
	}
	for p := 0; p+headerSize <= len(b); p++ {
		h := b[p : p+headerSize]
		seq := le.Uint64(h[8:])
		if seq < minSeq || seq > maxSeq {
			continue
		}
		n := uint64(le.Uint32(h[0:]))
		if n > uint64(len(b)-p-headerSize) {
			continue
		}
		if checksum(h, b[p+headerSize:p+headerSize+int(n)]) == le.Uint32(h[4:]) {
			return p
		}
	}
	return -1
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func segmentName(first uint64) string {
	return fmt.Sprintf("%020d%s", first, segmentExt)
}

// listSegments returns the segments in dir, oldest first. Files not ending in
// .wal are ignored; a .wal file with a malformed name is an error, since it
// might hold records.
func listSegments(dir string) ([]segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	var segs []segment
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, segmentExt) {
			continue
		}
		base := strings.TrimSuffix(name, segmentExt)
		first, err := strconv.ParseUint(base, 10, 64)
		if len(base) != 20 || err != nil || first == 0 || !e.Type().IsRegular() {
			return nil, fmt.Errorf("wal: open %s: unexpected file %q", dir, name)
		}
		segs = append(segs, segment{path: filepath.Join(dir, name), first: first})
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.first, b.first) })
	return segs, nil
}

func (l *Log) truncateFile(path string, size int64) error {
	f, err := l.fs.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
