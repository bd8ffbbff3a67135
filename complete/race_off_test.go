//go:build !race

package complete_test

const raceEnabled = false
