//go:build !race

package check_test

// raceEnabled: see race_test.go.
const raceEnabled = false
