package gluon

import (
	"sync"
	"time"
)

// Whether pinning pays depends on the host, and on one host it changes
// from minute to minute: where the cores pass cache lines slowly, LeNet's
// 2-context step ran about 20% faster pinned; where they pass them
// quickly, 5-10% slower (BenchmarkTrainStepLeNet/2ctx with the round trip
// of bench/fmapeak -handoff probed around each run). So ForEachDevice
// chooses: it times its calls and keeps a moving average of pinned and of
// unpinned ones. Calls come in runs of one kind, because pinning pays
// only once a context's data has settled in its core's caches: a lone
// pinned call among unpinned ones measured no faster. The first calls of
// a run that changes kind are not timed, each run takes the faster kind,
// and one run in choiceExplore, at random, the other one, so that a change
// of the host is noticed.

// choice keeps the moving averages of pinned and unpinned calls.
type choice struct {
	mu   sync.Mutex
	avg  [2]float64 // seconds per call: [0] unpinned, [1] pinned
	n    [2]int     // calls timed
	pin  bool       // the current run's kind
	left int        // calls left in the current run
	skip int        // calls of the current run not to time
	rand uint64     // xorshift state for the exploring runs
}

const (
	// choiceRun is the length of a run of calls of one kind, and
	// choiceSettle how many calls of a run that changes kind are not
	// timed.
	choiceRun, choiceSettle = 8, 3
	// choiceWarm is how many calls of each kind are timed before the
	// averages decide.
	choiceWarm = choiceRun - choiceSettle
	// choiceAlpha is the weight of a new call in its kind's average.
	choiceAlpha = 0.2
	// choiceExplore is the chance, one in so many, that a run takes the
	// kind that is not the faster one.
	choiceExplore = 16
)

// pinChoice decides and learns for every ForEachDevice call that could pin.
var pinChoice = &choice{pin: true, rand: 0x9e3779b97f4a7c15}

// pick reports whether the next call is pinned, and whether its time is
// to be recorded.
func (c *choice) pick() (pin, timed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 {
		next := c.next()
		if next != c.pin {
			c.skip = choiceSettle
		}
		c.pin, c.left = next, choiceRun
	}
	c.left--
	if c.skip > 0 {
		c.skip--
		return c.pin, false
	}
	return c.pin, true
}

// next chooses the kind of the next run.
func (c *choice) next() bool {
	if c.n[1] < choiceWarm {
		return true
	}
	if c.n[0] < choiceWarm {
		return false
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
