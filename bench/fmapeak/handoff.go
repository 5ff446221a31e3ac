package main

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// line is an atomic counter alone on its cache line.
type line struct {
	v atomic.Int64
	_ [56]byte
}

// handoff measures how long two cores take to pass a cache line back and
// forth: two goroutines on OS threads of their own bounce a counter
// (ping, then pong) trips times per run. It returns the median over runs
// of the time per round trip, or 0 with fewer than two procs (the
// goroutines would take turns on one thread) or when the partner does not
// answer within a second (another program holds the other core).
//
// Virtual machines differ here, and one machine changes over time: on the
// 2-core hosts make bench runs on, the round trip has measured about 100ns
// in some minutes and 550–700ns in others, and every kernel that splits
// its work over the cores pays it at each call.
func handoff(trips, runs int) time.Duration {
	if runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 || trips < 1 || runs < 1 {
		return 0
	}
	var ping, pong line
	var stop atomic.Bool
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for last := int64(0); !stop.Load(); {
			if v := ping.v.Load(); v != last {
				last = v
				pong.v.Store(v)
			}
		}
	}()
	defer stop.Store(true)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var i int64
	trip := func(deadline time.Time) bool {
		i++
		ping.v.Store(i)
		for n := 0; pong.v.Load() != i; n++ {
			if n%4096 == 0 && time.Now().After(deadline) {
				return false
			}
		}
		return true
	}
	if !trip(time.Now().Add(time.Second)) { // the partner is running
		return 0
	}
	per := make([]time.Duration, runs)
	for r := range per {
		start := time.Now()
		deadline := start.Add(time.Second)
		for range trips {
			if !trip(deadline) {
				return 0
			}
		}
		per[r] = time.Since(start) / time.Duration(trips)
	}
	slices.Sort(per)
	return per[runs/2]
}
