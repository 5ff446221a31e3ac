//go:build cuda || cudaemu

package optimizer

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	_ "github.com/goluon/goluon/cuda" // gpu(i) contexts
	"github.com/goluon/goluon/nd"
)

// TestFusedGPUMatchesCPU runs every optimizer's fused update on gpu(0) and
// the composed one on gpu(0) and on cpu(0) from the same start, and
// requires the same weights and states bit for bit: elementwise ops round
// alike on both. The rules that take per-parameter norms (LAMB, LARS: not
// Elementwise) sum in another order on the GPU, and agree to rounding.
func TestFusedGPUMatchesCPU(t *testing.T) {
	if ctx.NumGPUs() == 0 {
		t.Skip("no GPU context")
	}
	set := func(o Optimizer) {
		h := o.Hyperparams()
		h.WD, h.ClipGradient = 0.02, 0.3
		if r, ok := o.(*RMSProp); ok {
			r.ClipWeights = 0.9
		}
	}
	for _, r := range rules() {
		for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
			for _, n := range []int{6, 100003} {
				t.Run(fmt.Sprintf("%s/%v/n=%d", r.name, dt, n), func(t *testing.T) {
					tol := 0.0 // bit for bit
					if e, ok := r.make().(Elementwise); !ok || !e.Elementwise() {
						tol = 1e-12
						if dt == nd.Float32 {
							tol = 1e-5
						}
					}
					want := fusedRun(t, ctx.CPU(0), r.make, set, dt, n, false)
					for _, fused := range []bool{true, false} {
						got := fusedRun(t, ctx.GPU(0), r.make, set, dt, n, fused)
						for k := range want {
							for i := range want[k] {
								same := math.Float64bits(got[k][i]) == math.Float64bits(want[k][i])
								if !same && !(math.Abs(got[k][i]-want[k][i]) <= tol*(1+math.Abs(want[k][i]))) {
									t.Fatalf("fused=%v: array %d (0: weight, then states) element %d: gpu(0) %v, cpu(0) %v",
										fused, k, i, got[k][i], want[k][i])
								}
							}
						}
					}
				})
			}
		}
	}
}
