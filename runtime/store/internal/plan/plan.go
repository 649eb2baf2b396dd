// Package plan is the store's query planner: it compiles a list query
// against a model's indexes (Compile) and runs it over an index.View
// (Plan.Run): candidate sets counted from the indexes, totals, and one
// method per walk strategy (byName, forward, backwardByGroup,
// sortingGroups). store.List's comment has the strategy. It reads the
// indexes only through index.View, its trees and spans, all concrete
// types, so the per-entry paths cost what they did inside the store.
package plan

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/query/selector"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

type fieldTerm struct {
	ix   int
	op   selector.Operator
	keys []model.Key // sorted
}

type sortKey struct {
	ix   int // position in m.AllIndexes()
	desc bool
}

// Plan is a compiled list query: its terms resolved to index positions
// and keys, its sort made complete.
type Plan struct {
	m      *model.Model
	labels selector.Selector
	fields []fieldTerm
	// ranges are the intervals of the range terms on indexes that have a
	// tree (not metadata.name): one per single-valued index, one per term
	// on a multi-valued one.
	ranges []index.KeyRange
	sorts  []sortKey // complete: ends with the name
	multi  []bool    // per index position: may hold several keys
	// sigs holds, per equality or set label term, the signature bits of
	// its values: a record whose record.LabelSig shares none cannot match.
	sigs []uint32
}

// Need returns the trees (and postings) Run reads, as index.TreeBit
// masks: the creation index (a stream's default order), and those of the
// terms and sort keys.
func (p *Plan) Need() uint64 {
	n := p.termNeed() | index.TreeBit(index.IxCreated)
	for _, sk := range p.sorts {
		if sk.ix != index.IxName {
			n |= index.TreeBit(sk.ix)
		}
	}
	return n
}

// CountNeed returns the trees Count reads: the terms', and the creation
// tree only when no term gives a candidate set (then the count visits
// every object). A count has no order, so no sort key's.
func (p *Plan) CountNeed() uint64 {
	n := p.termNeed()
	sources := len(p.ranges) > 0
	for _, f := range p.fields {
		sources = sources || fieldSource(f.op)
	}
	for _, r := range p.labels {
		sources = sources || labelSource(r.Op)
	}
	if !sources && len(p.labels)+len(p.fields) > 0 {
		n |= index.TreeBit(index.IxCreated)
	}
	return n
}

// labelSource and fieldSource report whether a term with operator op
// gives a candidate set (candidates): equality, set and, for labels,
// exists; a field's range terms always do (p.ranges).
func labelSource(op selector.Operator) bool {
	return op == selector.Equals || op == selector.In || op == selector.Exists
}

func fieldSource(op selector.Operator) bool { return op == selector.Equals || op == selector.In }

// termNeed returns the trees the selector terms read.
func (p *Plan) termNeed() uint64 {
	var n uint64
	if len(p.labels) > 0 {
		n |= index.TreeBit(index.IxLabels)
	}
	// Only an intersection of several terms reads the postings (a single
	// term's total is known from its index).
	if len(p.labels) > 0 && len(p.labels)+len(p.fields) > 1 {
		n |= index.PostsBit
	}
	for _, f := range p.fields {
		n |= index.TreeBit(f.ix)
	}
	return n
}

// Compile resolves sort and field names to indexes and field values to
// keys; unindexed names and unparsable values are *query.ParamError (400),
// every one of them (query.Errors).
func Compile(m *model.Model, q query.Query) (*Plan, error) {
	p := &Plan{m: m, labels: q.Labels, multi: make([]bool, m.NumIndexes())}
	for _, r := range q.Labels {
		if r.Op == selector.Equals || r.Op == selector.In {
			var bits uint32
			for _, val := range r.Values {
				bits |= record.LabelBit(string(model.LabelKey(r.Key, val)))
			}
			p.sigs = append(p.sigs, bits)
		}
	}
	for i := range p.multi {
		p.multi[i] = m.IndexAt(i).Multi
	}
	var errs []error // every bad term, not only the first
	var rangeOf []int
fields:
	for _, r := range q.Fields {
		i, ok := m.IndexPos(r.Key)
		if !ok || i == index.IxLabels {
			errs = append(errs, &query.ParamError{Param: "fieldSelector", Value: r.String(), Reason: fmt.Sprintf("field %s is not indexed", r.Key)})
			continue
		}
		typ := m.IndexAt(i).Type
		if r.Op.IsRange() && !ordered(typ) {
			errs = append(errs, &query.ParamError{Param: "fieldSelector", Value: r.String(),
				Reason: fmt.Sprintf("field %s is a %s index; range terms need a number, string or date-time index", r.Key, typ)})
			continue
		}
		ft := fieldTerm{ix: i, op: r.Op}
		for _, v := range r.Values {
			k, err := model.ParseKey(typ, v)
			if err != nil {
				errs = append(errs, &query.ParamError{Param: "fieldSelector", Value: r.String(), Reason: fmt.Sprintf("field %s: %v", r.Key, err)})
				continue fields
			}
			ft.keys = append(ft.keys, k)
		}
		// Equal instants written differently give one key: a set must
		// not count or visit them twice.
		slices.Sort(ft.keys)
		ft.keys = slices.Compact(ft.keys)
		p.fields = append(p.fields, ft)
		if r.Op.IsRange() && i != index.IxName {
			if rangeOf == nil {
				rangeOf = make([]int, len(p.multi))
			}
			p.addRange(rangeOf, i, r.Op, ft.keys[0])
		}
	}
	seen := map[int]bool{}
	add := func(sk sortKey) {
		if !seen[sk.ix] {
			seen[sk.ix] = true
			p.sorts = append(p.sorts, sk)
		}
	}
	for _, srt := range q.Sorts {
		i, ok := m.IndexPos(srt.Index)
		if !ok || i == index.IxLabels {
			errs = append(errs, &query.ParamError{Param: "sort", Value: srt.String(), Reason: fmt.Sprintf("field %s is not indexed", srt.Index)})
			continue
		}
		add(sortKey{ix: i, desc: srt.Desc})
	}
	if err := query.Join(errs...); err != nil {
		return nil, err
	}
	add(sortKey{ix: index.IxCreated, desc: true})
	add(sortKey{ix: index.IxName})
	// Names are unique: later keys can never break a tie.
	for i, sk := range p.sorts {
		if sk.ix == index.IxName {
			p.sorts = p.sorts[:i+1]
			break
		}
	}
	return p, nil
}

// ordered reports whether range terms may compare values of type t.
func ordered(t model.KeyType) bool {
	switch t {
	case model.String, model.Int, model.Float, model.Time:
		return true
	}
	return false
}

// addRange adds a range term on index position ix to the plan's
// intervals: to the one of ix unless ix is multi-valued. rangeOf holds,
// per index position, the place plus one of its interval, so that many
// terms cost one lookup each.
func (p *Plan) addRange(rangeOf []int, ix int, op selector.Operator, k model.Key) {
	if i := rangeOf[ix]; i > 0 {
		p.ranges[i-1].Add(op, k)
		return
	}
	r := index.KeyRange{Ix: ix}
	r.Add(op, k)
	p.ranges = append(p.ranges, r)
	if !p.multi[ix] {
		rangeOf[ix] = len(p.ranges)
	}
}

// sigMiss reports whether a record with label signature sig surely fails
// the label terms; false means it may match.
func (p *Plan) sigMiss(sig uint32) bool {
	for _, bits := range p.sigs {
		if sig&bits == 0 {
			return true
		}
	}
	return false
}

// Matches reports whether r meets every term of p.
func (p *Plan) Matches(r *record.Record) bool {
	if p.sigMiss(r.Sig) || !p.labels.Matches(r) {
		return false
	}
	var buf [4]model.Key
	for _, f := range p.fields {
		ks := index.Keys(r, f.ix, buf[:0])
		if f.op.IsRange() {
			// Some value in the range (keys order as the values do);
			// no value, no match.
			if !slices.ContainsFunc(ks, func(k model.Key) bool { return f.op.Holds(strings.Compare(string(k), string(f.keys[0]))) }) {
				return false
			}
			continue
		}
		hit := false
		for _, k := range ks {
			if _, found := slices.BinarySearch(f.keys, k); found {
				hit = true
				break
			}
		}
		switch f.op {
		case selector.Equals, selector.In:
			if !hit {
				return false
			}
		default: // NotEquals, NotIn: objects with no value are excluded
			if hit || len(ks) == 0 {
				return false
			}
		}
	}
	return true
}

// compare orders two records by the plan's sort keys. An absent value
// sorts first ascending and last descending.
func (p *Plan) compare(a, b *record.Record) int { return compareBy(p.sorts, a, b) }

func compareBy(sorts []sortKey, a, b *record.Record) int {
	for _, sk := range sorts {
		if sk.ix == index.IxName {
			c := strings.Compare(a.Name, b.Name)
			if sk.desc {
				c = -c
			}
			return c
		}
		ka, oka := index.SortKey(a, sk.ix, sk.desc)
		kb, okb := index.SortKey(b, sk.ix, sk.desc)
		c := 0
		switch {
		case !oka && !okb:
		case !oka:
			c = -1
		case !okb:
			c = 1
		default:
			c = bytes.Compare([]byte(ka), []byte(kb))
		}
		if sk.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// ByName makes p sort by name alone (a watch's initial events).
func (p *Plan) ByName() {
	p.sorts = p.sorts[:0]
	p.sorts = append(p.sorts, sortKey{ix: index.IxName})
}

// sort sorts recs in the plan's order. Each record's first sort key
// (its first eight bytes, as an integer) and tie key are read once up
// front: reaching them through the records costs several pointer hops per
// comparison. The sort moves int32 positions over pointer-free keys, so
// it costs no write barriers while the collector runs.
func (p *Plan) sort(recs []*record.Record) {
	first, rest := p.sorts[0], p.sorts[1:]
	if first.ix == index.IxName || len(recs) < 2 {
		slices.SortFunc(recs, p.compare)
		return
	}
	type keyed struct {
		pre, tie uint64
		n        int // key length; -1: no value
	}
	ks := make([]keyed, len(recs))
	order := make([]int32, len(recs))
	for i, r := range recs {
		k, has := index.SortKey(r, first.ix, first.desc)
		var buf [8]byte
		copy(buf[:], k)
		ks[i] = keyed{pre: binary.BigEndian.Uint64(buf[:]), tie: index.TieKey(record.Creation(r)), n: len(k)}
		if !has {
			ks[i].n = -1
		}
		order[i] = int32(i)
	}
	// The tie key orders as the creation desc that usually comes next.
	tieNext := len(rest) > 0 && rest[0] == sortKey{ix: index.IxCreated, desc: true}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &ks[i], &ks[j]
		c := 0
		switch {
		case a.n >= 0 && b.n >= 0:
			if c = cmp.Compare(a.pre, b.pre); c == 0 {
				if a.n <= 8 && b.n <= 8 {
					c = cmp.Compare(a.n, b.n) // zero padding hid the length
				} else {
					ka, _ := index.SortKey(recs[i], first.ix, first.desc)
					kb, _ := index.SortKey(recs[j], first.ix, first.desc)
					c = strings.Compare(string(ka), string(kb))
				}
			}
		case a.n >= 0:
			c = 1
		case b.n >= 0:
			c = -1
		}
		if first.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		if tieNext && a.tie != b.tie {
			return cmp.Compare(a.tie, b.tie)
		}
		return compareBy(rest, recs[i], recs[j])
	})
	sorted := make([]*record.Record, len(recs))
	for i, o := range order {
		sorted[i] = recs[o]
	}
	copy(recs, sorted)
}
