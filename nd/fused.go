package nd

import "sync/atomic"

// fusedOff is the one switch between the backends' fused kernels (batch
// norm, bias + ReLU, optimizer updates) and the same computations
// composed from elementwise ops. Every fused path asks fusedKernels.
var fusedOff atomic.Bool

// fusedKernels reports whether fused kernels may be used.
func fusedKernels() bool { return !fusedOff.Load() }

// SetFusedKernels turns the backends' fused kernels (BatchNorm, BiasRelu,
// OptimizerUpdate, ...) on or off for the whole process and
// returns the previous setting. They are on by default; off, every op
// takes its composed path (the one backends without the kernels run),
// which tests use to compare the two. Results agree to rounding, not bit
// for bit. Switch it between steps, not while ops run.
func SetFusedKernels(on bool) (previous bool) { return !fusedOff.Swap(!on) }
