//go:build !race

package validation

// raceEnabled: the race detector makes some code allocate.
const raceEnabled = false
