package store

import (
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store/internal/plan"
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
	p, err := plan.Compile(m, q)
	if err != nil {
		return PlanForTest{}, err
	}
	sh := p.Shape(st.current(p.Need()))
	out := PlanForTest{DriverCount: sh.DriverCount, Within: sh.Within, Covered: sh.Covered, Total: sh.Total}
	if sh.Driver >= 0 {
		out.Driver = m.IndexAt(sh.Driver).Name
	}
	return out, nil
}
