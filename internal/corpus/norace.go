//go:build !race

package corpus

// RaceDetector is set when the race detector is on: tests that run the
// simulator over the whole corpus then leave out the cases that repeat
// others at ten times the cost.
const RaceDetector = false
