package nd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestSoftmaxCEFusedMatchesComposed runs SoftmaxCrossEntropy with the CPU
// backend's fused kernels and composed (Neg(Pick(LogSoftmax))) on the last
// and a middle axis, with clipped labels and large logits, and compares
// the loss and the gradient under a random head gradient: to 1e-12 in
// float64 and 2e-6 in float32, relative to each result's largest value.
func TestSoftmaxCEFusedMatchesComposed(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	for _, c := range []struct {
		shape []int
		axis  int
		scale float64
	}{
		{[]int{64, 10}, 1, 4},
		{[]int{5, 97}, 1, 4},
		{[]int{3, 6, 7}, 1, 4},
		{[]int{8, 33}, 1, 300},
	} {
		for _, dt := range []DType{Float64, Float32} {
			t.Run(fmt.Sprint(c.shape, c.axis, c.scale, dt), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(c.shape[0]), 5))
				x := make([]float64, numel(c.shape))
				for i := range x {
					x[i] = (2*r.Float64() - 1) * c.scale
				}
				lshape := append(append([]int{}, c.shape[:c.axis]...), c.shape[c.axis+1:]...)
				labels := make([]int64, numel(lshape))
				for i := range labels {
					labels[i] = int64(r.IntN(c.shape[c.axis]+2) - 1) // -1 and C clip
				}
				hg := make([]float64, len(labels))
				for i := range hg {
					hg[i] = r.NormFloat64()
				}
				run := func(fused bool) [][]float64 {
					SetFusedKernels(fused)
					xa := FromSlice(dev, x, c.shape...).AsType(dt)
					xa.AttachGrad(GradWrite)
					exit := EnterRecording(true)
					loss := SoftmaxCrossEntropy(xa, FromSlice(dev, labels, lshape...), c.axis)
					exit()
					Backward([]*NDArray{loss}, []*NDArray{FromSlice(dev, hg, lshape...).AsType(dt)}, false)
					return [][]float64{loss.AsType(Float64).Float64s(), xa.Grad().AsType(Float64).Float64s()}
				}
				got, want := run(true), run(false)
				tol := 1e-12
				if dt == Float32 {
					tol = 2e-6
				}
				for i, name := range []string{"loss", "dx"} {
					scale := 0.0
					for _, v := range want[i] {
						scale = math.Max(scale, math.Abs(v))
					}
					for j := range want[i] {
						if d := math.Abs(got[i][j] - want[i][j]); !(d <= tol*scale) {
							t.Fatalf("%s[%d]: fused %v, composed %v", name, j, got[i][j], want[i][j])
						}
					}
				}
			})
		}
	}
}

// BenchmarkSoftmaxCE is SoftmaxCrossEntropy forward and backward, fused and
// composed, on a classifier's [128, 10] logits and a character model's
// [768, 100] (the char-lm tutorial's batch of 12 windows of 64 bytes).
func BenchmarkSoftmaxCE(b *testing.B) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	for _, shape := range [][]int{{128, 10}, {768, 100}} {
		for _, fused := range []bool{true, false} {
			b.Run(fmt.Sprintf("%dx%d/fused=%v", shape[0], shape[1], fused), func(b *testing.B) {
				SetFusedKernels(fused)
				Seed(1)
				x := RandomUniform(dev, Float32, -3, 3, shape...)
				x.AttachGrad(GradWrite)
				labels := make([]int64, shape[0])
				for i := range labels {
					labels[i] = int64(i % shape[1])
				}
				y := FromSlice(dev, labels, shape[0])
				for b.Loop() {
					s := NewScope()
					exit := EnterRecording(true)
					loss := SoftmaxCrossEntropy(x, y, 1)
					exit()
					Backward([]*NDArray{loss}, nil, false)
					s.Close()
				}
			})
		}
	}
}
