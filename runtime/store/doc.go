// Package store is the embedded object store: every object of every model
// in memory, indexed, with every acknowledged write durable on disk.
//
// # What holds what, and why
//
// go-memdb holds each model's objects by name, and nothing else: its
// MVCC snapshots give lists sorted by name, snapshots and failed-batch
// rebuilds a point-in-time view for free, and restore inserts go straight
// into it. go-memdb fixes its schema when a MemDB is created, so a table
// is created when its model is registered and replaced whole when it is
// registered again.
//
// Every secondary index (labels, timestamps, the model's fields) is a
// copy-on-write B+tree of our own (internal/cowtree, internal/index). A memdb
// radix entry costs ~450 bytes and several microseconds to insert, ten
// times over for a model with nine indexes; a tree entry is 24 bytes, and
// a tree copy is O(1), which is how readers get a consistent view without
// locking the writer out. Moving the secondary indexes out of memdb took
// the heap per object from 5.1 to 1.9 KB, a get from 0.81 to 0.27 µs,
// two-term lists from 8.5 to 0.8 ms and 16-writer durable creates from
// 7.7k to 9.6k/s (commit 27cf1f2). The tree is our own rather than
// tidwall/btree because that could take a built index only one entry at a
// time: the O(n) bulk build took BenchmarkIndexBuild_1M from 10.6 to 5.95
// s (4d7b519), and its subtree counts and label summaries answer totals
// and skip non-matching nodes (below). Label postings (internal/index) took
// BenchmarkListPage20TwoLabels_100k from 1.4-2.8 ms to 42-51 µs
// (1002f99). A hash map of names (store.go's names) answers point reads:
// a hash lookup costs a fraction of a memdb transaction plus radix walk.
//
// # Layout
//
// Three packages below this one each have one job, with small concrete
// interfaces between them (no interface values on per-entry paths: Go
// inlines across packages, not through interfaces):
//
//   - internal/record: the Record (store.Record is an alias) and its
//     index keys; everything else reads it.
//   - internal/index: the indexes (entries, trees, spans, label postings,
//     key ranges, the memdb name table), their bulk build and Reindex, the
//     committer's writable Set and the readers' immutable View.
//   - internal/plan: the query planner over an index.View (candidate
//     sets, totals, one method per walk strategy).
//
// This package is the commit path and the facade: store.go (tables,
// Load/Start/Close), register.go (a model's bulk build, on every core),
// views.go (handing readers views), list.go and watch.go (the read API),
// write.go (the write operations), commit.go (the committer and the
// syncer), health.go (refusing and resuming writes), persist.go (restore
// and snapshot hand-over), frame.go (how a record is framed for the log
// and snapshots; not runtime/codec, which decodes request bodies).
// Durability sits behind one interface, internal/durable.Backend; its
// first implementation is internal/durable/disk (wal/, snapshot/, dirlock/
// below). A shared backend (etcd) is meant to be the second: the store
// proposes framed batches, the backend orders and commits them and
// returns a revision, and at start it lists its state into the bulk build.
//
// # Tables
//
// A table whose model is not registered (a stopped plugin, or data found
// at start-up before its plugin registers) is kept "raw": records by name
// only. Register decodes every record with the model (on every core),
// sorts each index's entries (internal/index/build.go), builds each tree
// bottom-up from them, and swaps the new state in; meanwhile reads and
// writes of the model fail with ErrNotReady (Reserve makes that so before
// a server starts serving).
//
// A record holds the object's JSON as served plus the keys its indexes and
// selectors need, extracted once at write time, so lists never decode JSON.
// Index entries with equal keys order by creation desc, then name asc, so
// walking a tree forward yields ties in the default list order. The trees
// keep subtree counts, so the number of entries in any key range (the
// total of a one-term list, the size of a candidate set, the objects a
// range term such as spec.age>=18 allows: internal/index/ranges.go) is
// found without visiting them, and subtree summaries of the entries'
// label signatures, so a list passes over whole nodes that cannot match
// its label terms (internal/plan). Each label value also keeps a bitmap
// of its objects' ids (internal/index/postings.go), so several label
// terms intersect word by word. A hash map mirrors the name index for
// point reads.
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
// (runtime/store/snapshot) and a LOCK file (runtime/store/dirlock), all
// managed by internal/durable/disk. Load restores every committed record
// by name into raw tables (the backend replays them; persist.go decodes
// and inserts them on two goroutines). The disk backend reads the log
// once first and then delivers only each object's last record, so a
// restart from a long log decodes no version it would throw away, and
// leaves the survivors packed instead of scattered among dead versions. After each hand-off the committer
// asks the backend whether a snapshot is due; if so, with nothing in
// flight, it hands the backend memdb's point-in-time views, which disk
// writes in the background before deleting the covered log segments.
//
// # Lifecycle
//
// Load starts no goroutine that outlives it; Start starts the committer
// and the syncer, and Close stops them, waits for a running snapshot and
// releases the backend. Open is Load then Start, for tests and tools.
//
// # Reads
//
// Get, List and Watch read lock-free MVCC snapshots. Records returned are
// shared and must not be modified; Decode returns a fresh object. See List
// for the query strategy.
package store
