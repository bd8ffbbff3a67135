//go:build race

package check_test

// raceEnabled: the race detector slows the simulator some tenfold, so
// the property tests sample their combinations as under -short.
const raceEnabled = true
