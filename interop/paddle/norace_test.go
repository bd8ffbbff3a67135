//go:build !race

package paddle_test

// raceEnabled: the race detector slows the simulator some tenfold; the
// heavy rows of TestTrainFixtures do not run under it.
const raceEnabled = false
