package store

import "github.com/svcrun/svc/runtime/store/internal/record"

// Record is one stored object: its JSON exactly as served (Name, Version,
// Data), plus the keys its indexes need, extracted once at write time so
// that queries never decode JSON. A Record is shared by readers and must
// never be modified; writes build a new one. It is defined in
// internal/record so that the store's index and planner packages can read
// those keys.
type Record = record.Record
