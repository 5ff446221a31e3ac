//go:build cudaemu

package cuda

// ptxUnaryCodes is the number of unary op codes the kernels implement: the
// emulator compiles kernels/elementwise.cu itself, so it has all of them.
const ptxUnaryCodes = 28
