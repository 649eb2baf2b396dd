package index

import (
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Keys appends the record's keys for index number ix of m.AllIndexes()
// to dst: the defaults first (name, labels, creation, deletion), then the
// model's own. Labels are neither sorted nor field-selected, so IxLabels
// is never asked for.
func Keys(r *record.Record, ix int, dst []model.Key) []model.Key {
	switch ix {
	case IxName:
		return append(dst, model.StringKey(r.Name))
	case IxCreated:
		if c := record.Creation(r); c != "" {
			return append(dst, c)
		}
		return dst
	case IxDeleted:
		if d := record.Deletion(r); d != "" {
			return append(dst, d)
		}
		return dst
	}
	return record.AppendKeys(r, ix-NumDefault, dst)
}

// SortKey is the key a record sorts by on index ix: its only key, or for a
// multi-valued index the smallest (ascending) or largest (descending).
func SortKey(r *record.Record, ix int, desc bool) (model.Key, bool) {
	switch ix {
	case IxName:
		return model.StringKey(r.Name), true
	case IxCreated:
		c := record.Creation(r)
		return c, c != ""
	case IxDeleted:
		d := record.Deletion(r)
		return d, d != ""
	}
	return record.EdgeKey(r, ix-NumDefault, desc)
}
