//go:build !amd64

package cpu

// The vector kernels exist only on amd64; vec.go never calls these
// because useAsmKernel is false elsewhere.

func addF32(d, a, b *float32, n int)                       { panic("unreachable") }
func subF32(d, a, b *float32, n int)                       { panic("unreachable") }
func mulF32(d, a, b *float32, n int)                       { panic("unreachable") }
func divF32(d, a, b *float32, n int)                       { panic("unreachable") }
func addScalarF32(d, a *float32, s float32, n int)         { panic("unreachable") }
func subScalarF32(d, a *float32, s float32, n int)         { panic("unreachable") }
func mulScalarF32(d, a *float32, s float32, n int)         { panic("unreachable") }
func divScalarF32(d, a *float32, s float32, n int)         { panic("unreachable") }
func reluF32(d, a *float32, n int)                         { panic("unreachable") }
func reluGradF32(d, a, b *float32, n int)                  { panic("unreachable") }
func sqrtF32(d, a *float32, n int)                         { panic("unreachable") }
func copyRowsF32(d, s *float32, rows, width, ldd, lds int) { panic("unreachable") }
func prefetchF32(p *float32, n int)                        { panic("unreachable") }
func addRowsF32(d, s *float32, rows, width, ldd, lds int)  { panic("unreachable") }
func sumF32(s *float32, n int) float64                     { panic("unreachable") }
func accF32(acc *float64, s *float32, n int)               { panic("unreachable") }
func expF64(v *float64, n int)                             { panic("unreachable") }
func expF64x512(v *float64, n int)                         { panic("unreachable") }
func erfF64(v *float64, n int)                             { panic("unreachable") }
func erfF64x512(v *float64, n int)                         { panic("unreachable") }

// Nor are the Winograd row kernels (winograd_rows.go).
func winoInputRowF32(src *float32, lds int, dst *float32, ldd int, groups int)  { panic("unreachable") }
func winoOutputRowF32(m *float32, ldm int, out *float32, ldo int, groups int)   { panic("unreachable") }
func winoGradOutRowF32(dy *float32, ldy int, dst *float32, ldd int, groups int) { panic("unreachable") }

// And the pooling kernels (pool_fast.go).
func maxPool2x2RowF32(y, r0, r1 *float32, groups int) { panic("unreachable") }
func maxPool2x2BackRowF32(d0, d1, r0, r1, y, dy *float32, groups int) int {
	panic("unreachable")
}

// And the batch-normalisation kernels (batchnorm.go).
func bnSumsF32(x, y *float32, n int) (sx, sxy float64)    { panic("unreachable") }
func scaleShiftF32(d, x *float32, n int, s, t float32)    { panic("unreachable") }
func axpbycF32(d, gp, x *float32, n int, a, b, c float32) { panic("unreachable") }
func fmaF32(d, x, s, t *float32, n int)                   { panic("unreachable") }

// And the bias + ReLU kernels (biasrelu.go).
func addReluF32(d, x, b *float32, n int)               { panic("unreachable") }
func addReluScalarF32(d, x *float32, s float32, n int) { panic("unreachable") }
func reluGradSumF32(d, y, gr *float32, n int) float64  { panic("unreachable") }

// And the dot-product kernels (sgemm_dot.go).
func dot4F32(x, b0, b1, b2, b3 *float32, k int, out *float32)     { panic("unreachable") }
func dot4F32x512(x, b0, b1, b2, b3 *float32, k int, out *float32) { panic("unreachable") }

// And the ZMM pooling kernels pool_fast.go calls directly.
func maxPool2x2RowF32x512(y, r0, r1 *float32, groups int)      { panic("unreachable") }
func maxPool2x2RowsF32x512(y, x *float32, rows, outW, inW int) { panic("unreachable") }
func maxPool2x2BackRowsF32x512(dx, x, y, dy *float32, rows, outW, inW int) int {
	panic("unreachable")
}
func maxPool2x2BackNarrowF32x512(dx, x, y, dy *float32, groups, w, nin, nout int, tab *narrowPoolTable) int {
	panic("unreachable")
}

// And the batched Winograd kernels (winobatch.go).
func winoGatherInF32x512(x *float32, plane, w int, tab *int32, dst *float32, ldd, ldx, nch int) {
	panic("unreachable")
}
func winoScatterOutF32x512(m *float32, ldx, ldc int, tab *int32, y *float32, plane, ow, nch int) {
	panic("unreachable")
}
func winoGatherGradF32x512(dy *float32, plane, ow int, tab *int32, dst *float32, ldd, ldx, nch int) {
	panic("unreachable")
}
func winoPermInF32x512(x *float32, plane int, tab *int32, dst *float32, ldd, ldx, nch int) {
	panic("unreachable")
}
func winoPermGradF32x512(dy *float32, plane int, tab *int32, dst *float32, ldd, ldx, nch int) {
	panic("unreachable")
}
func winoStoreOut8F32x512(m *float32, ldx, ldc int, y *float32, plane, nch int) {
	panic("unreachable")
}
func winoStoreOut4F32x512(m *float32, ldx, ldc int, y *float32, plane, img, nimg, nch int) {
	panic("unreachable")
}

// And the 3-wide max-pooling kernel (pool_fast.go).
func maxPool3s2RowF32x512(y, r0, r1, r2 *float32, n int) { panic("unreachable") }
func maxPool3s2BackRowF32x512(dx0, dx1, dx2, x0, x1, x2, y, dy *float32, n int) int {
	panic("unreachable")
}

func filterTapsF32x512(acc *float32, dy0, dy1, x *float32, offs *int32, rows, full, tail, imgs, xrow, dyrow, ximg, dyimg, rowc int) {
	panic("unreachable")
}

func filterBcast3F32x512(acc *float32, dyt, x *float32, oh, ow, imgs, xrow, ximg, hc int, rows *int64) {
	panic("unreachable")
}

func filterBcast5F32x512(acc *float32, dyt, x *float32, oh, ow, imgs, xrow, ximg, hc int, rows *int64) {
	panic("unreachable")
}

func filterFlatF32x512(acc, dy, xs *float32, foffs, toffs *int64, full, tail int) {
	panic("unreachable")
}

func convFlatF32x512(y *[6]*float32, xs, wp *float32, toffs *int64, kk, triples int, tail uint64) {
	panic("unreachable")
}
