//go:build race

package paddle_test

// raceEnabled: see norace_test.go.
const raceEnabled = true
