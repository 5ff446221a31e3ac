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

// TestBatchNormFusedAgainstCPU runs BatchNorm forward and backward with
// the GPU's fused kernels and with the CPU's, in training and inference
// mode, over channel axes, with and without gamma and beta, including a
// shape whose channels are summed in several blocks each, and compares
// the output, the running statistics and the gradients of x, gamma and
// beta: to 1e-10 in float64 and 2e-5 in float32 (relative to 1 + |value|).
// The GPU's composed path must agree to the same tolerance.
func TestBatchNormFusedAgainstCPU(t *testing.T) {
	needGPUs(t, 1)
	defer nd.SetFusedKernels(true)
	for ci, c := range []struct {
		shape       []int
		o           nd.BatchNormOpts
		gamma, beta bool
	}{
		{[]int{4, 3, 5, 6}, nd.BatchNormOpts{}, true, true},
		{[]int{16, 7}, nd.BatchNormOpts{Epsilon: new(1e-3), Momentum: new(0.99)}, true, true},
		{[]int{3, 5, 4, 9}, nd.BatchNormOpts{Axis: new(3)}, false, true},
		{[]int{2, 4, 11, 13}, nd.BatchNormOpts{}, false, false},
		{[]int{2, 3, 64, 64}, nd.BatchNormOpts{}, true, true}, // 8192 values a channel: 2 blocks each
	} {
		for _, train := range []bool{true, false} {
			for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
				t.Run(fmt.Sprint(ci, train, dt), func(t *testing.T) {
					ax, _, _ := c.o.Resolved()
					ch := c.shape[ax]
					r := rand.New(rand.NewPCG(uint64(ci), 9))
					vals := func(n int, lo, hi float64) []float64 {
						v := make([]float64, n)
						for i := range v {
							v[i] = lo + (hi-lo)*r.Float64()
						}
						return v
					}
					size := 1
					for _, d := range c.shape {
						size *= d
					}
					x, hg := vals(size, -3, 5), vals(size, -1, 1)
					g, b := vals(ch, 0.5, 2), vals(ch, -1, 1)
					rm, rv := vals(ch, -1, 1), vals(ch, 0.5, 2)
					run := func(dev ctx.Context, fused bool) [][]float64 {
						nd.SetFusedKernels(fused)
						mk := func(v []float64, shape ...int) *nd.NDArray {
							return nd.FromSlice(ctx.CPU(0), v, shape...).AsType(dt).CopyTo(dev)
						}
						xa, ha := mk(x, c.shape...), mk(hg, c.shape...)
						rma, rva := mk(rm, ch), mk(rv, ch)
						xa.AttachGrad(nd.GradWrite)
						var ga, ba *nd.NDArray
						if c.gamma {
							ga = mk(g, ch)
							ga.AttachGrad(nd.GradWrite)
						}
						if c.beta {
							ba = mk(b, ch)
							ba.AttachGrad(nd.GradWrite)
						}
						exit := nd.EnterRecording(train)
						y := nd.BatchNorm(xa, ga, ba, rma, rva, c.o)
						exit()
						nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{ha}, false)
						out := [][]float64{y.Float64s(), rma.Float64s(), rva.Float64s(), xa.Grad().Float64s()}
						for _, p := range []*nd.NDArray{ga, ba} {
							if p != nil {
								out = append(out, p.Grad().Float64s())
							}
						}
						return out
					}
					want := run(ctx.CPU(0), true)
					tol := 1e-10
					if dt == nd.Float32 {
						tol = 2e-5
					}
					names := []string{"y", "running mean", "running var", "dx", "dgamma/dbeta", "dbeta"}
					for _, fused := range []bool{true, false} {
						got := run(ctx.GPU(0), fused)
						for i := range want {
							for j := range want[i] {
								if d := math.Abs(got[i][j] - want[i][j]); !(d <= tol*(1+math.Abs(want[i][j]))) {
									t.Fatalf("fused=%v %s[%d]: gpu(0) %v, cpu(0) %v", fused, names[i], j, got[i][j], want[i][j])
								}
							}
						}
					}
				})
			}
		}
	}
}
