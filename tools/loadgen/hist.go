package main

import (
	"math"
	"math/bits"
	"time"
)

// The latency histogram keeps counts in log-linear buckets: every power of
// two is split into histSub equal buckets, so a bucket is at most 1/histSub
// (1.6%) of its lower bound wide, and a percentile read from a bucket's
// midpoint is within 0.8% of the exact value. Values below 2*histSub
// nanoseconds get one bucket each and are exact. The array is fixed
// (histBuckets counts, about 30 KiB), so memory does not grow with the
// number of samples, and two histograms merge by adding their counts.
const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	// The largest int64 has 63 significant bits, so its shift is
	// 63-(histSubBits+1) and its index below (shift+2)*histSub.
	histBuckets = (63-histSubBits-1)*histSub + 2*histSub
)

// Histogram records durations. The zero value is empty and ready to use.
// It is not safe for concurrent use; give each worker its own and Merge.
type Histogram struct {
	counts   [histBuckets]uint64
	n        uint64
	sum      float64 // nanoseconds
	min, max int64   // nanoseconds, exact
}

// histIndex returns the bucket of a non-negative value v.
func histIndex(v int64) int {
	u := uint64(v)
	shift := bits.Len64(u) - (histSubBits + 1)
	if shift < 0 {
		shift = 0
	}
	return shift<<histSubBits + int(u>>uint(shift))
}

// histBounds returns the lowest value of bucket i and the bucket's width.
func histBounds(i int) (lo, width int64) {
	if i < 2*histSub {
		return int64(i), 1
	}
	shift := i>>histSubBits - 1
	top := int64(i&(histSub-1) + histSub)
	return top << uint(shift), 1 << uint(shift)
}

// Record adds one duration; a negative one (clock steps) counts as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[histIndex(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds every sample of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest sample (exact), or 0 when empty.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the average sample, or 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the q-quantile (0 < q <= 1) using the nearest-rank
// definition: the smallest sample such that at least q of all samples are
// at or below it. It is read as the midpoint of that sample's bucket,
// clamped to the exact min and max, so Quantile(1) is the exact maximum.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen < rank {
			continue
		}
		lo, w := histBounds(i)
		v := lo + (w-1)/2
		return time.Duration(min(max(v, h.min), h.max))
	}
	return time.Duration(h.max) // unreachable: the counts add up to n
}
