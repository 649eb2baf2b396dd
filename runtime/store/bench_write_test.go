package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// benchBigUpdate updates only spec.age of a person holding n tag keys
// while another goroutine creates other persons one after another: ns/op
// is the update's latency, create-max-ms the longest create, which waited
// behind the update on the one committer.
func benchBigUpdate(b *testing.B, n int) {
	m := storetest.PersonModel()
	s := storetest.Open(b, bigKeysOptions(b.TempDir(), n), m)
	ctx := context.Background()
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%07d", i)
	}
	rec, err := s.Create(ctx, m, storetest.NewPerson("big", storetest.PersonSpec{Name: "Big", Tags: tags}))
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	worst := make(chan time.Duration)
	go func() {
		var worstSeen time.Duration
		for i := 0; ; i++ {
			select {
			case <-stop:
				worst <- worstSeen
				return
			default:
			}
			start := time.Now()
			if _, err := s.Create(ctx, m, storetest.NewPerson(fmt.Sprintf("other-%d", i), storetest.PersonSpec{Name: "Other"})); err != nil {
				b.Error(err)
			}
			worstSeen = max(worstSeen, time.Since(start))
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := store.Decode(m, rec)
		if err != nil {
			b.Fatal(err)
		}
		p.(*storetest.Person).Spec.Age = storetest.Int64(int64(i % 100))
		if rec, err = s.Update(ctx, m, p); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	b.ReportMetric(float64((<-worst).Microseconds())/1000, "create-max-ms")
}

func BenchmarkUpdateOneField10kTags(b *testing.B)  { benchBigUpdate(b, 10_000) }
func BenchmarkUpdateOneField100kTags(b *testing.B) { benchBigUpdate(b, 100_000) }

// BenchmarkUpdateDurable16Writers_100k changes spec.age of stored persons
// from 16 writers (a conflict, two writers on one person, is skipped).
func BenchmarkUpdateDurable16Writers_100k(b *testing.B) {
	s, m := durable(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	parallel(b.N, 16, func(i int) {
		// Another age than benchPerson's (an identical write changes nothing).
		if err := setAge(s, m, i%100_000, int64((i+1+i/100_000)%97)); err != nil && !errors.Is(err, store.ErrConflict) {
			b.Error(err)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "updates/s")
}
