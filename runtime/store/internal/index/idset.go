package index

import "math/bits"

// IDSet is a set of object ids: a bitmap, or a map when the ids are
// sparse (a table that has seen many more objects than it holds).
type IDSet struct {
	// Bits and IDs are open to the planner, which sets bits in its hot
	// loops without a call per id.
	Bits []uint64
	IDs  map[uint32]struct{}
}

// MaxBitmapID bounds the bitmap at 2 MiB; ids beyond go to the map.
const MaxBitmapID = 1 << 24

// Add adds id to s.
func (s *IDSet) Add(id uint32) {
	if id >= MaxBitmapID {
		if s.IDs == nil {
			s.IDs = map[uint32]struct{}{}
		}
		s.IDs[id] = struct{}{}
		return
	}
	w := int(id / 64)
	if w >= len(s.Bits) {
		s.Bits = append(s.Bits, make([]uint64, w+1-len(s.Bits))...)
	}
	s.Bits[w] |= 1 << (id % 64)
}

// Has reports whether s holds id.
func (s *IDSet) Has(id uint32) bool {
	if id >= MaxBitmapID {
		_, ok := s.IDs[id]
		return ok
	}
	w := int(id / 64)
	return w < len(s.Bits) && s.Bits[w]&(1<<(id%64)) != 0
}

// AddWord adds the ids 64*chunk+i for every bit i set in w.
func (s *IDSet) AddWord(chunk uint32, w uint64) {
	if uint64(chunk)*64 >= MaxBitmapID {
		for ; w != 0; w &= w - 1 {
			s.Add(chunk*64 + uint32(bits.TrailingZeros64(w)))
		}
		return
	}
	i := int(chunk)
	if i >= len(s.Bits) {
		s.Bits = append(s.Bits, make([]uint64, i+1-len(s.Bits))...)
	}
	s.Bits[i] |= w
}

// And keeps the ids of s that o holds too.
func (s *IDSet) And(o *IDSet) {
	for i := range s.Bits {
		if i < len(o.Bits) {
			s.Bits[i] &= o.Bits[i]
		} else {
			s.Bits[i] = 0
		}
	}
	for id := range s.IDs {
		if _, ok := o.IDs[id]; !ok {
			delete(s.IDs, id)
		}
	}
}

// Len returns the number of ids in s.
func (s *IDSet) Len() int64 {
	n := int64(len(s.IDs))
	for _, w := range s.Bits {
		n += int64(bits.OnesCount64(w))
	}
	return n
}
