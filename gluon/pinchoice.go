package gluon

import (
	"slices"
	"sync"
	"time"
)

// Whether pinning pays depends on the host, and on one host it changes
// from minute to minute: where the cores pass cache lines slowly, LeNet's
// 2-context step ran about 20% faster pinned; where they pass them
// quickly, up to 10% slower (BenchmarkTrainStepLeNet/2ctx with the round trip
// of bench/fmapeak -handoff probed around each run). So ForEachDevice
// chooses, by timing its calls. Calls come in runs of one kind, because
// pinning pays only once a context's data has settled in its core's
// caches: a lone pinned call among unpinned ones measured no faster. The
// first calls of a run that changes kind (and of the first run, which
// pays for first-time setup) are not timed; the median of the others is
// the run's time, and each kind's estimate moves halfway to its runs'
// times. Runs take the kind with the lower estimate (changing kinds only
// when the other's is lower by choiceMargin; pinned at first), and one run
// in choiceExplore, at random, the other one, so that a change of the
// host is noticed. Calls that fail are not timed. One choice serves
// every call that could pin, whatever its work: a training
// loop broken up by shorter evaluation calls still ends up on the faster
// kind, with the runs that mix both measured less sharply.

// choice keeps the estimates of pinned and unpinned calls.
type choice struct {
	mu    sync.Mutex
	est   [2]float64 // seconds per call: [0] unpinned, [1] pinned
	runs  [2]int     // runs timed
	pin   bool       // the current run's kind
	best  bool       // the kind runs take when not exploring
	left  int        // calls left in the current run
	skip  int        // calls of the current run not to time
	times []float64  // the current run's timed calls
	rand  uint64     // xorshift state for the exploring runs
}

const (
	// choiceRun is the length of a run of calls of one kind, and
	// choiceSettle how many calls of a run that changes kind are not
	// timed.
	choiceRun, choiceSettle = 8, 3
	// choiceExplore is the chance, one in so many, that a run takes the
	// kind with the higher estimate.
	choiceExplore = 16
	// choiceMargin is how much lower the other kind's estimate must be
	// for runs to change to it: the medians of two kinds a few percent
	// apart cross now and then.
	choiceMargin = 0.02
)

// newChoice returns a choice that starts with a run of pinned calls.
func newChoice() *choice {
	return &choice{pin: true, best: true, skip: choiceSettle, left: choiceRun, rand: 0x9e3779b97f4a7c15}
}

// pinChoice decides and learns for every ForEachDevice call that could pin.
var pinChoice = newChoice()

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
		c.pin, c.left, c.times = next, choiceRun, c.times[:0]
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
	if c.runs[1] == 0 || c.runs[0] == 0 {
		return c.runs[1] == 0
	}
	cur, other := 0, 1
	if c.best {
		cur, other = 1, 0
	}
	if c.est[other] < c.est[cur]*(1-choiceMargin) {
		c.best = !c.best
	}
	c.rand ^= c.rand << 13
	c.rand ^= c.rand >> 7
	c.rand ^= c.rand << 17
	if c.rand%choiceExplore == 0 {
		return !c.best
	}
	return c.best
}

// record adds a timed call of d, pinned or not, to the current run; the
// run's last call moves its kind's estimate.
func (c *choice) record(pinned bool, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pinned != c.pin {
		// Calls that may pin do not overlap (pinPlan's pinning flag), so
		// each record follows its own pick.
		panic("gluon: a pinning choice recorded for the wrong run")
	}
	c.times = append(c.times, d.Seconds())
	if c.left > 0 {
		return
	}
	slices.Sort(c.times)
	med := c.times[len(c.times)/2]
	k := 0
	if pinned {
		k = 1
	}
	if c.runs[k] == 0 {
		c.est[k] = med
	} else {
		c.est[k] = (c.est[k] + med) / 2
	}
	c.runs[k]++
}
