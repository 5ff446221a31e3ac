package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBatchNormKernels checks the AVX2/FMA batch-norm kernels against the
// plain loops for every length up to 40 (all tails): the float64 sums to
// 1e-12 (they add in another order) and the affine maps to 1e-6 relative
// (a fused multiply-add rounds once where the loops round twice).
func TestBatchNormKernels(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: only the plain loops exist here")
	}
	defer func() { useAsmKernel = true }()
	r := rand.New(rand.NewPCG(31, 32))
	for n := 1; n <= 40; n++ {
		x, y, g := randSlice(n, r), randSlice(n, r), randSlice(n, r)
		a, b, c := float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
		type result struct {
			sx, sxy float64
			ss, ax  []float32
		}
		run := func(asm bool) result {
			useAsmKernel = asm
			var res result
			res.sx, res.sxy = sums(x, y)
			res.ss, res.ax = make([]float32, n), make([]float32, n)
			affine(res.ss, nil, x, 0, b, c)
			affine(res.ax, g, x, a, b, c)
			return res
		}
		got, want := run(true), run(false)
		near := func(p, q, tol float64) bool { return math.Abs(p-q) <= tol*(1+math.Abs(q)) }
		if !near(got.sx, want.sx, 1e-12) || !near(got.sxy, want.sxy, 1e-12) {
			t.Fatalf("n=%d: sums %v, %v; want %v, %v", n, got.sx, got.sxy, want.sx, want.sxy)
		}
		for i := range n {
			if !near(float64(got.ss[i]), float64(want.ss[i]), 1e-6) || !near(float64(got.ax[i]), float64(want.ax[i]), 1e-6) {
				t.Fatalf("n=%d [%d]: affine %v, %v; want %v, %v", n, i, got.ss[i], got.ax[i], want.ss[i], want.ax[i])
			}
		}
	}
}
