package gluon

import (
	"sync"
	"time"
)

// Whether pinning pays depends on the host, and on one host it changes
// from minute to minute: where the cores pass cache lines slowly, LeNet's
// 2-context step ran about 20% faster pinned; where they pass them
// quickly, about 5% slower (BenchmarkTrainStepLeNet/2ctx with the round
// trip of bench/fmapeak -handoff probed around each run). So
// ForEachDevice chooses per call: it times its calls, keeps a moving
// average of each kind, runs the faster kind, and tries the other one at
// random one call in 16 so that a change is noticed.

// choice keeps the moving averages of pinned and unpinned calls.
type choice struct {
	mu   sync.Mutex
	avg  [2]float64 // seconds per call: [0] unpinned, [1] pinned
	n    [2]int     // calls timed
	rand uint64     // xorshift state for the exploring calls
}

const (
	// choiceWarm is how many calls of each kind are timed, alternately,
	// before the averages decide.
	choiceWarm = 4
	// choiceAlpha is the weight of a new call in its kind's average.
	choiceAlpha = 0.2
	// choiceExplore is the chance, one in so many, that a call runs the
	// kind that is not the faster one.
	choiceExplore = 16
)

// pinChoice decides and learns for every ForEachDevice call that could pin.
var pinChoice = &choice{rand: 0x9e3779b97f4a7c15}

// pick reports whether the next call is pinned.
func (c *choice) pick() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[0] < choiceWarm || c.n[1] < choiceWarm {
		return c.n[1] <= c.n[0] // alternate, pinned first
	}
	c.rand ^= c.rand << 13
	c.rand ^= c.rand >> 7
	c.rand ^= c.rand << 17
	faster := c.avg[1] <= c.avg[0]
	if c.rand%choiceExplore == 0 {
		return !faster
	}
	return faster
}

// record adds a call of d, pinned or not, to its kind's average.
func (c *choice) record(pinned bool, d time.Duration) {
	k := 0
	if pinned {
		k = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[k] == 0 {
		c.avg[k] = d.Seconds()
	} else {
		c.avg[k] += choiceAlpha * (d.Seconds() - c.avg[k])
	}
	c.n[k]++
}
