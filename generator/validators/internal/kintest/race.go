//go:build race

package kintest

// Race is whether the race detector is on; it makes some code allocate,
// so allocation tests skip under it.
const Race = true
