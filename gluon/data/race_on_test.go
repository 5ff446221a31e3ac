//go:build race

package data

// raceEnabled reports that the race detector is on; under it sync.Pool
// drops items at random, so allocation counts are not meaningful.
const raceEnabled = true
