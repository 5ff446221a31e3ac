package nd

import (
	"math/rand/v2"
	"sync"

	"github.com/goluon/goluon/ctx"
)

// drawLog makes a checkpointed function's random draws. Its first run
// takes them from the caller's generators, as the function would
// unchecked (so checkpointing changes no dropout mask and gives other
// goroutines sharing those generators no repeated values), and logs them;
// the recomputation replays the log, whatever was drawn from the caller's
// generators since.
type drawLog struct {
	mu     sync.Mutex
	caller *Session // the generators of the first run; nil in the recomputation
	logs   map[ctx.Context]*[]uint64
}

// rngFor returns s's generator for dev: one that draws from the caller's
// and logs, or one that replays the log.
func (d *drawLog) rngFor(s *Session, dev ctx.Context) *lockedRand {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	if g := s.gens[dev]; g != nil {
		return g
	}
	d.mu.Lock()
	log := d.logs[dev]
	if log == nil {
		log = new([]uint64)
		d.logs[dev] = log
	}
	d.mu.Unlock()
	var src rand.Source
	if d.caller != nil {
		src = tapSource{from: d.caller.rngFor(dev), log: log}
	} else {
		src = &replaySource{dev: dev, log: *log}
	}
	g := &lockedRand{r: rand.New(src)}
	if s.gens == nil {
		s.gens = map[ctx.Context]*lockedRand{}
	}
	s.gens[dev] = g
	return g
}

// replay returns the log of the recomputation.
func (d *drawLog) replay() *drawLog {
	d.mu.Lock()
	defer d.mu.Unlock()
	return &drawLog{logs: d.logs}
}

// tapSource draws from a caller's generator and logs the values. Its
// users hold their own generator's lock, which orders the log.
type tapSource struct {
	from *lockedRand
	log  *[]uint64
}

func (t tapSource) Uint64() uint64 {
	t.from.mu.Lock()
	v := t.from.r.Uint64()
	t.from.mu.Unlock()
	*t.log = append(*t.log, v)
	return v
}

// replaySource gives the values a tapSource logged, in order.
type replaySource struct {
	dev ctx.Context
	log []uint64
	i   int
}

func (r *replaySource) Uint64() uint64 {
	if r.i == len(r.log) {
		fail("Checkpoint", ErrGraph, "the recomputation drew more random numbers on %v than the first run (%d): the checkpointed function is not deterministic", r.dev, len(r.log))
	}
	r.i++
	return r.log[r.i-1]
}
