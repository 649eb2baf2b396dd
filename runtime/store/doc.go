// Package store is the embedded object store: every object of every model
// in memory, indexed, with every acknowledged write durable on disk.
//
// # Tables
//
// go-memdb fixes its schema when a MemDB is created, so each model's data
// lives in a MemDB of its own (a table here), created when the model is
// registered and replaced whole when it is registered again. A table whose
// model is not registered (a stopped plugin, or data found at start-up
// before its plugin registers) is kept "raw": records indexed by name only.
// Register decodes every record with the model (on every core), builds the
// model's indexes into a fresh MemDB and swaps it in; meanwhile reads and
// writes of the model fail with ErrNotReady.
//
// A record holds the object's JSON as served plus the keys its indexes and
// selectors need, extracted once at write time, so lists never decode JSON.
// Secondary index entries are "value, inverted creation time" and memdb
// appends the name, so walking any index forward yields ties in the default
// list order. A counts table, updated in the same transaction, counts
// objects per label pair, per label key and in total, which gives the list
// total of a query with at most one label term without visiting matches.
// A hash map mirrors the name index for point reads.
//
// # Writes
//
// One committer goroutine owns all writes. Callers validate, encode and
// extract keys in their own goroutines and hand the committer a closure
// that checks preconditions (version, unique keys) against the write
// transaction and writes only if they hold. The committer drains whatever
// is queued (up to 512 writes), applies it in one memdb transaction per
// table, appends the batch to the write-ahead log with one write and one
// fsync, and only then commits memdb, publishes watch events and answers
// the callers: readers never see a write that is not durable, and
// concurrent writers share one fsync (group commit). If the log fails, the
// store refuses every later write until restart.
//
// # Persistence
//
// The data directory holds wal/ (runtime/store/wal) and snapshots/
// (runtime/store/snapshot) and a LOCK file (runtime/store/dirlock). When the
// log grows past Options.SnapshotBytes the committer notes the last log
// record, cuts the log, and writes memdb's point-in-time views to a
// snapshot in the background; once it is durable the covered log segments
// are deleted. Open loads the newest valid snapshot and replays the log
// after it. Durability sits behind these two packages so that a later
// shared backend (etcd) can feed the same tables from its change feed.
//
// # Reads
//
// Get, List and Watch read lock-free MVCC snapshots. Records returned are
// shared and must not be modified; Decode returns a fresh object. See List
// for the query strategy.
package store
