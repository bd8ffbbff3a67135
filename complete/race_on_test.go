//go:build race

package complete_test

// raceEnabled: the race detector slows the simulator some tenfold.
const raceEnabled = true
