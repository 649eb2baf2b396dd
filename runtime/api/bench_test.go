package api_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	example "github.com/svcrun/svc/example-plugin"
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

// BenchmarkWriteHTTPExample measures durable creates and updates of the
// example plugin's generated Person through the HTTP layer, in process,
// 16 concurrent clients, with its generated codecs and without them (the
// generic decode and encoding/json), and reports the process's CPU time
// per request (cpu-µs/op: user + system, from getrusage).
func BenchmarkWriteHTTPExample(b *testing.B) {
	for _, codec := range []string{"generic", "generated"} {
		for _, op := range []string{"create", "update"} {
			b.Run(codec+"/"+op, func(b *testing.B) {
				m := example.PersonModel()
				if codec == "generic" {
					m.DecodeJSON, m.EncodeJSON = nil, nil
				}
				st := storetest.New(b, m)
				reg := model.NewRegistry()
				reg.Register(m)
				a := api.New(api.Options{Store: st, Registry: reg})
				const id = `"apiVersion":"people.example.com/v1alpha1","kind":"Person",`
				body := func(i int64, version string) string {
					return fmt.Sprintf(`{`+id+`"metadata":{"name":"p-%d",%s"labels":{"team":"t%d"}},"spec":{"name":"Person %d","age":%d,"email":"p%d@example.com","tags":["a","b"]}}`,
						i, version, i%10, i, i%97, i)
				}
				const objects = 1000
				if op == "update" {
					for i := range int64(objects) {
						rec := httptest.NewRecorder()
						a.ServeHTTP(rec, httptest.NewRequest("POST", base, strings.NewReader(body(i, ""))))
						if rec.Code != 201 {
							b.Fatal(rec.Code, rec.Body.String())
						}
					}
				}
				var n atomic.Int64
				var versions [objects]atomic.Int64
				b.ReportAllocs()
				b.SetParallelism(8)
				cpu0 := cpuTime()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := n.Add(1)
						rec := httptest.NewRecorder()
						if op == "create" {
							a.ServeHTTP(rec, httptest.NewRequest("POST", base, strings.NewReader(body(i+objects, ""))))
							if rec.Code != 201 {
								b.Fatal(rec.Code, rec.Body.String())
							}
							continue
						}
						// Each client its own objects: no conflicts.
						j := i % objects
						v := versions[j].Add(1) - 1
						req := httptest.NewRequest("PUT", fmt.Sprintf("%s/p-%d", base, j), strings.NewReader(
							strings.Replace(body(j, fmt.Sprintf(`"version":%d,`, v)), fmt.Sprintf(`"age":%d`, j%97), fmt.Sprintf(`"age":%d`, v%150), 1)))
						a.ServeHTTP(rec, req)
						if rec.Code != 200 && rec.Code != 409 {
							b.Fatal(rec.Code, rec.Body.String())
						}
					}
				})
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
