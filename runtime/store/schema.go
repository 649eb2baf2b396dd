package store

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
)

// Table and index names inside each model's MemDB.
const (
	tableObjects = "objects"
	tableCounts  = "counts"
	indexID      = "id" // memdb's required primary index: metadata.name

	numDefaultIndexes = 4 // name, labels, creation, deletion (model.DefaultIndexes)
)

// Entry tags of a model's own indexes: an object with no value still gets
// one entry, tagged absent, so that walking the index visits every object
// and absent values sort first ascending and last descending.
const (
	tagAbsent  = 0x00
	tagPresent = 0x01
)

// rawSchema is the schema of a table whose model is not registered: the
// data is kept (a stopped plugin keeps its objects) but only by name.
func rawSchema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		tableObjects: {Name: tableObjects, Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: single(func(r *Record) []byte { return []byte(model.StringKey(r.Name)) })},
		}},
	}}
}

// modelSchema turns a model's index declarations into one MemDB schema.
// Every secondary entry ends with the inverted creation time, and memdb
// appends the name to non-unique entries, so walking any index ascending
// yields ties in the list default order (creation desc, name asc).
//
// Uniqueness of secondary indexes is checked by the write path (memdb does
// not enforce it), so every secondary index is non-unique here.
func modelSchema(m *model.Model) *memdb.DBSchema {
	idx := map[string]*memdb.IndexSchema{
		indexID: rawSchema().Tables[tableObjects].Indexes[indexID],
		model.IndexLabels: {Name: model.IndexLabels, AllowMissing: true, Indexer: multi(func(r *Record) [][]byte {
			out := make([][]byte, 0, len(r.labels)/2)
			for i := 0; i < len(r.labels); i += 2 {
				out = append(out, []byte(model.LabelKey(r.labels[i], r.labels[i+1])))
			}
			return out
		})},
		model.IndexCreationTimestamp: {Name: model.IndexCreationTimestamp, Indexer: single(func(r *Record) []byte {
			return invert(nil, r.created)
		})},
		model.IndexDeletionTimestamp: {Name: model.IndexDeletionTimestamp, AllowMissing: true, Indexer: single(func(r *Record) []byte {
			if r.deletion == "" {
				return nil
			}
			return invert([]byte(r.deletion), r.created)
		})},
	}
	for i := range m.Indexes {
		name := memdbIndex(numDefaultIndexes + i)
		idx[name] = &memdb.IndexSchema{Name: name, Indexer: multi(func(r *Record) [][]byte {
			ks := r.keys[i]
			if len(ks) == 0 {
				return [][]byte{invert([]byte{tagAbsent}, r.created)}
			}
			out := make([][]byte, len(ks))
			for j, k := range ks {
				b := make([]byte, 0, 1+len(k)+len(r.created)+len(r.Name)+2)
				b = append(b, tagPresent)
				b = append(b, k...)
				out[j] = invert(b, r.created)
			}
			return out
		})}
	}
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		tableObjects: {Name: tableObjects, Indexes: idx},
		tableCounts: {Name: tableCounts, Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
		}},
	}}
}

// memdbIndex names index number ix of model.AllIndexes inside memdb. A
// model's own indexes get positional names, so no declared name can clash
// with memdb's reserved "id" or its "_prefix" suffix.
func memdbIndex(ix int) string {
	switch ix {
	case 0:
		return indexID
	case 1:
		return model.IndexLabels
	case 2:
		return model.IndexCreationTimestamp
	case 3:
		return model.IndexDeletionTimestamp
	}
	return "c" + strconv.Itoa(ix-numDefaultIndexes)
}

// invert appends the bitwise complement of k to b.
func invert(b []byte, k model.Key) []byte {
	for i := 0; i < len(k); i++ {
		b = append(b, ^k[i])
	}
	return b
}

// counter is a row of the counts table: how many objects have a label
// ("l" + key + 0 + value), a label key ("k" + key), or exist at all ("#").
type counter struct {
	Key string
	N   int64
}

// rawArg accepts an already encoded key, so the query code controls the
// exact bytes looked up.
func rawArg(args []any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("store: want one key argument, got %d", len(args))
	}
	switch a := args[0].(type) {
	case []byte:
		return a, nil
	case model.Key:
		return []byte(a), nil
	case string:
		return []byte(a), nil
	}
	return nil, fmt.Errorf("store: key argument of type %T", args[0])
}

type singleIndexer func(*Record) []byte

func single(f func(*Record) []byte) singleIndexer { return f }

func (f singleIndexer) FromArgs(args ...any) ([]byte, error)       { return rawArg(args) }
func (f singleIndexer) PrefixFromArgs(args ...any) ([]byte, error) { return rawArg(args) }
func (f singleIndexer) FromObject(o any) (bool, []byte, error) {
	b := f(o.(*Record))
	// Cap the slice: memdb appends the primary key to non-unique entries
	// and must not write into memory the record still uses.
	return b != nil, b[:len(b):len(b)], nil
}

type multiIndexer func(*Record) [][]byte

func multi(f func(*Record) [][]byte) multiIndexer { return f }

func (f multiIndexer) FromArgs(args ...any) ([]byte, error)       { return rawArg(args) }
func (f multiIndexer) PrefixFromArgs(args ...any) ([]byte, error) { return rawArg(args) }
func (f multiIndexer) FromObject(o any) (bool, [][]byte, error) {
	bs := f(o.(*Record))
	for i, b := range bs {
		bs[i] = b[:len(b):len(b)]
	}
	return len(bs) > 0, bs, nil
}

// newDB creates a MemDB that does not track mutations for watch channels.
// The store never uses memdb's watch channels (events come from the
// committer), and a primary MemDB pays on every write for the channels it
// closes at commit; a snapshot of an empty MemDB is a full, writable MemDB
// that skips that work.
func newDB(schema *memdb.DBSchema) (*memdb.MemDB, error) {
	db, err := memdb.NewMemDB(schema)
	if err != nil {
		return nil, err
	}
	return db.Snapshot(), nil
}
