// Package store is the embedded object store: every object of every model
// in memory, indexed, with every acknowledged write durable on disk.
//
// # Tables
//
// Each model's data is a table: a go-memdb MemDB holding the objects by
// name (go-memdb fixes its schema when a MemDB is created, so a table is
// created when its model is registered and replaced whole when it is
// registered again), plus one copy-on-write B-tree per secondary index
// (index.go). A memdb radix entry costs ~450 bytes and several microseconds
// to insert, ten times over for a model with nine indexes; a B-tree entry
// is 24 bytes, and a tree copy is O(1), which is how readers get a
// consistent view without locking the writer out.
//
// A table whose model is not registered (a stopped plugin, or data found
// at start-up before its plugin registers) is kept "raw": records by name
// only. Register decodes every record with the model (on every core),
// sorts each index's entries (build.go), builds each tree bottom-up from
// them, and swaps the new state in; meanwhile reads and writes of the
// model fail with ErrNotReady (Reserve makes that so before a server
// starts serving).
//
// A record holds the object's JSON as served plus the keys its indexes and
// selectors need, extracted once at write time, so lists never decode JSON.
// Index entries with equal keys order by creation desc, then name asc, so
// walking a tree forward yields ties in the default list order. The trees
// keep subtree counts, so the number of entries in any key range (the
// total of a one-term list, the size of a candidate set, the objects a
// range term such as spec.age>=18 allows: ranges.go) is found without
// visiting them, and subtree summaries of the entries' label signatures,
// so a list passes over whole nodes that cannot match its label terms
// (list.go). Each label value also keeps a bitmap of its objects' ids
// (postings.go), so several label terms intersect word by word. A hash
// map mirrors the name index for point reads.
//
// # Writes
//
// Update writes an object's main resource and keeps its stored status;
// UpdateStatus writes the status and keeps the rest (docs/api.md,
// Status). Enforced here, every writer (HTTP API, typed client,
// controller) gets the same rule.
//
// One committer goroutine owns all writes. Callers validate, encode and
// extract keys in their own goroutines and hand the committer a closure
// that checks preconditions (version, unique keys) against the write
// transaction and writes only if they hold. They also frame the record
// for the log, so the committer, the one serial stage, only applies. The
// committer applies each write as it arrives to an open batch (one memdb
// transaction per table, and the table's trees) and hands the batch to
// the syncer as soon as the syncer is idle, committing memdb then; a small
// batch first waits briefly for as many writers as the last batch carried
// (commit.go's gather), which on busy cores saves an fsync's CPU per write. The
// syncer appends the batch to the write-ahead log with one write and one
// fsync, and only then publishes it (names, views, watch events) and
// answers its callers. So the writes that arrive during an fsync are
// applied during it and share the next one (group commit), with one
// transaction however they trickle in (up to 512 writes), and nothing that
// is not durable is ever visible.
//
// The committer's memdb and trees run ahead of the log; readers see views.
// A view is a memdb snapshot plus one tree copy per index, numbered by the
// last batch it holds. A reader whose view lacks a durable batch copies
// the state itself when nothing beyond the log is applied and no batch is
// open on the table; otherwise it asks the committer to copy when it
// hands off its open (or next) batch and waits for that batch to be
// durable (at most two fsyncs). It never waits for the committer's lock,
// which an open batch holds through an fsync. Copies are made only when asked for,
// because every copy makes the next writes copy the nodes they touch.
//
// If the log fails (a full disk, a failing fsync), the log truncates the
// failed batch away and the store fails every batch in flight, rebuilds
// each touched table from its published names, which hold exactly what is
// durable, and refuses writes (*UnavailableError; Health reports it)
// until a probe finds the disk writable again; then writes resume by
// themselves (health.go). A failed apply (a bug) refuses writes until
// restart. Control operations
// (register, unregister, watch subscription, snapshot) wait until nothing
// is in flight and run alone.
//
// # Persistence
//
// The data directory holds wal/ (runtime/store/wal) and snapshots/
// (runtime/store/snapshot) and a LOCK file (runtime/store/dirlock). When the
// log grows past Options.SnapshotBytes, and past the newest snapshot's size
// (so a large store does not rewrite every object each time a small log
// fills: the same rule as Redis's AOF rewrite at 100% growth), the
// committer notes the last log record, cuts the log, and writes memdb's
// point-in-time views to a snapshot in the background; once it is durable
// the covered log segments are deleted. Open loads the newest valid snapshot and replays the log
// after it. Durability sits behind these two packages so that a later
// shared backend (etcd) can feed the same tables from its change feed.
//
// # Reads
//
// Get, List and Watch read lock-free MVCC snapshots. Records returned are
// shared and must not be modified; Decode returns a fresh object. See List
// for the query strategy.
package store
