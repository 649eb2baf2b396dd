package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/snapshot"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// benchPerson returns the i-th Person of the benchmark data set: about 600
// bytes of JSON, 4 labels (team: 10 values; kind: 2 values; band: the age's
// tens, so it correlates with the age sort; rare: 0.1% of objects), 5
// indexed fields.
func benchPerson(i int) *storetest.Person {
	p := storetest.NewPerson(personName(i), storetest.PersonSpec{
		Name:   fmt.Sprintf("Person Number %d", i),
		Age:    storetest.Int64(int64(i % 97)),
		Gender: []string{"MALE", "FEMALE"}[i%2],
		Email:  fmt.Sprintf("person%d@example.com", i),
		Friend: fmt.Sprintf("person-%07d", (i*7919)%100000),
		Tags:   []string{fmt.Sprint("tag", i%13), fmt.Sprint("tag", i%7+20)},
	})
	p.Metadata.Labels = map[string]string{"team": fmt.Sprint("t", i%10), "kind": []string{"a", "b"}[i%2], "band": fmt.Sprint("b", i%97/10)}
	if i%1000 == 0 {
		p.Metadata.Labels["rare"] = "yes"
	}
	p.Metadata.Annotations = map[string]string{
		"example.com/description": "A benchmark person with enough text to make the document about six hundred bytes long in total.",
		"example.com/owner":       "benchmarks",
	}
	return p
}

var (
	readStoreOnce sync.Once
	readStore     *store.Store
	readModel     *model.Model
)

// populated returns a memory-only store with 100k benchmark persons,
// shared by the read benchmarks of one run.
func populated(b *testing.B) (*store.Store, *model.Model) {
	readStoreOnce.Do(func() {
		m := storetest.PersonModel()
		s, err := store.Open(store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Register(context.Background(), m); err != nil {
			b.Fatal(err)
		}
		createAll(b, s, m, 0, 100_000, 16)
		readStore, readModel = s, m
	})
	return readStore, readModel
}

// personName is the name of benchPerson(i), without building it.
func personName(i int) string { return fmt.Sprintf("person-%07d", i) }

// createAll creates persons [from, to) with the given number of writers.
func createAll(b *testing.B, s *store.Store, m *model.Model, from, to, writers int) {
	parallel(to-from, writers, func(i int) {
		if _, err := s.Create(context.Background(), m, benchPerson(from+i)); err != nil {
			b.Error(err)
		}
	})
}

// parallel calls fn(i) for every i in [0, n) from the given number of
// goroutines.
func parallel(n, writers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// setAge stores benchmark person i with spec.age age.
func setAge(s *store.Store, m *model.Model, i int, age int64) error {
	ctx := context.Background()
	rec, err := s.Get(ctx, m, personName(i))
	if err != nil {
		return err
	}
	p, err := store.Decode(m, rec)
	if err != nil {
		return err
	}
	p.(*storetest.Person).Spec.Age = storetest.Int64(age)
	_, err = s.Update(ctx, m, p)
	return err
}

// randomNames returns names of benchmark persons picked at random.
func randomNames() []string {
	names := make([]string, 4096)
	for i := range names {
		names[i] = personName(rand.IntN(100_000))
	}
	return names
}

func BenchmarkGet_100k(b *testing.B) {
	s, m := populated(b)
	names := randomNames()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Get(ctx, m, names[i%len(names)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetAndRead_100k reads the record each get returns, as every
// caller does (a handler writes its JSON): a lookup that touches the
// record pays for the cache miss its caller would pay anyway.
func BenchmarkGetAndRead_100k(b *testing.B) {
	s, m := populated(b)
	names := randomNames()
	ctx := context.Background()
	n := 0
	for i := 0; b.Loop(); i++ {
		r, err := s.Get(ctx, m, names[i%len(names)])
		if err != nil {
			b.Fatal(err)
		}
		n += int(r.Version) + int(r.Data[len(r.Data)/2])
	}
	_ = n
}

// BenchmarkGetParallel_100k reads from every core at once, as a server's
// handlers do.
func BenchmarkGetParallel_100k(b *testing.B) {
	s, m := populated(b)
	names := randomNames()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(names))
		for pb.Next() {
			i++
			if _, err := s.Get(ctx, m, names[i%len(names)]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchList(b *testing.B, raw string) {
	s, m := populated(b)
	q := mustQuery(b, raw)
	ctx := context.Background()
	res, err := s.List(ctx, m, q)
	if err != nil || len(res.Items) != 20 {
		b.Fatalf("List(%s) = %d items, %v", raw, len(res.Items), err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.List(ctx, m, q); err != nil {
			b.Fatal(err)
		}
	}
}

// 100 matches of 100k.
func BenchmarkListPage20SelectiveLabel_100k(b *testing.B) {
	benchList(b, "labelSelector=rare%3Dyes&sort=spec.age,desc&size=20&page=2")
}

// 10k matches of 100k.
func BenchmarkListPage20TenthLabel_100k(b *testing.B) {
	benchList(b, "labelSelector=team%3Dt3&sort=spec.age,desc&size=20&page=2")
}

// 50k matches of 100k.
func BenchmarkListPage20UnselectiveLabel_100k(b *testing.B) {
	benchList(b, "labelSelector=kind%3Da&sort=spec.age,desc&size=20&page=2")
}

// 10k matches of 100k, all at the far end of the sort order: the stream
// passes over 90k entries of other bands.
func BenchmarkListPage20CorrelatedLabel_100k(b *testing.B) {
	benchList(b, "labelSelector=band%3Db0&sort=spec.age,desc&size=20&page=2")
}

// Two terms: the total is counted over the smaller candidate set.
func BenchmarkListPage20TwoLabels_100k(b *testing.B) {
	benchList(b, "labelSelector=kind%3Da&labelSelector=team%3Dt4&sort=spec.age,asc&size=20")
}

var (
	durableOnce  sync.Once
	durableStore *store.Store
	durableModel *model.Model
	durableDir   string
	durableNext  atomic.Int64
)

// TestMain removes the create benchmarks' shared store, a few hundred MB
// that no single benchmark owns.
func TestMain(m *testing.M) {
	code := m.Run()
	if durableStore != nil {
		durableStore.Close()
		os.RemoveAll(durableDir)
	}
	os.Exit(code)
}

// durable returns a store on disk holding 100k persons, shared by the
// create benchmarks of one run; TestMain removes it.
func durable(b *testing.B) (*store.Store, *model.Model) {
	durableOnce.Do(func() {
		dir, err := os.MkdirTemp("", "svc-bench-")
		if err != nil {
			b.Fatal(err)
		}
		m := storetest.PersonModel()
		s, err := store.Open(store.Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Register(context.Background(), m); err != nil {
			b.Fatal(err)
		}
		createAll(b, s, m, 0, 100_000, 16)
		durableStore, durableModel, durableDir = s, m, dir
		durableNext.Store(100_000)
	})
	return durableStore, durableModel
}

func benchCreate(b *testing.B, writers int) {
	s, m := durable(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	from := int(durableNext.Add(int64(b.N))) - b.N
	createAll(b, s, m, from, from+b.N, writers)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
}

func BenchmarkCreateDurable1Writer_100k(b *testing.B)   { benchCreate(b, 1) }
func BenchmarkCreateDurable16Writers_100k(b *testing.B) { benchCreate(b, 16) }

// writeSnapshot writes n benchmark persons as a snapshot, the way a data
// directory looks at start-up, and returns the JSON bytes written.
func writeSnapshot(b *testing.B, dir string, n int) int64 { return writeSnapshotOf(b, dir, n, 0) }

// writeSnapshotOf is writeSnapshot of persons padded to about size bytes
// of JSON (0: as they are).
func writeSnapshotOf(b *testing.B, dir string, n, size int) int64 {
	m := storetest.PersonModel()
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var jsonBytes int64
	err := snapshot.Write(dir+"/snapshots", 0, func(w *snapshot.Writer) error {
		for i := range n {
			p := benchPerson(i)
			pad(p, size)
			p.APIVersion, p.Kind = m.APIVersion(), m.Kind
			p.Metadata.SetVersion(0)
			ts := created.Add(time.Duration(i) * time.Millisecond)
			p.Metadata.CreationTimestamp = &ts
			rec, n, err := store.EncodeObjectForTest(m, p)
			if err != nil {
				return err
			}
			jsonBytes += int64(n)
			if err := w.Add(1, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return jsonBytes
}

func benchBuild(b *testing.B, n int) {
	dir := b.TempDir()
	jsonBytes := writeSnapshot(b, dir, n)
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		opts := store.Options{Dir: dir}
		if os.Getenv("SVC_BENCH_LOG") != "" {
			opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		}
		s, err := store.Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		m := storetest.PersonModel()
		b.StartTimer()
		if err := s.Register(context.Background(), m); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc-before.HeapAlloc)-jsonBytes)/float64(n), "heapB/obj-beyond-json")
		b.ReportMetric(float64(jsonBytes)/float64(n), "jsonB/obj")
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkIndexBuild_100k times Register on 100k stored persons, as at a
// start: their persisted index keys are reused and all nine indexes built.
// It also reports the heap each indexed object costs beyond its JSON.
func BenchmarkIndexBuild_100k(b *testing.B) { benchBuild(b, 100_000) }

func BenchmarkIndexBuild_1M(b *testing.B) {
	skipUnless1M(b)
	benchBuild(b, 1_000_000)
}

// skipUnless1M skips a benchmark of a million objects (minutes, and
// gigabytes) unless SVC_BENCH_1M is set, as make bench sets it.
func skipUnless1M(b *testing.B) {
	if os.Getenv("SVC_BENCH_1M") == "" {
		b.Skip("set SVC_BENCH_1M=1 (make bench does) to run it on 1M objects")
	}
}

// benchOpen times Open on n stored persons: reading the snapshot and
// loading its records into memdb, the part of a start before Register.
func benchOpen(b *testing.B, n int) {
	dir := b.TempDir()
	writeSnapshot(b, dir, n)
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		s, err := store.Open(store.Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

func BenchmarkOpen_100k(b *testing.B) { benchOpen(b, 100_000) }

func BenchmarkOpen_1M(b *testing.B) {
	skipUnless1M(b)
	benchOpen(b, 1_000_000)
}
