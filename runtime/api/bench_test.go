package api_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// BenchmarkListPage20HTTP_30k measures a list request through the whole
// HTTP layer (routing, query parsing, store, encoding), in process.
func BenchmarkListPage20HTTP_30k(b *testing.B) {
	m := storetest.PersonModel()
	st := storetest.Open(b, store.Options{}, m)
	for i := range 30_000 {
		p := storetest.NewPerson(fmt.Sprintf("p-%d", i), storetest.PersonSpec{Name: "x", Age: storetest.Int64(int64(i % 97))})
		p.Metadata.Labels = map[string]string{"team": fmt.Sprint("t", i%10)}
		if _, err := st.Create(context.Background(), m, p); err != nil {
			b.Fatal(err)
		}
	}
	reg := model.NewRegistry()
	reg.Register(m)
	a := api.New(api.Options{Store: st, Registry: reg})
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest("GET", base+"?labelSelector=team%3Dt3&sort=spec.age,desc&size=20&page=2", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkCreateHTTPDurable measures creates through the HTTP layer onto
// a durable store, 16 concurrent clients, in process.
func BenchmarkCreateHTTPDurable(b *testing.B) {
	m := storetest.PersonModel()
	st := storetest.New(b, m)
	reg := model.NewRegistry()
	reg.Register(m)
	a := api.New(api.Options{Store: st, Registry: reg})
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			body := fmt.Sprintf(`{"metadata":{"name":"p-%d","labels":{"team":"t%d"}},"spec":{"name":"Person %d","age":%d,"email":"p%d@example.com","tags":["a","b"]}}`, i, i%10, i, i%97, i)
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, httptest.NewRequest("POST", base, strings.NewReader(body)))
			if rec.Code != 201 {
				b.Fatal(rec.Code, rec.Body.String())
			}
		}
	})
}
