// Package snapshot writes and reads point-in-time snapshot files: a stream of
// opaque, caller-tagged records covering every write-ahead-log record up to a
// sequence number.
//
// It knows nothing about models or objects. The store's group committer in
// runtime/store calls [Write] with the last WAL sequence number the in-memory
// state includes and adds one record per object; after Write returns it may
// truncate the WAL (wal.Log.TruncateBefore) and [Prune] old snapshots. At
// start-up it calls [Load] and replays the WAL after the returned sequence.
//
// # Files
//
// A snapshot lives in <dir>/snapshot-<seq as %020d>.snap, seq being the last
// WAL sequence number it covers. It is written to a temporary file
// snapshot-<seq>-<random>.tmp, fsynced, renamed into place, and the directory
// is fsynced, so a snapshot file either is complete or does not exist under its
// final name. [Prune] removes leftover .tmp files.
//
// # Format (version 1)
//
// All integers are little-endian; CRCs are CRC-32C (Castagnoli).
//
//	header, 20 bytes:
//	  0   8  magic "SVCSNAP\x00"
//	  8   4  format version, uint32 = 1
//	  12  8  seq, uint64 (must match the file name)
//	records, each 9 bytes + payload:
//	  0   4  payload length n, uint32 (0xFFFFFFFF is reserved for the trailer)
//	  4   4  CRC of the length field, the kind byte and the payload
//	  8   1  kind, chosen by the caller
//	  9   n  payload
//	trailer, 16 bytes, then end of file:
//	  0   4  0xFFFFFFFF
//	  4   8  number of records, uint64
//	  12  4  CRC of the header and of every record's 9-byte frame, in order
//
// The kind byte is the caller's: it numbers its record types and must never
// renumber them. The trailer makes truncation at a record boundary
// detectable (a missing trailer or a wrong count), and its CRC chains the
// per-record CRCs, so dropped, repeated or reordered records are found too.
//
// # Loading
//
// [Load] picks the newest snapshot that verifies completely and falls back to
// older ones, logging a warning (slog.Default) for each damaged file. It
// reads a file twice: a first pass only checks it, and only if every check
// passes does a second pass deliver the records, so the callback never sees
// records of a file that turns out to be damaged. A fallback is only safe if
// the WAL still holds the records after the older snapshot; wal.Log.Replay
// reports wal.ErrTruncated when it does not.
package snapshot
