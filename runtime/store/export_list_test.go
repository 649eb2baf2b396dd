package store

import (
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/index"
)

// PlanForTest describes how List would start q on m's current view.
type PlanForTest struct {
	Driver      string // the index of the smallest candidate set; "" none
	DriverCount int64  // its entries, counted from the index
	Within      int64  // entries of the sort key's range that bound a stream; -1 none
	Covered     int    // terms the candidate sets answer exactly
	Total       int64  // the total when the index counts give it; -1 not
}

// ListPlanForTest returns the candidate sets List would weigh for q.
func (s *Store) ListPlanForTest(m *model.Model, q Query) (PlanForTest, error) {
	_, st, err := s.ready(m)
	if err != nil {
		return PlanForTest{}, err
	}
	p, err := compile(m, q)
	if err != nil {
		return PlanForTest{}, err
	}
	v := view{st.current(p.need())}
	c := p.candidates(v)
	out := PlanForTest{Within: -1, Covered: c.covered, Total: -1}
	if c.best != nil {
		out.Driver, out.DriverCount = m.IndexAt(c.best.ix).Name, c.best.count
	}
	if c.within != nil {
		out.Within = c.within.count
	}
	if n, ok := p.total(v, int64(v.Tree(index.IxCreated).Len()), c.best); ok {
		out.Total = n
	}
	return out, nil
}
