// Package cowtree is an order-statistic B+tree with O(1) copies, built for
// the store's secondary indexes.
//
// Items live in leaves; every node counts the items below it, so the i-th
// item and the rank of any item take O(log n). A copy shares every node
// with its original; whichever tree writes first copies the nodes on its
// path (each node records the tree that may change it in place), so a
// copy is an immutable snapshot for readers while the writer goes on. A
// tree is built in O(n) from sorted items, with full leaves and no
// comparisons, which is what makes a start with millions of objects fast.
//
// A node that falls below a quarter full after a delete merges with a
// neighbour when the two fit in one; otherwise it stays underfull. That
// keeps deletes simple and costs nothing in height, which grows only by
// splits.
//
// A tree may summarise its items: every node then holds a superset of the
// OR of its items' 32-bit summaries (exact in leaves), so that a filtered
// walk passes over whole nodes whose summary shows that none of their
// items is wanted. Inserts OR the new summary into the nodes on their
// path; deletes and replacements recompute the leaf only, leaving inner
// nodes a superset, which costs skipping power, never correctness.
//
// A tree may also let an inserted item share parts of its neighbours (see
// Share): an index whose keys repeat then holds one copy of each key that
// every equal entry points at, so a search compares keys that are already
// in the cache, often by pointer alone.
//
// A Tree is not safe for concurrent writes; copies may be read
// concurrently with each other and with writes to the original.
package cowtree

// Node sizes. Leaves built in bulk are filled to buildFill, leaving room
// for a few inserts before the first split.
const (
	maxItems  = 64
	minItems  = maxItems / 4
	buildFill = maxItems - maxItems/8
)

// owner marks the tree allowed to change a node in place. It has a size so
// that every new owner is a distinct pointer.
type owner struct{ _ byte }

type node[T any] struct {
	owner *owner
	count int    // items in this subtree
	sum   uint32 // covers the summaries of the items below
	last  int32  // 1 + where the last insert went in this node (0: none); see splitPoint
	// A leaf holds items; an inner node holds kids and, between them, seps:
	// every item of kids[i] < seps[i] <= every item of kids[i+1]. A
	// separator starts as a copy of the first item under kids[i+1]; a
	// replace of that item updates it, and a delete makes it a detached
	// copy (see Detach), so that it keeps nothing the item pointed at in
	// memory. It keeps its place in the order: moving it up to the next
	// item would send the inserts between the two to the other kid, and
	// left leaves 51–63% full where inserts come in runs.
	items []T
	kids  []*node[T]
	seps  []T
}

func (n *node[T]) leaf() bool { return n.kids == nil }

// size is what a node's fill is measured in: items or kids.
func (n *node[T]) size() int {
	if n.leaf() {
		return len(n.items)
	}
	return len(n.kids)
}

// Tree is an ordered set of items under cmp.
type Tree[T any] struct {
	cmp     func(a, b T) int
	summary func(T) uint32 // nil: every node's sum is all ones
	share   func(item T, neighbour *T) (T, bool)
	detach  func(T) T
	root    *node[T]
	owner   *owner
}

// New returns an empty tree ordered by cmp whose nodes summarise their
// items with summary (nil: no summaries).
func New[T any](cmp func(a, b T) int, summary func(T) uint32) *Tree[T] {
	return &Tree[T]{cmp: cmp, summary: summary, owner: new(owner)}
}

func (t *Tree[T]) sumOf(item T) uint32 {
	if t.summary == nil {
		return ^uint32(0)
	}
	return t.summary(item)
}

// resum recomputes n's sum from its items or kids.
func (t *Tree[T]) resum(n *node[T]) {
	var sum uint32
	switch {
	case t.summary == nil:
		sum = ^uint32(0)
	case n.leaf():
		for _, it := range n.items {
			sum |= t.sumOf(it)
		}
	default:
		for _, k := range n.kids {
			sum |= k.sum
		}
	}
	n.sum = sum
}

// Share makes every insert offer the new item its neighbours in the leaf,
// one at a time until share returns the item changed to use a part of
// one (and true). share may change the neighbour too (it sits in a node
// this tree owns), and must not change how either orders. The item goes
// by value: a pointer to it would move every insert's item to the heap.
func (t *Tree[T]) Share(share func(item T, neighbour *T) (T, bool)) { t.share = share }

// Detach gives the tree a way to copy an item for a separator that
// outlives it: detach returns an item that orders as the given one and
// holds none of what it points at (nil: separators keep deleted items).
func (t *Tree[T]) Detach(detach func(T) T) { t.detach = detach }

// adopt returns item as share makes it beside its neighbours-to-be at i
// in items. Past either end of the leaf, the neighbour is the separator
// that bounds it (lo or hi, nil if none), a copy of an item next to it.
// An item that replaces items[i] is not offered that one: what the
// replaced item points at may be on its way out.
func (t *Tree[T]) adopt(item T, items []T, i int, replaces bool, lo, hi *T) T {
	if t.share == nil {
		return item
	}
	left, right := lo, hi
	if i > 0 {
		left = &items[i-1]
	}
	if replaces {
		i++
	}
	if i < len(items) {
		right = &items[i]
	}
	for _, nb := range [2]*T{left, right} {
		if nb != nil {
			if it, ok := t.share(item, nb); ok {
				return it
			}
		}
	}
	return item
}

// Build returns a tree of items, which must be sorted by cmp without
// duplicates; Build does not check. It keeps no reference to items.
func Build[T any](cmp func(a, b T) int, items []T) *Tree[T] {
	return BuildSummarized(cmp, nil, len(items), func(i int) T { return items[i] })
}

// BuildSummarized builds a tree of the n items item(0), item(1), ..., as
// Build does, that summarises its items with summary (nil: none). A caller
// that computes its sorted items needs no slice of them.
func BuildSummarized[T any](cmp func(a, b T) int, summary func(T) uint32, n int, item func(i int) T) *Tree[T] {
	t := New(cmp, summary)
	if n == 0 {
		return t
	}
	level := make([]*node[T], 0, n/buildFill+1)
	for lo := 0; lo < n; {
		hi := spread(lo, n)
		// Full, not at a node's capacity: a start builds millions of
		// leaves, most of which are never written (insertAt grows one).
		leaf := &node[T]{owner: t.owner, count: hi - lo, items: make([]T, hi-lo)}
		for i := range leaf.items {
			leaf.items[i] = item(lo + i)
		}
		t.resum(leaf)
		level = append(level, leaf)
		lo = hi
	}
	for len(level) > 1 {
		up := make([]*node[T], 0, len(level)/buildFill+1)
		for lo := 0; lo < len(level); {
			hi := spread(lo, len(level))
			n := &node[T]{owner: t.owner, kids: make([]*node[T], 0, maxItems+1), seps: make([]T, 0, maxItems)}
			for i, k := range level[lo:hi] {
				if i > 0 {
					n.seps = append(n.seps, first(k))
				}
				n.kids = append(n.kids, k)
				n.count += k.count
				n.sum |= k.sum
			}
			up = append(up, n)
			lo = hi
		}
		level = up
	}
	t.root = level[0]
	return t
}

// spread returns the end of the bulk-built node starting at lo of n: nodes
// hold buildFill, except that the last two share what is left so that
// neither is underfull.
func spread(lo, n int) int {
	switch left := n - lo; {
	case left <= maxItems:
		return n
	case left < 2*buildFill:
		return lo + left/2
	}
	return lo + buildFill
}

func first[T any](n *node[T]) T {
	for !n.leaf() {
		n = n.kids[0]
	}
	return n.items[0]
}

// Copy returns a tree with the same items. Both trees may then be written
// without affecting each other; nodes are copied as they are written.
func (t *Tree[T]) Copy() *Tree[T] {
	t.owner = new(owner)
	return &Tree[T]{cmp: t.cmp, summary: t.summary, share: t.share, detach: t.detach, root: t.root, owner: new(owner)}
}

// Len returns the number of items.
func (t *Tree[T]) Len() int {
	if t.root == nil {
		return 0
	}
	return t.root.count
}

// mut returns n, or a copy of it that t may change in place.
func (t *Tree[T]) mut(n *node[T]) *node[T] {
	if n.owner == t.owner {
		return n
	}
	// A copy has room for one insert, the write that made it: most
	// copies take one (every batch copies the paths it writes again, for
	// the readers of the last view), and a node's full capacity would
	// cost every copy 2–3 KB. A second insert grows it to a node's size
	// at once (insertAt).
	c := &node[T]{owner: t.owner, count: n.count, sum: n.sum, last: n.last}
	if n.leaf() {
		c.items = make([]T, len(n.items), len(n.items)+1)
		copy(c.items, n.items)
	} else {
		c.kids = make([]*node[T], len(n.kids), len(n.kids)+1)
		copy(c.kids, n.kids)
		c.seps = make([]T, len(n.seps), len(n.seps)+1)
		copy(c.seps, n.seps)
	}
	return c
}

// lowerBound returns the number of xs below x, and whether xs holds x.
func (t *Tree[T]) lowerBound(xs []T, x T) (int, bool) {
	lo, hi := 0, len(xs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.cmp(xs[mid], x) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(xs) && t.cmp(xs[lo], x) == 0
}

// upperBound returns the number of xs at or below x.
func (t *Tree[T]) upperBound(xs []T, x T) int {
	lo, hi := 0, len(xs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.cmp(xs[mid], x) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Set adds item, replacing an equal one.
func (t *Tree[T]) Set(item T) {
	if t.root == nil {
		t.root = &node[T]{owner: t.owner, count: 1, sum: t.sumOf(item), items: append(make([]T, 0, maxItems+1), item)}
		return
	}
	t.root = t.mut(t.root)
	right, sep, _ := t.insert(t.root, item, nil, nil)
	if right != nil {
		left := t.root
		t.root = &node[T]{owner: t.owner, count: left.count + right.count, sum: left.sum | right.sum,
			kids: append(make([]*node[T], 0, maxItems+1), left, right),
			seps: append(make([]T, 0, maxItems), sep)}
	}
}

// insert adds item under n, which t owns and whose items lie between the
// separators lo and hi (nil: unbounded). When n overflows it is split:
// the new right half and the separator before it are returned.
func (t *Tree[T]) insert(n *node[T], item T, lo, hi *T) (right *node[T], sep T, added bool) {
	var at int // where the item (or the new kid) went in n
	if n.leaf() {
		i, found := t.lowerBound(n.items, item)
		item = t.adopt(item, n.items, i, found, lo, hi)
		if found {
			// An update usually keeps the summary: recompute the leaf
			// only when the replaced item's bits may be gone.
			lost := t.sumOf(n.items[i]) &^ t.sumOf(item)
			n.items[i] = item
			if i == 0 && lo != nil {
				*lo = item // the separator is a copy of it (see node)
			}
			if lost != 0 {
				t.resum(n)
			} else {
				n.sum |= t.sumOf(item)
			}
			return nil, sep, false
		}
		n.items = insertAt(n.items, i, item)
		n.count++
		n.sum |= t.sumOf(item)
		at = i
	} else {
		i := t.upperBound(n.seps, item)
		kid := t.mut(n.kids[i])
		n.kids[i] = kid
		if i > 0 {
			lo = &n.seps[i-1]
		}
		if i < len(n.seps) {
			hi = &n.seps[i]
		}
		r, s, ok := t.insert(kid, item, lo, hi)
		n.sum |= kid.sum
		if r != nil {
			n.sum |= r.sum // the new item may have gone right
		}
		if !ok {
			return nil, sep, false
		}
		n.count++
		if r != nil {
			n.kids = insertAt(n.kids, i+1, r)
			n.seps = insertAt(n.seps, i, s)
		}
		at = i + 1
	}
	hot := int(n.last)-1 == at || int(n.last) == at // where the last insert went, or just after it
	n.last = int32(at + 1)
	if n.size() <= maxItems {
		return nil, sep, true
	}
	right, sep = t.split(n, splitPoint(at, n.size(), hot))
	return right, sep, true
}

// splitPoint returns where a node of size items or kids splits after an
// insert at position at overflowed it; hot says the insert before went to
// the same place (or just before it). Such inserts cluster: a new object's
// entries go at the front of its key's run (ties order newest first), or
// at the very front (the creation index), or at the end. Halving such a
// node leaves the half the inserts have moved past half empty for good:
// 51% of the leaf slots were used after 100k creates. There the split is
// at the insert, so that the node the inserts leave is full and they go
// on at the end of the left one. Elsewhere (inserts all over the node) it
// halves, which suits scattered inserts best. Both nodes keep at least
// minItems, except at the ends of the node, where a run of inserts on one
// side is likely.
func splitPoint(at, size int, hot bool) int {
	switch {
	case !hot:
		return size / 2
	case at == 0:
		return 1
	case at >= size-1:
		return size - 1
	}
	return max(at-1, 1)
}

// split moves n's items (or kids) from h on into a new node.
func (t *Tree[T]) split(n *node[T], h int) (*node[T], T) {
	r := &node[T]{owner: t.owner}
	if n.leaf() {
		r.items = append(make([]T, 0, maxItems+1), n.items[h:]...)
		clear(n.items[h:])
		n.items = n.items[:h]
		r.count = len(r.items)
		n.count -= r.count
		t.resum(n)
		t.resum(r)
		return r, r.items[0]
	}
	sep := n.seps[h-1]
	r.kids = append(make([]*node[T], 0, maxItems+1), n.kids[h:]...)
	r.seps = append(make([]T, 0, maxItems), n.seps[h:]...)
	clear(n.kids[h:])
	clear(n.seps[h-1:])
	n.kids, n.seps = n.kids[:h], n.seps[:h-1]
	for _, k := range r.kids {
		r.count += k.count
	}
	n.count -= r.count
	t.resum(n)
	t.resum(r)
	return r, sep
}

// Delete removes the item equal to item and reports whether there was one.
func (t *Tree[T]) Delete(item T) bool {
	if _, ok := t.Get(item); !ok {
		return false // do not copy a path for nothing
	}
	t.root = t.mut(t.root)
	t.delete(t.root, item, nil)
	for r := t.root; !r.leaf() && len(r.kids) == 1; r = t.root {
		t.root = r.kids[0]
	}
	if t.root.count == 0 {
		t.root = nil
	}
	return true
}

// delete removes item, which is there, from under n, which t owns and
// whose items lie from the separator lo on (nil: unbounded). No node but
// the root is ever left empty: an emptied subtree is cut out.
func (t *Tree[T]) delete(n *node[T], item T, lo *T) {
	n.count--
	if n.leaf() {
		i, _ := t.lowerBound(n.items, item)
		n.items = removeAt(n.items, i)
		t.resum(n)
		if i == 0 && lo != nil && t.detach != nil && t.cmp(*lo, item) == 0 {
			*lo = t.detach(*lo) // see node
		}
		return
	}
	i := t.upperBound(n.seps, item)
	kid := t.mut(n.kids[i])
	n.kids[i] = kid
	kidLo := lo
	if i > 0 {
		kidLo = &n.seps[i-1]
	}
	t.delete(kid, item, kidLo)
	switch {
	case kid.count == 0:
		n.kids = removeAt(n.kids, i)
		if len(n.seps) > 0 {
			n.seps = removeAt(n.seps, max(i-1, 0))
		}
	case kid.size() < minItems && len(n.kids) > 1:
		t.merge(n, i)
	}
}

// Get returns the item equal to item, if there is one.
func (t *Tree[T]) Get(item T) (T, bool) {
	var zero T
	n := t.root
	if n == nil {
		return zero, false
	}
	for !n.leaf() {
		n = n.kids[t.upperBound(n.seps, item)]
	}
	if i, found := t.lowerBound(n.items, item); found {
		return n.items[i], true
	}
	return zero, false
}

// merge joins n.kids[i] with a neighbour when both fit in one node.
func (t *Tree[T]) merge(n *node[T], i int) {
	l := i
	if l == len(n.kids)-1 {
		l--
	}
	a, b := n.kids[l], n.kids[l+1]
	if a.size()+b.size() > maxItems {
		return
	}
	a = t.mut(a)
	if a.leaf() {
		a.items = append(a.items, b.items...)
	} else {
		a.seps = append(append(a.seps, n.seps[l]), b.seps...)
		a.kids = append(a.kids, b.kids...)
	}
	a.count += b.count
	a.sum |= b.sum
	n.kids[l] = a
	n.kids = removeAt(n.kids, l+1)
	n.seps = removeAt(n.seps, l)
}

// GetAt returns the i-th item (from 0) in order.
func (t *Tree[T]) GetAt(i int) (T, bool) {
	var zero T
	if i < 0 || i >= t.Len() {
		return zero, false
	}
	n := t.root
	for !n.leaf() {
		for _, k := range n.kids {
			if i < k.count {
				n = k
				break
			}
			i -= k.count
		}
	}
	return n.items[i], true
}

// Rank returns the number of items below pivot.
func (t *Tree[T]) Rank(pivot T) int {
	n, r := t.root, 0
	if n == nil {
		return 0
	}
	for !n.leaf() {
		k, _ := t.lowerBound(n.seps, pivot)
		for _, c := range n.kids[:k] {
			r += c.count
		}
		n = n.kids[k]
	}
	i, _ := t.lowerBound(n.items, pivot)
	return r + i
}

// Filter lets a walk of a summarized tree pass over whole nodes.
type Filter[T any] struct {
	// Skip reports that no item whose summary sum covers is wanted.
	Skip func(sum uint32) bool
	// Passed, when not nil, is told how many items each node passed over
	// held (of those the walk would have met). It returns false to stop
	// the walk.
	Passed func(n int) bool
}

// skip reports whether f passes over n, whose walk has count items left;
// goOn is false when Passed stops the walk.
func (f *Filter[T]) skip(n *node[T], count int) (skipped, goOn bool) {
	if f == nil || !f.Skip(n.sum) {
		return false, true
	}
	if count == 0 || f.Passed == nil {
		return true, true
	}
	return true, f.Passed(count)
}

// Every walk goes a leaf's run of items at a time; the item-at-a-time
// walks wrap fn with each or eachDown.

func each[T any](fn func(T) bool) func([]T) bool {
	return func(run []T) bool {
		for _, it := range run {
			if !fn(it) {
				return false
			}
		}
		return true
	}
}

func eachDown[T any](fn func(T) bool) func([]T) bool {
	return func(run []T) bool {
		for i := len(run) - 1; i >= 0; i-- {
			if !fn(run[i]) {
				return false
			}
		}
		return true
	}
}

// Scan calls fn for every item in ascending order until fn returns false.
func (t *Tree[T]) Scan(fn func(T) bool) { t.ScanFiltered(nil, fn) }

// ScanFiltered is Scan passing over the nodes f skips.
func (t *Tree[T]) ScanFiltered(f *Filter[T], fn func(T) bool) {
	if t.root != nil {
		runs(t.root, f, false, each(fn))
	}
}

// ReverseFiltered calls fn for every item in descending order until fn
// returns false, passing over the nodes f skips (nil: none).
func (t *Tree[T]) ReverseFiltered(f *Filter[T], fn func(T) bool) {
	if t.root != nil {
		runs(t.root, f, true, eachDown(fn))
	}
}

// runs hands fn the leaves under n in order (descending when down), until
// fn returns false, passing over the nodes f skips.
func runs[T any](n *node[T], f *Filter[T], down bool, fn func([]T) bool) bool {
	if skipped, goOn := f.skip(n, n.count); skipped {
		return goOn
	}
	if n.leaf() {
		return fn(n.items)
	}
	for i := range n.kids {
		k := n.kids[i]
		if down {
			k = n.kids[len(n.kids)-1-i]
		}
		if !runs(k, f, down, fn) {
			return false
		}
	}
	return true
}

// Ascend calls fn for the items at or above pivot, in ascending order,
// until fn returns false.
func (t *Tree[T]) Ascend(pivot T, fn func(T) bool) { t.AscendFiltered(pivot, nil, fn) }

// AscendFiltered is Ascend passing over the nodes f skips.
func (t *Tree[T]) AscendFiltered(pivot T, f *Filter[T], fn func(T) bool) {
	if t.root != nil {
		t.ascendRuns(t.root, pivot, f, each(fn))
	}
}

// AscendRuns is Ascend handing fn the items a leaf at a time: the run of
// a leaf's items at or above pivot, then whole leaves, in order, until fn
// returns false. A caller that reads many items saves a call per item.
// fn must not keep or modify the slice.
func (t *Tree[T]) AscendRuns(pivot T, fn func([]T) bool) {
	if t.root != nil {
		t.ascendRuns(t.root, pivot, nil, fn)
	}
}

func (t *Tree[T]) ascendRuns(n *node[T], pivot T, f *Filter[T], fn func([]T) bool) bool {
	if n.leaf() {
		i, _ := t.lowerBound(n.items, pivot)
		if skipped, goOn := f.skip(n, len(n.items)-i); skipped {
			return goOn
		}
		return i == len(n.items) || fn(n.items[i:])
	}
	k, _ := t.lowerBound(n.seps, pivot)
	if !t.ascendRuns(n.kids[k], pivot, f, fn) {
		return false
	}
	for _, c := range n.kids[k+1:] {
		if !runs(c, f, false, fn) {
			return false
		}
	}
	return true
}

// DescendFiltered calls fn for the items at or below pivot, in descending
// order, until fn returns false, passing over the nodes f skips (nil:
// none).
func (t *Tree[T]) DescendFiltered(pivot T, f *Filter[T], fn func(T) bool) {
	if t.root != nil {
		t.descendRuns(t.root, pivot, f, eachDown(fn))
	}
}

func (t *Tree[T]) descendRuns(n *node[T], pivot T, f *Filter[T], fn func([]T) bool) bool {
	if n.leaf() {
		end := t.upperBound(n.items, pivot)
		if skipped, goOn := f.skip(n, end); skipped {
			return goOn
		}
		return end == 0 || fn(n.items[:end])
	}
	k := t.upperBound(n.seps, pivot)
	if !t.descendRuns(n.kids[k], pivot, f, fn) {
		return false
	}
	for i := k - 1; i >= 0; i-- {
		if !runs(n.kids[i], f, true, fn) {
			return false
		}
	}
	return true
}

func insertAt[E any](s []E, i int, v E) []E {
	if len(s) == cap(s) {
		// A bulk-built leaf is allocated full: give it a node's capacity
		// at once rather than append's doubling.
		g := make([]E, len(s)+1, max(len(s)+1, maxItems+1))
		copy(g, s[:i])
		g[i] = v
		copy(g[i+1:], s[i:])
		return g
	}
	s = s[:len(s)+1]
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// removeAt removes s[i], clearing the freed slot so that it keeps nothing
// alive.
func removeAt[E any](s []E, i int) []E {
	var zero E
	copy(s[i:], s[i+1:])
	s[len(s)-1] = zero
	return s[:len(s)-1]
}

// Shape describes how a tree fills its nodes: what its memory goes to.
type Shape struct {
	Nodes, Leaves int // nodes in all, and leaves among them
	Items         int // items in leaves
	Slots         int // item slots allocated in leaves (their capacity)
}

// Shape walks the whole tree.
func (t *Tree[T]) Shape() Shape {
	var s Shape
	var walk func(n *node[T])
	walk = func(n *node[T]) {
		s.Nodes++
		if n.leaf() {
			s.Leaves++
			s.Items += len(n.items)
			s.Slots += cap(n.items)
			return
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	if t.root != nil {
		walk(t.root)
	}
	return s
}
