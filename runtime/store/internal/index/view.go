package index

import (
	"github.com/hashicorp/go-memdb"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// View is what a reader sees of a table: a consistent, immutable state.
type View struct {
	db    *memdb.MemDB // snapshot; objects by name
	trees []*Tree      // by index position; nil at IxName and where not in Has
	posts *Postings    // label postings (postings.go); nil unless Has PostsBit
	Seq   uint64       // the last batch it holds
	Has   uint64       // the trees and postings copied (see TreeBit)
	// Objects is how many objects the view holds, known without the
	// creation tree (one entry per object), which a count may not need.
	Objects int
}

// A view copies only the trees that readers use (the table's hot set):
// once a tree is copied, the next writes copy every node of it they
// touch, which for a tree no query reads is pure cost. Every tree starts
// hot; one that no reader asked for over a cooling period is dropped, and
// the next reader that needs it adds it back and waits for the next view
// (at most two fsyncs). Sets of trees are masks: bit TreeBit(ix) for the
// tree at index position ix, PostsBit for the postings.
const PostsBit = 1 << 63

// TreeBit is ix's bit; positions past 62 (a model with that many indexes)
// share one.
func TreeBit(ix int) uint64 { return 1 << min(ix, 62) }

// Record returns the version of e's object that v holds. e may point at
// an older version (see record.Record.Base): then the base's newest version is
// it if v holds that, else v's own table says (a reader of an old view
// racing an update, rare).
func (v *View) Record(e Entry) *record.Record {
	r := e.Rec
	l := r.Latest.Load()
	if l == nil {
		return r
	}
	if l.Seq <= v.Seq {
		return l
	}
	if raw, err := v.db.Txn(false).First(Objects, NameID, r.Name); err == nil && raw != nil {
		return raw.(*record.Record)
	}
	return r // unreachable: v's trees and objects agree
}

// Tree returns the tree of index position ix (nil unless in v.Has).
func (v *View) Tree(ix int) *Tree { return v.trees[ix] }

// Names reads a view's name index (memdb's): one read transaction for
// any number of lookups.
type Names struct{ txn *memdb.Txn }

// Names returns a reader of v's name index.
func (v *View) Names() Names { return Names{v.db.Txn(false)} }

// Get returns the object whose name key (model.StringKey) is k, or nil.
func (n Names) Get(k string) *record.Record {
	if raw, _ := n.txn.First(Objects, NameID, []byte(k)); raw != nil {
		return raw.(*record.Record)
	}
	return nil
}

// Iter returns the objects in name order, descending if reverse.
func (n Names) Iter(reverse bool) (NameIter, error) {
	var it memdb.ResultIterator
	var err error
	if reverse {
		it, err = n.txn.GetReverse(Objects, NameID+"_prefix", []byte(nil))
	} else {
		it, err = n.txn.Get(Objects, NameID+"_prefix", []byte(nil))
	}
	return NameIter{it}, err
}

// NameIter walks objects in name order.
type NameIter struct{ it memdb.ResultIterator }

// Next returns the next object, nil after the last.
func (n NameIter) Next() *record.Record {
	if raw := n.it.Next(); raw != nil {
		return raw.(*record.Record)
	}
	return nil
}
