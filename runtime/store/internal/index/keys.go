package index

import (
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Keys returns the record's keys for index number ix of
// m.AllIndexes(): the defaults first (name, labels, creation, deletion),
// then the model's own. Labels are neither sorted nor field-selected, so
// IxLabels is never asked for.
func Keys(r *record.Record, ix int) []model.Key {
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
	return r.Keys[ix-NumDefault]
}

// SortKey is the key a record sorts by on index ix: its only key, or for a
// multi-valued index the smallest (ascending) or largest (descending).
func SortKey(r *record.Record, ix int, desc bool) (model.Key, bool) {
	switch ix {
	case IxName:
		return model.StringKey(r.Name), true
	case IxCreated:
		return r.Creation, r.Creation != ""
	case IxDeleted:
		return r.Deletion, r.Deletion != ""
	}
	ks := Keys(r, ix)
	if len(ks) == 0 {
		return "", false
	}
	if desc {
		return ks[len(ks)-1], true
	}
	return ks[0], true
}
