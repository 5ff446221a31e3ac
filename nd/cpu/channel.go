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
