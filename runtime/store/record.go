package store

import (
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Record is one stored object: its JSON exactly as served (Name, Version,
// Data), plus the keys its indexes need, extracted once at write time so
// that queries never decode JSON. A Record is shared by readers and must
// never be modified; writes build a new one. It is defined in
// internal/record so that the store's index and planner packages can read
// those keys.
type Record = record.Record

// indexKeys returns the record's keys for index number ix of
// m.AllIndexes(): the defaults first (name, labels, creation, deletion),
// then the model's own. Labels are neither sorted nor field-selected, so
// ixLabels is never asked for.
func indexKeys(r *Record, ix int) []model.Key {
	switch ix {
	case 0:
		return []model.Key{model.StringKey(r.Name)}
	case 2:
		if r.Creation == "" {
			return nil
		}
		return []model.Key{r.Creation}
	case 3:
		if r.Deletion == "" {
			return nil
		}
		return []model.Key{r.Deletion}
	}
	return r.Keys[ix-numDefaultIndexes]
}

// sortKeyOf is the key a record sorts by on index ix: its only key, or for a
// multi-valued index the smallest (ascending) or largest (descending).
func sortKeyOf(r *Record, ix int, desc bool) (model.Key, bool) {
	switch ix {
	case ixName:
		return model.StringKey(r.Name), true
	case ixCreated:
		return r.Creation, r.Creation != ""
	case ixDeleted:
		return r.Deletion, r.Deletion != ""
	}
	ks := indexKeys(r, ix)
	if len(ks) == 0 {
		return "", false
	}
	if desc {
		return ks[len(ks)-1], true
	}
	return ks[0], true
}
