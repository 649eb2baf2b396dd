package index

import (
	"errors"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// The objects table of each model's MemDB, indexed by name (memdb's
// required "id" index). Secondary indexes live in the trees (entry.go).
const (
	Objects = "objects"
	NameID  = "id"

	NumDefault = 4 // name, labels, creation, deletion (model.DefaultIndexes)
)

func objectsSchema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		Objects: {Name: Objects, Indexes: map[string]*memdb.IndexSchema{
			NameID: {Name: NameID, Unique: true, Indexer: nameIndexer{}},
		}},
	}}
}

// NewDB creates a MemDB that does not track mutations for watch channels.
// The store never uses memdb's watch channels (events come from the
// committer), and a primary MemDB pays on every write for the channels it
// closes at commit; a snapshot of an empty MemDB is a full, writable MemDB
// that skips that work.
func NewDB() *memdb.MemDB {
	db, err := memdb.NewMemDB(objectsSchema())
	if err != nil {
		panic("store: objects schema: " + err.Error()) // a static schema; cannot fail
	}
	return db.Snapshot()
}

// nameIndexer indexes a record by model.StringKey(name). Lookups pass the
// name as a string, or an already encoded key as []byte (prefix scans).
type nameIndexer struct{}

func (nameIndexer) FromObject(o any) (bool, []byte, error) {
	// One exact allocation (not a string and then a copy of it): the key
	// stays in memdb's tree for as long as the object is stored.
	return true, model.AppendStringKey(nil, o.(*record.Record).Name), nil
}

func (nameIndexer) FromArgs(args ...any) ([]byte, error) { return nameArg(args) }

func (nameIndexer) PrefixFromArgs(args ...any) ([]byte, error) { return nameArg(args) }

func nameArg(args []any) ([]byte, error) {
	if len(args) == 1 {
		switch a := args[0].(type) {
		case string:
			return model.AppendStringKey(nil, a), nil
		case []byte:
			return a, nil
		}
	}
	return nil, errNameArg
}

var errNameArg = errors.New("store: name index takes one string or []byte argument")

// AllRecords returns every record of db in name order.
func AllRecords(db *memdb.MemDB) ([]*record.Record, error) {
	it, err := db.Txn(false).Get(Objects, NameID+"_prefix", []byte(nil))
	if err != nil {
		return nil, err
	}
	var recs []*record.Record
	for raw := it.Next(); raw != nil; raw = it.Next() {
		recs = append(recs, raw.(*record.Record))
	}
	return recs, nil
}
