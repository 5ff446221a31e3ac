package cpu

import "github.com/goluon/goluon/nd/backend"

// Helpers of the per-channel kernels (batchnorm.go, biasrelu.go), which see
// their operands as [Outer, C, Inner]: channel c is Outer runs of Inner
// contiguous values.

// channelRun returns the run of channel c in outer slice o.
func channelRun[T Float](p backend.ChannelParams, s []T, o, c int) []T {
	return s[(o*p.C+c)*p.Inner:][:p.Inner]
}

// channelRuns calls fn for every (outer, channel) run, in parallel.
func channelRuns(p backend.ChannelParams, fn func(o, c int)) {
	parallelFor(p.Outer*p.C, runGrain(p), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			fn(r/p.C, r%p.C)
		}
	})
}

// channelRows calls fn for every outer row (C·Inner values), in parallel,
// for kernels whose runs are too short to handle one at a time.
func channelRows(p backend.ChannelParams, fn func(o int)) {
	parallelFor(p.Outer, rowGrain(p), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			fn(o)
		}
	})
}

func runGrain(p backend.ChannelParams) int { return max(1, elemGrain/max(p.Inner, 1)) }
func rowGrain(p backend.ChannelParams) int { return max(1, elemGrain/max(p.C*p.Inner, 1)) }

// serialRuns and serialRows report whether channelRuns and channelRows
// would run on the calling goroutine alone: small kernels then loop
// themselves and allocate no closure.
func serialRuns(p backend.ChannelParams) bool { return numChunks(p.Outer*p.C, runGrain(p)) <= 1 }
func serialRows(p backend.ChannelParams) bool { return numChunks(p.Outer, rowGrain(p)) <= 1 }

// planeSums calls fn for every (outer, channel) run in parallel, in memory
// order, so that each core works on the images the forward kernels gave it
// (they split by image) and finds them in its own cache. Each call returns
// its run's sum; db[c], when db is not nil, becomes channel c's sums added
// in outer order, in float64, whatever the split: the same sums, in the
// same order, as one goroutine visiting channel c's runs one by one.
func planeSums[T Float](p backend.ChannelParams, db []T, fn func(o, c int) float64) {
	planeRangeSums(p, db, func(lo, hi int, sums []float64) {
		for r := lo; r < hi; r++ {
			sums[r] = fn(r/p.C, r%p.C)
		}
	})
}

// planeRangeSums is planeSums for kernels that take a range of runs at
// once: fn writes sums[r] for each run r in [lo, hi) (run r is channel
// r mod C of outer index r/C, the runs in memory order).
func planeRangeSums[T Float](p backend.ChannelParams, db []T, fn func(lo, hi int, sums []float64)) {
	sums := scratch[float64](p.Outer * p.C)
	defer release(sums)
	parallelFor(p.Outer*p.C, runGrain(p), func(lo, hi int) { fn(lo, hi, sums) })
	for c := range db {
		var s float64
		for o := 0; o < p.Outer; o++ {
			s += sums[o*p.C+c]
		}
		db[c] = T(s)
	}
}
