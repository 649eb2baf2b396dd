package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// liveHeap returns the heap in use after two full collections (the second
// frees what the first's finalizers and sweeps left).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// jsonSize returns the bytes of JSON the persons [from, to) store.
func jsonSize(s *store.Store, m *model.Model, from, to int) int64 {
	var n int64
	for i := from; i < to; i++ {
		if r, err := s.Get(context.Background(), m, benchPerson(i).Metadata.Name); err == nil {
			n += int64(len(r.Data))
		}
	}
	return n
}

// benchWrittenMemory reports the live heap per object beyond its JSON of
// a store filled through Create (as a server is, write by write) rather
// than built in bulk at a start: heapB/obj-beyond-json after n creates,
// and churnB/obj-beyond-json after as many updates and as many deletes
// and re-creates again, the store's size held at n.
func benchWrittenMemory(b *testing.B, n int) {
	for b.Loop() {
		b.StopTimer()
		before := liveHeap()
		m := storetest.PersonModel()
		dir := b.TempDir()
		s := openRegistered(b, dir, m)
		b.StartTimer()
		createAll(b, s, m, 0, n, 16)
		b.StopTimer()
		js := jsonSize(s, m, 0, n)
		s.WaitSnapshotForTest()
		b.ReportMetric(float64(liveHeap()-before-js)/float64(n), "heapB/obj-beyond-json")
		logShapes(b, "after creates", s, m)
		b.StartTimer()
		churn(b, s, m, n)
		b.StopTimer()
		js = jsonSize(s, m, n, 2*n) + jsonSize(s, m, 0, n)
		// A snapshot being written holds every record of its time, those
		// replaced since included: a peak, not what the store keeps.
		s.WaitSnapshotForTest()
		b.ReportMetric(float64(liveHeap()-before-js)/float64(n), "churnB/obj-beyond-json")
		logShapes(b, "after churn", s, m)
		s.Close()
		s = nil
		s = openRegistered(b, dir, m)
		b.ReportMetric(float64(liveHeap()-before-js)/float64(n), "restartB/obj-beyond-json")
		logShapes(b, "after restart", s, m)
		s.Close()
		b.StartTimer()
	}
}

func openRegistered(b *testing.B, dir string, m *model.Model) *store.Store {
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Register(context.Background(), m); err != nil {
		b.Fatal(err)
	}
	return s
}

// logShapes logs the shapes of m's trees with -test.v, and writes a heap
// profile named after when into $SVC_BENCH_HEAPPROF if that is set (a
// directory): `go tool pprof -sample_index=inuse_space` reads it.
func logShapes(b *testing.B, when string, s *store.Store, m *model.Model) {
	if testing.Verbose() {
		b.Logf("%s: trees %q", when, s.TreeShapesForTest(m))
	}
	if dir := os.Getenv("SVC_BENCH_HEAPPROF"); dir != "" {
		f, err := os.Create(filepath.Join(dir, strings.ReplaceAll(when, " ", "-")+".heap.pb.gz"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
	}
}

// churn updates every person of [0, n) once, then deletes each and
// creates person n+i in its place, from 16 writers.
func churn(b *testing.B, s *store.Store, m *model.Model, n int) {
	ctx := context.Background()
	parallel(n, 16, func(i int) {
		if err := setAge(s, m, i, int64((i+1)%97)); err != nil {
			b.Error(err)
		}
	})
	parallel(n, 16, func(i int) {
		if _, err := s.Delete(ctx, m, personName(i)); err != nil {
			b.Error(err)
		}
		if _, err := s.Create(ctx, m, benchPerson(n+i)); err != nil {
			b.Error(err)
		}
	})
}

// BenchmarkWrittenMemory_100k: see benchWrittenMemory.
func BenchmarkWrittenMemory_100k(b *testing.B) { benchWrittenMemory(b, 100_000) }

// BenchmarkMemory measures the figures of docs/operations.md's sizing
// table: n benchmark persons padded to about size bytes of JSON, either
// created through the store (written) or loaded by a start from a
// snapshot (restart): live heap per object, JSON included, and the
// process's resident memory per object once the runtime has returned
// what is free. Run one sub-benchmark per process: memory freed by an
// earlier one stays fragmented and counts in the next one's RSS.
func BenchmarkMemory(b *testing.B) {
	for _, phase := range []string{"written", "restart"} {
		for _, n := range []int{10_000, 100_000} {
			for _, size := range []int{500, 4000} {
				b.Run(fmt.Sprintf("%s/%dk_%dB", phase, n/1000, size), func(b *testing.B) {
					for b.Loop() {
						b.StopTimer()
						benchMemory(b, phase, n, size)
						b.StartTimer()
					}
				})
			}
		}
	}
}

func benchMemory(b *testing.B, phase string, n, size int) {
	m := storetest.PersonModel()
	dir := b.TempDir()
	var js atomic.Int64
	if phase == "restart" {
		js.Store(writeSnapshotOf(b, dir, n, size))
	}
	before, rssBefore := liveHeap(), rss(b)
	s := openRegistered(b, dir, m)
	defer s.Close()
	if phase == "written" {
		parallel(n, 16, func(i int) {
			p := benchPerson(i)
			pad(p, size)
			rec, err := s.Create(context.Background(), m, p)
			if err != nil {
				b.Error(err)
				return
			}
			js.Add(int64(len(rec.Data)))
		})
	}
	s.WaitSnapshotForTest()
	b.ReportMetric(float64(js.Load())/float64(n), "jsonB/obj")
	b.ReportMetric(float64(liveHeap()-before)/float64(n), "liveB/obj")
	b.ReportMetric(float64(rss(b)-rssBefore)/float64(n), "rssB/obj")
}

// pad makes benchmark person p about size bytes of JSON with an
// annotation (0: leaves it as it is).
func pad(p *storetest.Person, size int) {
	if n := size - 600; size > 0 && n > 0 {
		p.Metadata.Annotations["example.com/padding"] = strings.Repeat("x", n)
	}
}

// rss returns the process's resident memory after the runtime has
// returned every free page to the operating system.
func rss(b *testing.B) int64 {
	debug.FreeOSMemory()
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	for _, line := range strings.Split(string(st), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
