//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestReduceAgainstCPU compares large reductions, which take the
// block-per-output and split (two-pass) paths, with the CPU backend:
// sums to a tight relative tolerance, max/min/argmax/argmin exactly, with
// ties (argmax and argmin must pick the first) and NaN (max/min must
// return it, argmax/argmin the index of the first).
func TestReduceAgainstCPU(t *testing.T) {
	needGPUs(t, 1)
	gpu := ctx.GPU(0)
	cases := []struct {
		shape []int
		axes  []int
	}{
		{[]int{64, 2, 24, 24}, []int{0, 2, 3}}, // batch-norm statistics of 2 channels
		{[]int{64, 16, 24, 24}, []int{0, 2, 3}},
		{[]int{3, 20000}, []int{1}},
		{[]int{20000, 3}, []int{0}},
		{[]int{5, 7, 300}, []int{0, 2}},
		{[]int{100000}, nil},
		{[]int{40, 40, 40}, []int{1}},
	}
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		for ci, c := range cases {
			t.Run(fmt.Sprintf("%v/%v/axes%v", dt, c.shape, c.axes), func(t *testing.T) {
				s := nd.NewScope()
				defer s.Close()
				n := prod(c.shape)
				r := rand.New(rand.NewPCG(uint64(ci), 7))
				vals := make([]float64, n)
				ties := make([]float64, n)
				for i := range vals {
					vals[i] = r.Float64()*2 - 1
					ties[i] = float64(r.IntN(5)) // many equal maxima
				}
				check := func(name string, cpu, dev *nd.NDArray, tol float64) {
					want, got := cpu.Float64s(), dev.Float64s()
					for i := range want {
						same := want[i] == got[i] || (math.IsNaN(want[i]) && math.IsNaN(got[i]))
						if !same && math.Abs(want[i]-got[i]) > tol*(1+math.Abs(want[i])) {
							t.Fatalf("%s[%d] = %v on %v, %v on cpu(0)", name, i, got[i], gpu, want[i])
						}
					}
				}
				tol := 1e-12
				if dt == nd.Float32 {
					tol = 2e-6
				}
				xc := nd.FromSlice(ctx.CPU(0), vals, c.shape...).AsType(dt)
				xg := xc.CopyTo(gpu)
				check("Sum", nd.Sum(xc, c.axes...), nd.Sum(xg, c.axes...), tol)
				check("Max", nd.Max(xc, c.axes...), nd.Max(xg, c.axes...), 0)
				check("Min", nd.Min(xc, c.axes...), nd.Min(xg, c.axes...), 0)
				tc := nd.FromSlice(ctx.CPU(0), ties, c.shape...).AsType(dt)
				tg := tc.CopyTo(gpu)
				if len(c.axes) == 1 {
					check("ArgMax", nd.ArgMax(tc, c.axes[0]), nd.ArgMax(tg, c.axes[0]), 0)
					check("ArgMin", nd.ArgMin(tc, c.axes[0]), nd.ArgMin(tg, c.axes[0]), 0)
				}
				vals[n/2] = math.NaN()
				vals[n/3] = math.NaN()
				xc = nd.FromSlice(ctx.CPU(0), vals, c.shape...).AsType(dt)
				xg = xc.CopyTo(gpu)
				check("MaxNaN", nd.Max(xc, c.axes...), nd.Max(xg, c.axes...), 0)
				check("MinNaN", nd.Min(xc, c.axes...), nd.Min(xg, c.axes...), 0)
				if len(c.axes) == 1 {
					check("ArgMaxNaN", nd.ArgMax(xc, c.axes[0]), nd.ArgMax(xg, c.axes[0]), 0)
					check("ArgMinNaN", nd.ArgMin(xc, c.axes[0]), nd.ArgMin(xg, c.axes[0]), 0)
				}
			})
		}
	}
}
