//go:build cuda && !cudaemu

package cuda

// ptxUnaryCodes is the number of unary op codes the committed PTX
// (ptx/elementwise.ptx) implements. kernels/elementwise.cu has more (Erf,
// Log1p, Expm1, Sin, Cos, Reciprocal: codes 22-27) than the PTX was last
// generated from; until `sh cuda/gen.sh` regenerates it with nvcc, a real
// GPU refuses them instead of computing zeros.
const ptxUnaryCodes = 22
