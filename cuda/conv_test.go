//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

type convCase struct {
	x, w []int
	o    nd.ConvOpts
}

var convCases = []convCase{
	{[]int{5, 4, 7, 6}, []int{6, 2, 3, 2}, nd.ConvOpts{Stride: [2]int{2, 1}, Pad: [2]int{1, 2}, Dilate: [2]int{1, 2}, Groups: 2}},
	{[]int{5, 3, 6, 6}, []int{4, 3, 1, 1}, nd.ConvOpts{}},
	{[]int{3, 3, 5, 5}, []int{3, 1, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}, Groups: 3}},
}

// TestConvChunksAgainstCPU runs convolutions through im2col forward and
// backward with the column-matrix budget lowered so that images are
// processed in several chunks (and the filter gradient accumulates over
// them), and compares output and both gradients with the CPU backend.
func TestConvChunksAgainstCPU(t *testing.T) {
	needGPUs(t, 1)
	saved := colBudget
	defer func() { colBudget, dnnOff = saved, false }()
	dnnOff = true
	for _, budget := range []int{1, 3000, 10000, saved} {
		colBudget = budget
		compareConvWithCPU(t, fmt.Sprintf("budget%d/", budget), convCases, 1e-4)
	}
}

// compareConvWithCPU runs each case forward and backward on gpu(0) and
// cpu(0) in float32 and float64 and compares y, dx and dw: each element to
// within tol (1e-12 for float64, tol32 for float32) times 1 plus the
// largest magnitude of its tensor, since a sum that cancels to a small
// value keeps the rounding error of its large terms.
func compareConvWithCPU(t *testing.T, prefix string, cases []convCase, tol32 float64) {
	t.Helper()
	for ci, c := range cases {
		for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
			t.Run(fmt.Sprintf("%scase%d/%v", prefix, ci, dt), func(t *testing.T) {
				s := nd.NewScope()
				defer s.Close()
				nd.Seed(uint64(ci))
				xc := nd.RandomUniform(ctx.CPU(0), dt, -1, 1, c.x...)
				wc := nd.RandomUniform(ctx.CPU(0), dt, -1, 1, c.w...)
				conv := func(x, w *nd.NDArray) *nd.NDArray { return nd.Conv2D(x, w, nil, c.o) }
				want, got := fwdBwd(ctx.CPU(0), xc, wc, nil, conv), fwdBwd(ctx.GPU(0), xc, wc, nil, conv)
				tol := 1e-12
				if dt == nd.Float32 {
					tol = tol32
				}
				for k, name := range []string{"y", "dx", "dw"} {
					scale := maxAbs(want[k])
					for i := range want[k] {
						if math.Abs(want[k][i]-got[k][i]) > tol*(1+scale) {
							t.Fatalf("%s[%d] = %v on gpu(0), %v on cpu(0)", name, i, got[k][i], want[k][i])
						}
					}
				}
			})
		}
	}
}

// fwdBwd copies a and b to dev, computes out = f(a, b) while recording and
// back-propagates Σ out·head (Σ out² when head is nil), and returns out and
// the gradients of a and b, as float64.
func fwdBwd(dev ctx.Context, a, b, head *nd.NDArray, f func(a, b *nd.NDArray) *nd.NDArray) [3][]float64 {
	x, y := a.CopyTo(dev), b.CopyTo(dev)
	x.AttachGrad(nd.GradWrite)
	y.AttachGrad(nd.GradWrite)
	var out *nd.NDArray
	autograd.Record(func() {
		out = f(x, y)
		h := out
		if head != nil {
			h = head.CopyTo(dev)
		}
		autograd.Backward(nd.Sum(nd.Mul(out, h)))
	})
	return [3][]float64{out.Float64s(), x.Grad().Float64s(), y.Grad().Float64s()}
}

// maxAbs returns the largest magnitude in v (0 for none).
func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
