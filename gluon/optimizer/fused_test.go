package optimizer

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestFusedMatchesComposed runs every optimizer with the backend's fused
// update kernels and with the composed elementwise updates from the same
// start, over sizes that exercise partial blocks and the split over cores,
// in both element types, with weight decay, rescaling and clipping on and
// off, and requires the same weights and states bit for bit.
func TestFusedMatchesComposed(t *testing.T) {
	if prev := nd.SetFusedKernels(true); !prev {
		t.Fatal("fused kernels are off at the start of the test")
	}
	hypers := []struct {
		name string
		set  func(o Optimizer)
	}{
		{"plain", func(Optimizer) {}},
		{"wd_rescale", func(o Optimizer) {
			h := o.Hyperparams()
			h.WD, h.RescaleGrad = 0.01, 1.0/128
		}},
		{"wd_clip", func(o Optimizer) {
			h := o.Hyperparams()
			h.WD, h.ClipGradient = 0.02, 0.3
			if r, ok := o.(*RMSProp); ok {
				r.ClipWeights = 0.9
			}
		}},
	}
	for _, r := range rules() {
		for _, h := range hypers {
			for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
				for _, n := range []int{6, 1001, 3*2048 + 5, 1<<17 + 3} {
					name := fmt.Sprintf("%s/%s/%v/n=%d", r.name, h.name, dt, n)
					t.Run(name, func(t *testing.T) {
						fused := fusedRun(t, ctx.CPU(0), r.make, h.set, dt, n, true)
						composed := fusedRun(t, ctx.CPU(0), r.make, h.set, dt, n, false)
						for k := range composed {
							for i := range composed[k] {
								a, b := fused[k][i], composed[k][i]
								if math.Float64bits(a) != math.Float64bits(b) {
									t.Fatalf("array %d (0: weight, then states) element %d: fused %v, composed %v", k, i, a, b)
								}
							}
						}
					})
				}
			}
		}
	}
}

// fusedRun applies three updates with the fused kernels on or off (each
// update rescaled by 1/64 through Param.Rescale, as the Trainer does) and
// returns the weight followed by the optimizer states. The random values
// are drawn on cpu(0) and copied to dev.
func fusedRun(t *testing.T, dev ctx.Context, mk func() Optimizer, set func(Optimizer), dt nd.DType, n int, fused bool) [][]float64 {
	t.Helper()
	defer nd.SetFusedKernels(nd.SetFusedKernels(fused))
	nd.Seed(7)
	w := nd.RandomUniform(ctx.CPU(0), dt, -1, 1, n).CopyTo(dev)
	o := mk()
	set(o)
	st := o.CreateState(w)
	for s := 1; s <= 3; s++ {
		g := nd.RandomUniform(ctx.CPU(0), dt, -2, 2, n).CopyTo(dev)
		o.Update(Param{Name: "w", Step: s, LRMult: 1, WDMult: 1, Rescale: 1.0 / 64}, w, g, st)
		g.Release()
	}
	out := [][]float64{w.Float64s()}
	w.Release()
	for _, a := range st {
		out = append(out, a.Float64s())
		a.Release()
	}
	return out
}
