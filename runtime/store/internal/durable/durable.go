// Package durable is the seam between the store's in-memory indexed state
// and whatever makes its writes durable.
//
// The store frames each write as a record (runtime/store's frame.go) and
// proposes a batch of them to a Backend, which orders them after every
// batch committed before, makes them durable and answers with a revision;
// only then does the store publish the batch. On start the backend gives
// back every committed record in order, which the store bulk-builds its
// tables and indexes from. Records are opaque bytes here: a backend knows
// nothing of models, indexes or queries.
//
// The first implementation, disk, is a write-ahead log plus snapshots in a
// local data directory. A shared backend (etcd, docs/research on scale-out)
// would be the second: Commit a transaction that returns etcd's revision,
// Load a range read at one revision, and compaction its own business (its
// SnapshotDue never true).
package durable

// Backend orders and durably commits the store's writes, and gives them
// back at start. The store calls Load once, before anything else; then
// Commit from one goroutine (the syncer), one batch at a time; SnapshotDue
// and Snapshot from another (the committer), between batches.
type Backend interface {
	// Load replays every committed record, in commit order, into apply. An
	// error from apply stops it and is returned wrapped.
	Load(apply func(payload []byte) error) error
	// Commit makes payloads durable, in order, after every batch committed
	// before, and returns the revision of the last one. On an error none of
	// them is durable (a failed batch is cut away) and the store refuses
	// writes until Probe succeeds.
	Commit(payloads [][]byte) (rev uint64, err error)
	// Probe reports whether a backend whose Commit failed can take writes
	// again (a disk with room, a reachable cluster).
	Probe() error
	// SnapshotDue counts bytes handed to Commit and reports whether the
	// store should offer its state now (see Snapshot).
	SnapshotDue(bytes int64) bool
	// Snapshot is offered the state as of the last committed batch, with
	// nothing in flight; a backend that keeps its own history short
	// ignores it. It may write in the background: Wait waits for that.
	Snapshot(state State)
	// Wait waits for a snapshot being written.
	Wait()
	// Close waits for a snapshot being written and releases the backend.
	Close() error
}

// State writes every record of the store's state through add. add copies
// what it keeps, so one buffer may serve every record.
type State func(add func(payload []byte) error) error
