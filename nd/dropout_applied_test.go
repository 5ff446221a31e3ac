package nd

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestDropoutAppliedMatchesMask runs Dropout with the CPU backend's
// applied mask (DropoutApplyKernels: the mask computed where it is used,
// from a stored seed) and with a stored mask, from the same generator
// state, and compares the outputs and input gradients bit for bit (NaN
// and ±0 inputs, odd lengths, both dtypes); the generator must also end in
// the same state.
func TestDropoutAppliedMatchesMask(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []DType{Float32, Float64} {
		for _, shape := range [][]int{{1}, {7}, {3, 5}, {4, 3, 1001}, {70001}} {
			for _, p := range []float64{0.1, 0.5, 0.9} {
				n := numel(shape)
				x, hg := make([]float64, n), make([]float64, n)
				for i := range x {
					x[i], hg[i] = r.NormFloat64(), r.NormFloat64()
					switch r.IntN(20) {
					case 0:
						x[i] = math.NaN()
					case 1:
						x[i] = math.Copysign(0, -1)
					case 2:
						hg[i] = math.Inf(-1)
					}
				}
				run := func(applied bool) [][]float64 {
					SetFusedKernels(applied)
					Seed(5)
					mk := func(v []float64) *NDArray { return FromSlice(dev, v, shape...).AsType(dt) }
					xa := mk(x)
					xa.AttachGrad(GradWrite)
					exit := EnterRecording(true)
					y := Dropout(xa, p)
					exit()
					Backward([]*NDArray{y}, []*NDArray{mk(hg)}, false)
					next := RandomUniform(dev, Float64, 0, 1, 1) // the generator's next draw
					return [][]float64{y.AsType(Float64).Float64s(), xa.Grad().AsType(Float64).Float64s(), next.Float64s()}
				}
				got, want := run(true), run(false)
				for i, name := range []string{"y", "dx", "next draw"} {
					for j := range want[i] {
						g, w := got[i][j], want[i][j]
						if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
							t.Fatalf("%v %v p=%g %s[%d]: applied %v, stored mask %v", dt, shape, p, name, j, g, w)
						}
					}
				}
			}
		}
	}
}
