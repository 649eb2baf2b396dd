// This file hands readers views of a table (index.View): copying the
// committer's state when asked, and waiting for a durable one.

package store

import (
	"time"

	"github.com/svcrun/svc/runtime/store/internal/index"
)

// cooling is how long a tree stays hot without a reader (Options.cooling).
const cooling = 10 * time.Second

// copyView returns an immutable copy of st's applied state as of batch
// seq, with the trees in the hot set. Called with st.mu held.
func (st *tableState) copyView(seq uint64) *index.View {
	if now := time.Now(); now.Sub(st.cooled) >= st.cooling {
		// Keep what readers asked for since the last cooling.
		st.hot.Store(st.asked.Swap(0))
		st.cooled = now
	}
	return st.idx.View(st.db.Snapshot(), seq, st.hot.Load())
}

// current returns a view of every durable write, with at least the trees
// in need: at least every write acknowledged before the call, and none
// that is not yet durable.
func (st *tableState) current(need uint64) *index.View {
	for {
		wake := st.published.wait()
		v := st.view.Load()
		if st.asked.Load()&need != need {
			st.asked.Or(need)
		}
		if v.Seq >= st.durable.Load() && v.Has&need == need {
			return v
		}
		if st.hot.Load()&need != need {
			st.hot.Or(need) // from now on views copy them
		}
		// The committer holds mu while it has a batch open on the table.
		if st.mu.TryLock() {
			if st.applied == st.durable.Load() {
				// Nothing beyond the log is applied: copy the state as it is.
				v = st.copyView(st.applied)
				st.mu.Unlock()
				st.offerView(v)
				// Readers that found mu taken by this one wait for a
				// signal; on an idle table no write would ever send it.
				st.published.broadcast()
				if v.Has&need == need { // else hot cooled just now
					return v
				}
				continue
			}
			st.mu.Unlock()
		}
		// The committer is ahead of the log; it copies what it applied
		// when it hands its open (or next) batch to the syncer, which
		// publishes it once that is durable. Waiting costs at most two
		// fsyncs.
		st.wantView.Store(true)
		<-wake
	}
}

// offerView makes v the table's view unless a newer one is there, or one
// as new with every tree v has.
func (st *tableState) offerView(v *index.View) {
	for {
		cur := st.view.Load()
		if cur.Seq > v.Seq || cur.Seq == v.Seq && v.Has&^cur.Has == 0 {
			return
		}
		if st.view.CompareAndSwap(cur, v) {
			return
		}
	}
}

// noView stands for no view: it is never current, so the next reader
// copies one.
var noView = &index.View{}

// dropStaleView lets go of the table's view once it lacks a durable batch.
// No reader takes such a view (current copies afresh), yet it holds the
// records of its time: every record replaced or removed since stayed alive
// until the next reader came, for good on a table written and not listed
// (100k records, 1.2 KB each, after an update of each).
func (st *tableState) dropStaleView() {
	if v := st.view.Load(); v != noView && v.Seq < st.durable.Load() {
		st.view.CompareAndSwap(v, noView)
	}
}
