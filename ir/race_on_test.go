//go:build race

package ir_test

// raceOn: the race detector drops a quarter of sync.Pool's Puts at random.
const raceOn = true
