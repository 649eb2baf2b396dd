package store_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// countedPerson counts how often a Person is decoded.
type countedPerson struct{ storetest.Person }

var decodes atomic.Int64

func (c *countedPerson) UnmarshalJSON(b []byte) error {
	decodes.Add(1)
	return json.Unmarshal(b, &c.Person)
}

func countedModel(indexVersion string) *model.Model {
	m := storetest.PersonModel()
	m.New = func() object.Object { return &countedPerson{} }
	m.Validate = nil
	m.IndexVersion = indexVersion
	for i := range m.Indexes {
		keys := m.Indexes[i].Keys
		m.Indexes[i].Keys = func(o object.Object, dst []model.Key) []model.Key {
			if c, ok := o.(*countedPerson); ok {
				o = &c.Person
			}
			return keys(o, dst)
		}
	}
	return m
}

// TestRestartReusesPersistedKeys: objects written under a model's index
// version are indexed at the next start from their persisted keys, without
// decoding; a different version decodes them again. Both give the same
// answers.
func TestRestartReusesPersistedKeys(t *testing.T) {
	for _, snapshotBytes := range []int64{64 << 20, 1 << 10} { // from the log, from snapshots
		t.Run(fmt.Sprint(snapshotBytes), func(t *testing.T) {
			dir := t.TempDir()
			opts := store.Options{Dir: dir, SnapshotBytes: snapshotBytes}
			s, err := store.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			m := countedModel("v1")
			if err := s.Register(ctx, m); err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				p := storetest.NewPerson(fmt.Sprintf("p%02d", i), Spec{Name: "x", Age: storetest.Int64(int64(i % 7)), Tags: []string{"a", fmt.Sprint("t", i%3)}})
				p.Metadata.Labels = map[string]string{"team": fmt.Sprint("t", i%4)}
				if i%5 == 0 {
					p.Metadata.Finalizers = []string{"example.com/f"}
				}
				if _, err := s.Create(ctx, m, p); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 50; i += 10 {
				if _, err := s.Delete(ctx, m, fmt.Sprintf("p%02d", i)); err != nil {
					t.Fatal(err)
				}
			}
			const q = "labelSelector=team%3Dt1&fieldSelector=spec.tags%3Dt2&sort=spec.age,desc"
			want := names(must(s.List(ctx, m, mustQuery(t, q))))
			deleting := names(must(s.List(ctx, m, mustQuery(t, "sort=metadata.deletionTimestamp,asc&size=3"))))
			s.Close()

			for _, tc := range []struct {
				version string
				decoded bool
			}{{"v1", false}, {"v2", true}} {
				s, err := store.Open(opts)
				if err != nil {
					t.Fatal(err)
				}
				before := decodes.Load()
				m := countedModel(tc.version)
				if err := s.Register(ctx, m); err != nil {
					t.Fatal(err)
				}
				if n := decodes.Load() - before; (n > 0) != tc.decoded {
					t.Errorf("version %s: %d objects decoded at register, want decoding %v", tc.version, n, tc.decoded)
				}
				if got := names(must(s.List(ctx, m, mustQuery(t, q)))); got != want {
					t.Errorf("version %s: list = %s, want %s", tc.version, got, want)
				}
				if got := names(must(s.List(ctx, m, mustQuery(t, "sort=metadata.deletionTimestamp,asc&size=3")))); got != deleting {
					t.Errorf("version %s: deleting = %s, want %s", tc.version, got, deleting)
				}
				s.Close()
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
