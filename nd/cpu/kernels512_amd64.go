//go:build amd64

package cpu

// The AVX-512 (ZMM) twins of the AVX2 kernels, and the init that points
// the kernel variables (kernels.go) at them when the active level is
// AVX-512 (useZMMKernel), once at start-up. Each twin has its AVX2
// kernel's signature and contract; the elementwise ones give the same
// results bit for bit (same operations on each element in the same
// order), the reductions (sumF32, bnSumsF32, the sum of reluGradSumF32)
// add in another order and agree to within float64 rounding
// (kernels512_test.go). They need AVX-512 F, and VL for a few masked or
// EVEX-only YMM instructions; the AVX-512 level guarantees both (isa.go).

// vec512_amd64.s: the elementwise kernels of vec_amd64.s.

// addF32x512 is addF32 on ZMM registers.
//
//go:noescape
func addF32x512(d, a, b *float32, n int)

// subF32x512 is subF32 on ZMM registers.
//
//go:noescape
func subF32x512(d, a, b *float32, n int)

// mulF32x512 is mulF32 on ZMM registers.
//
//go:noescape
func mulF32x512(d, a, b *float32, n int)

// divF32x512 is divF32 on ZMM registers.
//
//go:noescape
func divF32x512(d, a, b *float32, n int)

// addScalarF32x512 is addScalarF32 on ZMM registers.
//
//go:noescape
func addScalarF32x512(d, a *float32, s float32, n int)

// subScalarF32x512 is subScalarF32 on ZMM registers.
//
//go:noescape
func subScalarF32x512(d, a *float32, s float32, n int)

// mulScalarF32x512 is mulScalarF32 on ZMM registers.
//
//go:noescape
func mulScalarF32x512(d, a *float32, s float32, n int)

// divScalarF32x512 is divScalarF32 on ZMM registers.
//
//go:noescape
func divScalarF32x512(d, a *float32, s float32, n int)

// sqrtF32x512 is sqrtF32 on ZMM registers.
//
//go:noescape
func sqrtF32x512(d, a *float32, n int)

// reluF32x512 is reluF32 on ZMM registers.
//
//go:noescape
func reluF32x512(d, a *float32, n int)

// reluGradF32x512 is reluGradF32 on ZMM registers.
//
//go:noescape
func reluGradF32x512(d, a, b *float32, n int)

// copyRowsF32x512 is copyRowsF32 on ZMM registers (any width ≥ 1).
//
//go:noescape
func copyRowsF32x512(d, s *float32, rows, width, ldd, lds int)

// addRowsF32x512 is addRowsF32 on ZMM registers.
//
//go:noescape
func addRowsF32x512(d, s *float32, rows, width, ldd, lds int)

// sumF32x512 is sumF32 on ZMM registers, adding in another order.
//
//go:noescape
func sumF32x512(s *float32, n int) float64

// expF64x512 is expF64 on ZMM registers; n must be a multiple of 8.
//
//go:noescape
func expF64x512(v *float64, n int)

// erfF64x512 is erfF64 on ZMM registers; n must be a multiple of 8.
//
//go:noescape
func erfF64x512(v *float64, n int)

// accF32x512 is accF32 on ZMM registers.
//
//go:noescape
func accF32x512(acc *float64, s *float32, n int)

// biasrelu512_amd64.s: the fused bias + ReLU kernels.

// addReluF32x512 is addReluF32 on ZMM registers.
//
//go:noescape
func addReluF32x512(d, x, b *float32, n int)

// addReluScalarF32x512 is addReluScalarF32 on ZMM registers.
//
//go:noescape
func addReluScalarF32x512(d, x *float32, s float32, n int)

// reluGradSumF32x512 is reluGradSumF32 on ZMM registers, adding the sum in
// another order.
//
//go:noescape
func reluGradSumF32x512(d, y, gr *float32, n int) float64

// batchnorm512_amd64.s: the batch-normalisation kernels.

// bnSumsF32x512 is bnSumsF32 on ZMM registers, adding in another order.
//
//go:noescape
func bnSumsF32x512(x, y *float32, n int) (sx, sxy float64)

// fmaF32x512 is fmaF32 on ZMM registers.
//
//go:noescape
func fmaF32x512(d, x, s, t *float32, n int)

// scaleShiftF32x512 is scaleShiftF32 on ZMM registers.
//
//go:noescape
func scaleShiftF32x512(d, x *float32, n int, s, t float32)

// axpbycF32x512 is axpbycF32 on ZMM registers.
//
//go:noescape
func axpbycF32x512(d, gp, x *float32, n int, a, b, c float32)

// pool512_amd64.s: the 2×2 max-pooling row kernels (groups of 8 windows,
// two groups per ZMM iteration).

// maxPool2x2RowF32x512 is maxPool2x2RowF32 on ZMM registers.
//
//go:noescape
func maxPool2x2RowF32x512(y, r0, r1 *float32, groups int)

// maxPool2x2RowsF32x512 pools rows output rows of outW windows (y rows
// outW apart) from input row pairs 2·inW apart (x), tails masked.
//
//go:noescape
func maxPool2x2RowsF32x512(y, x *float32, rows, outW, inW int)

// maxPool2x2BackRowsF32x512 is the backward pass of maxPool2x2RowsF32x512
// over rows rows; it stops before a row whose maxima hold a NaN and
// returns the rows it did.
//
//go:noescape
func maxPool2x2BackRowsF32x512(dx, x, y, dy *float32, rows, outW, inW int) int

// maxPool2x2BackNarrowF32x512 is the backward pass of 2×2, stride-2 max
// pooling over stacked input rows w wide (even, at most 16), groups of
// 32/w row pairs (nin inputs, nout outputs) at a time (tab: see
// narrowPoolTable). It stops before a group whose maxima hold a NaN and
// returns the groups it did.
//
//go:noescape
func maxPool2x2BackNarrowF32x512(dx, x, y, dy *float32, groups, w, nin, nout int, tab *narrowPoolTable) int

// maxPool2x2BackRowF32x512 is maxPool2x2BackRowF32 on ZMM registers.
//
//go:noescape
func maxPool2x2BackRowF32x512(d0, d1, r0, r1, y, dy *float32, groups int) int

// winograd512_amd64.s: the Winograd row kernels (groups of 8 tiles, two
// groups per ZMM iteration).

// winoInputRowF32x512 is winoInputRowF32 on ZMM registers.
//
//go:noescape
func winoInputRowF32x512(src *float32, lds int, dst *float32, ldd int, groups int)

// winoOutputRowF32x512 is winoOutputRowF32 on ZMM registers.
//
//go:noescape
func winoOutputRowF32x512(m *float32, ldm int, out *float32, ldo int, groups int)

// winoGradOutRowF32x512 is winoGradOutRowF32 on ZMM registers.
//
//go:noescape
func winoGradOutRowF32x512(dy *float32, ldy int, dst *float32, ldd int, groups int)

// init selects the ZMM kernels when the active level is AVX-512 (package
// variables, useZMMKernel among them, are set before any init runs).
func init() {
	if useZMMKernel {
		useZMMKernels()
	}
}

// useZMMKernels points every kernel variable at its ZMM twin.
func useZMMKernels() {
	addF32k, subF32k, mulF32k, divF32k = addF32x512, subF32x512, mulF32x512, divF32x512
	addScalarF32k, subScalarF32k = addScalarF32x512, subScalarF32x512
	mulScalarF32k, divScalarF32k = mulScalarF32x512, divScalarF32x512
	reluF32k, reluGradF32k, sqrtF32k = reluF32x512, reluGradF32x512, sqrtF32x512
	copyRowsF32k, addRowsF32k = copyRowsF32x512, addRowsF32x512
	sumF32k, accF32k = sumF32x512, accF32x512
	addReluF32k, addReluScalarF32k, reluGradSumF32k = addReluF32x512, addReluScalarF32x512, reluGradSumF32x512
	bnSumsF32k, scaleShiftF32k, axpbycF32k = bnSumsF32x512, scaleShiftF32x512, axpbycF32x512
	fmaF32k = fmaF32x512
	maxPool2x2RowF32k, maxPool2x2BackRowF32k = maxPool2x2RowF32x512, maxPool2x2BackRowF32x512
	winoInputRowF32k, winoOutputRowF32k, winoGradOutRowF32k = winoInputRowF32x512, winoOutputRowF32x512, winoGradOutRowF32x512
	gatherRowsF32k = gatherRowsF32x512
}
