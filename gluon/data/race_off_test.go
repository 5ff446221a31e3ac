//go:build !race

package data

// raceEnabled reports that the race detector is on.
const raceEnabled = false
