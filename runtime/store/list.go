package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/query/selector"
)

// Query is the list request the store executes.
type Query = query.Query

// List returns one page of the objects matching q, in q's order, with the
// total number of matches.
//
// Strategy. Every plan needs the total, so the choice is between
//   - collect: take the candidates of the most selective indexed term
//     (label or field equality / set / label exists), filter them by every
//     term, sort, slice the page. Cost ~ candidates.
//   - stream: walk the first sort key's index in order, test each object
//     against the terms, skip the offset, take the page, and stop. Cost ~
//     (offset+size) / selectivity. It is chosen when it is cheaper and the
//     total is known without visiting the matches: no terms (object count)
//     or one label term (the counts table), else the total is counted over
//     the smallest candidate set first.
//
// Ties within the first sort key are ordered by the remaining keys; indexes
// already deliver the default tail (creation desc, name asc) when walked
// ascending.
func (s *Store) List(ctx context.Context, m *model.Model, q Query) (query.ListResult[*Record], error) {
	_, st, err := s.ready(m)
	if err != nil {
		return query.ListResult[*Record]{}, err
	}
	p, err := compile(m, q)
	if err != nil {
		return query.ListResult[*Record]{}, err
	}
	page, size := max(q.Page, 1), q.Size
	txn := st.db.Txn(false)
	items, total, err := p.run(ctx, txn, page, size)
	if err != nil {
		return query.ListResult[*Record]{}, fmt.Errorf("store: list %s: %w", m.Plural, err)
	}
	return query.NewListResult(page, size, total, items), nil
}

type fieldTerm struct {
	ix   int
	op   selector.Operator
	keys []model.Key // sorted
}

type sortKey struct {
	ix   int // position in m.AllIndexes()
	desc bool
}

type plan struct {
	m      *model.Model
	labels selector.Selector
	fields []fieldTerm
	sorts  []sortKey // complete: ends with the name
	multi  []bool    // per index position: may hold several keys
}

const (
	ixName    = 0
	ixLabels  = 1
	ixCreated = 2
	ixDeleted = 3
)

// compile resolves sort and field names to indexes and field values to
// keys; unindexed names and unparsable values are *query.ParamError (400).
func compile(m *model.Model, q Query) (*plan, error) {
	all := m.AllIndexes()
	p := &plan{m: m, labels: q.Labels, multi: make([]bool, len(all))}
	pos := make(map[string]int, len(all))
	for i, ix := range all {
		pos[ix.Name] = i
		p.multi[i] = ix.Multi
	}
	for _, r := range q.Fields {
		i, ok := pos[r.Key]
		if !ok || i == ixLabels {
			return nil, &query.ParamError{Param: "fieldSelector", Value: r.String(), Reason: fmt.Sprintf("field %s is not indexed", r.Key)}
		}
		ft := fieldTerm{ix: i, op: r.Op}
		for _, v := range r.Values {
			k, err := model.ParseKey(all[i].Type, v)
			if err != nil {
				return nil, &query.ParamError{Param: "fieldSelector", Value: r.String(), Reason: fmt.Sprintf("field %s: %v", r.Key, err)}
			}
			ft.keys = append(ft.keys, k)
		}
		slices.Sort(ft.keys)
		p.fields = append(p.fields, ft)
	}
	seen := map[int]bool{}
	add := func(sk sortKey) {
		if !seen[sk.ix] {
			seen[sk.ix] = true
			p.sorts = append(p.sorts, sk)
		}
	}
	for _, srt := range q.Sorts {
		i, ok := pos[srt.Index]
		if !ok || i == ixLabels {
			return nil, &query.ParamError{Param: "sort", Value: srt.String(), Reason: fmt.Sprintf("field %s is not indexed", srt.Index)}
		}
		add(sortKey{ix: i, desc: srt.Desc})
	}
	add(sortKey{ix: ixCreated, desc: true})
	add(sortKey{ix: ixName})
	// Names are unique: later keys can never break a tie.
	for i, sk := range p.sorts {
		if sk.ix == ixName {
			p.sorts = p.sorts[:i+1]
			break
		}
	}
	return p, nil
}

func (p *plan) matches(r *Record) bool {
	if !p.labels.Matches(r) {
		return false
	}
	for _, f := range p.fields {
		ks := r.indexKeys(f.ix)
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
func (p *plan) compare(a, b *Record) int {
	for _, sk := range p.sorts {
		if sk.ix == ixName {
			c := strings.Compare(a.Name, b.Name)
			if sk.desc {
				c = -c
			}
			return c
		}
		ka, oka := a.sortKey(sk.ix, sk.desc)
		kb, okb := b.sortKey(sk.ix, sk.desc)
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

// source is a set of candidates named by index prefixes.
type source struct {
	index    string
	prefixes [][]byte
	count    int64 // exact, or an upper estimate when !exact
	exact    bool
	// dedupe: an object may appear under several prefixes (a set term on
	// a multi-valued index). A label has one value, so label sources never
	// repeat an object.
	dedupe bool
}

const (
	probeLimit = 4096 // field candidates counted exactly up to this many
	// collectLimit: below this many candidates collecting is always cheap.
	collectLimit = 1024
)

func (p *plan) run(ctx context.Context, txn *memdb.Txn, page, size int) ([]*Record, int64, error) {
	all := count(txn, allCounter)
	var best *source
	consider := func(src *source) {
		if best == nil || src.count < best.count {
			best = src
		}
	}
	for _, r := range p.labels {
		switch r.Op {
		case selector.Equals, selector.In:
			src := &source{index: model.IndexLabels, exact: true}
			for _, v := range r.Values {
				src.prefixes = append(src.prefixes, []byte(model.LabelKey(r.Key, v)))
				src.count += count(txn, labelCounter(r.Key, v))
			}
			consider(src)
		case selector.Exists:
			consider(&source{index: model.IndexLabels, exact: true,
				prefixes: [][]byte{[]byte(model.LabelKeyPrefix(r.Key))}, count: count(txn, keyCounter(r.Key))})
		}
	}
	for _, f := range p.fields {
		if f.op != selector.Equals && f.op != selector.In {
			continue
		}
		src := &source{index: memdbIndex(f.ix), exact: true, dedupe: p.multi[f.ix] && len(f.keys) > 1}
		for _, k := range f.keys {
			src.prefixes = append(src.prefixes, fieldPrefix(f.ix, k))
		}
		n, exact, err := probe(txn, src, probeLimit)
		if err != nil {
			return nil, 0, err
		}
		src.count, src.exact = n, exact
		if !exact {
			src.count = all
		}
		consider(src)
	}

	total, known := int64(-1), false
	switch {
	case len(p.labels) == 0 && len(p.fields) == 0:
		total, known = all, true
	case len(p.labels) == 1 && len(p.fields) == 0:
		total, known = p.labelTotal(txn, all), true
	}

	first := p.sorts[0]
	streamable := size > 0 && first.ix != ixDeleted && !p.multi[first.ix]
	offset := int64(page-1) * int64(size)
	collect := !streamable
	if best != nil && !collect {
		matches := best.count
		if known {
			matches = total
		}
		streamCost := (offset + int64(size)) * all / max(matches, 1)
		collect = best.count <= collectLimit || best.count*3 <= streamCost
	}
	if collect {
		return p.collect(ctx, txn, best, offset, size)
	}
	if !known {
		// The page is cheap to find by streaming but the total is not
		// known: count the matches over the smallest candidate set.
		var err error
		if total, err = p.countMatches(ctx, txn, best); err != nil {
			return nil, 0, err
		}
	}
	items, err := p.stream(ctx, txn, offset, size)
	return items, total, err
}

// labelTotal counts matches of the single label term from the counts
// table; objects without the label match != and notin.
func (p *plan) labelTotal(txn *memdb.Txn, all int64) int64 {
	r := p.labels[0]
	var n int64
	for _, v := range r.Values {
		n += count(txn, labelCounter(r.Key, v))
	}
	switch r.Op {
	case selector.Equals, selector.In:
		return n
	case selector.NotEquals, selector.NotIn:
		return all - n
	case selector.Exists:
		return count(txn, keyCounter(r.Key))
	default: // DoesNotExist
		return all - count(txn, keyCounter(r.Key))
	}
}

func count(txn *memdb.Txn, key string) int64 {
	raw, _ := txn.First(tableCounts, indexID, key)
	if raw == nil {
		return 0
	}
	return raw.(*counter).N
}

// fieldPrefix is the entry prefix of key k on index position ix.
func fieldPrefix(ix int, k model.Key) []byte {
	switch ix {
	case ixName:
		return []byte(k)
	case ixCreated:
		return invert(nil, k)
	}
	return append([]byte{tagPresent}, k...)
}

// probe counts a source's entries up to limit.
func probe(txn *memdb.Txn, src *source, limit int64) (int64, bool, error) {
	var n int64
	for _, pre := range src.prefixes {
		it, err := txn.Get(tableObjects, src.index+"_prefix", pre)
		if err != nil {
			return 0, false, err
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if n++; n > limit {
				return n, false, nil
			}
		}
	}
	return n, true, nil
}

// each calls fn for every distinct record of src (every object when src
// is nil), stopping early when fn returns false.
func each(ctx context.Context, txn *memdb.Txn, src *source, fn func(*Record) bool) error {
	if src == nil {
		src = &source{index: indexID, prefixes: [][]byte{nil}}
	}
	var seen map[string]struct{}
	if src.dedupe {
		seen = map[string]struct{}{}
	}
	n := 0
	for _, pre := range src.prefixes {
		it, err := txn.Get(tableObjects, src.index+"_prefix", pre)
		if err != nil {
			return err
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			r := raw.(*Record)
			if seen != nil {
				if _, dup := seen[r.Name]; dup {
					continue
				}
				seen[r.Name] = struct{}{}
			}
			if !fn(r) {
				return nil
			}
		}
	}
	return nil
}

func (p *plan) collect(ctx context.Context, txn *memdb.Txn, src *source, offset int64, size int) ([]*Record, int64, error) {
	var hits []*Record
	if src != nil {
		hits = make([]*Record, 0, min(src.count, 1<<16))
	}
	err := each(ctx, txn, src, func(r *Record) bool {
		if p.matches(r) {
			hits = append(hits, r)
		}
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(hits, p.compare)
	total := int64(len(hits))
	if size == 0 {
		return hits, total, nil
	}
	if offset >= total {
		return nil, total, nil
	}
	end := min(offset+int64(size), total)
	return slices.Clip(hits[offset:end]), total, nil
}

func (p *plan) countMatches(ctx context.Context, txn *memdb.Txn, src *source) (int64, error) {
	var n int64
	err := each(ctx, txn, src, func(r *Record) bool {
		if p.matches(r) {
			n++
		}
		return true
	})
	return n, err
}

// stream walks the first sort key's index in order, tests every object
// against the terms, skips the offset and stops when the page is full.
//
// Walking an index forward yields ties in the default tail order (creation
// desc, name asc). A descending walk with the default tail therefore goes
// backwards over the groups of equal keys but forwards inside each group;
// any other tail gathers each group of ties and sorts it.
func (p *plan) stream(ctx context.Context, txn *memdb.Txn, offset int64, size int) ([]*Record, error) {
	first := p.sorts[0]
	// The creation index holds inverted times: walking it forward is
	// newest first.
	reverse := first.desc != (first.ix == ixCreated)
	rest := p.sorts[1:]
	defaultTail := len(rest) == 0 ||
		first.ix == ixCreated && len(rest) == 1 && rest[0] == sortKey{ix: ixName} ||
		len(rest) == 2 && rest[0] == sortKey{ix: ixCreated, desc: true} && rest[1] == sortKey{ix: ixName}
	index := memdbIndex(first.ix) + "_prefix"
	out := make([]*Record, 0, size)
	visited := 0
	// take handles one object in final order; false means stop.
	take := func(r *Record) bool {
		if visited++; visited%4096 == 0 && ctx.Err() != nil {
			return false
		}
		if !p.matches(r) {
			return true
		}
		if offset > 0 {
			offset--
			return true
		}
		out = append(out, r)
		return len(out) < size
	}
	var err error
	switch {
	case !reverse && defaultTail, first.ix == ixName: // names are unique: no ties
		err = walk(txn, index, nil, reverse, take)
	case reverse && defaultTail:
		err = p.walkGroupsBackwards(txn, first.ix, take)
	default:
		var group []*Record
		var groupKey model.Key
		var groupHas, more = false, true
		flush := func() {
			slices.SortFunc(group, p.compare)
			for _, r := range group {
				if more = take(r); !more {
					break
				}
			}
			group = group[:0]
		}
		err = walk(txn, index, nil, reverse, func(r *Record) bool {
			k, has := r.sortKey(first.ix, first.desc)
			if len(group) > 0 && (k != groupKey || has != groupHas) {
				if flush(); !more {
					return false
				}
			}
			groupKey, groupHas = k, has
			group = append(group, r)
			return true
		})
		if more && len(group) > 0 {
			flush()
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	return out, err
}

// walk iterates the entries under prefix, forwards or backwards, until fn
// returns false.
func walk(txn *memdb.Txn, index string, prefix []byte, reverse bool, fn func(*Record) bool) error {
	var it memdb.ResultIterator
	var err error
	if reverse {
		it, err = txn.GetReverse(tableObjects, index, prefix)
	} else {
		it, err = txn.Get(tableObjects, index, prefix)
	}
	if err != nil {
		return err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if !fn(raw.(*Record)) {
			return nil
		}
	}
	return nil
}

// walkGroupsBackwards visits the groups of equal keys of index ix from the
// largest key down, each group forwards. Entries of a group share the
// group's prefix, so the next group down starts at the last entry at or
// below that prefix.
func (p *plan) walkGroupsBackwards(txn *memdb.Txn, ix int, fn func(*Record) bool) error {
	name := memdbIndex(ix)
	it, err := txn.GetReverse(tableObjects, name+"_prefix", []byte(nil))
	for err == nil {
		raw := it.Next()
		if raw == nil {
			return nil
		}
		r := raw.(*Record)
		var prefix []byte
		if ix == ixCreated {
			prefix = invert(nil, r.created)
		} else if k, ok := r.sortKey(ix, false); ok {
			prefix = append([]byte{tagPresent}, k...)
		} else {
			prefix = []byte{tagAbsent}
		}
		more := true
		if err := walk(txn, name+"_prefix", prefix, false, func(r *Record) bool {
			more = fn(r)
			return more
		}); err != nil || !more {
			return err
		}
		it, err = txn.ReverseLowerBound(tableObjects, name, prefix)
	}
	return err
}
