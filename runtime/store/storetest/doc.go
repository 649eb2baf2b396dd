// Package storetest gives tests a real store in one line (New) and a
// hand-written Person model shaped like the example plugin's, for tests and
// benchmarks of the runtime before generated models exist.
package storetest
