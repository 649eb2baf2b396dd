package store

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/svcrun/svc/runtime/store/internal/durable/disk"
)

// storeMetrics are the store's operational metrics (docs/operations.md,
// "Metrics"). The commit path only observes histograms, on the syncer
// outside every lock, and the snapshot writer once per snapshot; object
// counts and file sizes are read when scraped (Collector).
type storeMetrics struct {
	sync        prometheus.Histogram
	batchWrites prometheus.Histogram
	batchBytes  prometheus.Histogram
	snapshot    prometheus.Histogram
	objects     *prometheus.Desc
	walBytes    *prometheus.Desc
	snapBytes   *prometheus.Desc
}

func newStoreMetrics() *storeMetrics {
	return &storeMetrics{
		sync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "svc_store_fsync_duration_seconds",
			Help:    "Time to make one batch of writes durable: the write-ahead log write and its fsync.",
			Buckets: []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
		}),
		batchWrites: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "svc_store_batch_writes",
			Help:    "Writes per committed batch (group commit: the writes that share one fsync).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
		}),
		batchBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "svc_store_batch_bytes",
			Help:    "Record bytes per committed batch.",
			Buckets: prometheus.ExponentialBuckets(256, 4, 9), // 256 B to 16 MiB
		}),
		snapshot: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "svc_store_snapshot_duration_seconds",
			Help:    "Time to write one snapshot in the background.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
		}),
		objects:   prometheus.NewDesc("svc_store_objects", "Objects stored per registered model, read when scraped.", []string{"resource"}, nil),
		walBytes:  prometheus.NewDesc("svc_store_wal_bytes", "Bytes in the write-ahead log's live segments.", nil, nil),
		snapBytes: prometheus.NewDesc("svc_store_snapshot_bytes", "Record bytes of the newest snapshot.", nil, nil),
	}
}

// observeBatch records a committed batch; took is its log write and
// fsync, 0 for a store without a log.
func (m *storeMetrics) observeBatch(writes int, bytes int64, took time.Duration) {
	m.batchWrites.Observe(float64(writes))
	m.batchBytes.Observe(float64(bytes))
	if took > 0 {
		m.sync.Observe(took.Seconds())
	}
}

func (m *storeMetrics) snapshotted(took time.Duration) { m.snapshot.Observe(took.Seconds()) }

// Collector returns the store's metrics for a Prometheus registry: the
// commit histograms, objects per registered model (keyed by its storage
// key, group/plural) and the log's and newest snapshot's sizes. Counting
// happens when scraped, so writes pay nothing for it. On a shared (etcd)
// store the log and snapshot metrics are absent and the batch ones stay
// empty: etcd commits those writes.
func (s *Store) Collector() prometheus.Collector { return storeCollector{s} }

type storeCollector struct{ s *Store }

func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	m := c.s.metrics
	m.sync.Describe(ch)
	m.batchWrites.Describe(ch)
	m.batchBytes.Describe(ch)
	m.snapshot.Describe(ch)
	ch <- m.objects
	ch <- m.walBytes
	ch <- m.snapBytes
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	s, m := c.s, c.s.metrics
	m.sync.Collect(ch)
	m.batchWrites.Collect(ch)
	m.batchBytes.Collect(ch)
	m.snapshot.Collect(ch)
	for key, t := range *s.tables.Load() {
		st := t.state.Load()
		if st.model == nil || st.byName == nil {
			continue // raw (no model) or not built yet: counting would walk memdb
		}
		n := st.byName.len()
		ch <- prometheus.MustNewConstMetric(m.objects, prometheus.GaugeValue, float64(n), key)
	}
	if d, ok := s.backend.(*disk.Backend); ok {
		wal, snap := d.Sizes()
		ch <- prometheus.MustNewConstMetric(m.walBytes, prometheus.GaugeValue, float64(wal))
		ch <- prometheus.MustNewConstMetric(m.snapBytes, prometheus.GaugeValue, float64(snap))
	}
}
