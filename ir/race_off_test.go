//go:build !race

package ir_test

const raceOn = false
