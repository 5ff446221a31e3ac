package nd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestGELUFusedMatchesComposed runs GELU (both forms) with the CPU
// backend's fused kernels and composed from elementwise ops, over values
// from −12 to 12 and sizes that split over the cores, and compares the
// output and the input gradient with the composed float64 result: the
// fused float64 kernel agrees to 1e-12 (the composed form rounds at every
// step and cancels in 1 + tanh), the fused float32 kernel, which computes
// each value in float64 and rounds once, to float32 rounding (the composed
// float32 form is off by up to 1% where 1 + tanh cancels, so it is not the
// reference).
func TestGELUFusedMatchesComposed(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	for _, n := range []int{7, 1 << 15} {
		for _, dt := range []DType{Float64, Float32} {
			for _, tanh := range []bool{false, true} {
				t.Run(fmt.Sprintf("n=%d/%v/tanh=%v", n, dt, tanh), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(n), 3))
					xv, hv := make([]float64, n), make([]float64, n)
					for i := range xv {
						xv[i], hv[i] = -12+24*r.Float64(), r.NormFloat64()
					}
					run := func(fused bool, dt DType) (y, dx []float64) {
						SetFusedKernels(fused)
						x := FromSlice(dev, xv, n).AsType(dt)
						h := FromSlice(dev, hv, n).AsType(dt)
						x.AttachGrad(GradWrite)
						exit := EnterRecording(true)
						out := GELU(x, tanh)
						exit()
						Backward([]*NDArray{out}, []*NDArray{h}, false)
						return out.AsType(Float64).Float64s(), x.Grad().AsType(Float64).Float64s()
					}
					if dt == Float32 { // the reference sees the inputs float32 saw
						for i := range xv {
							xv[i], hv[i] = float64(float32(xv[i])), float64(float32(hv[i]))
						}
					}
					fy, fdx := run(true, dt)
					cy, cdx := run(false, Float64)
					rel, abs := 1e-12, 1e-14
					if dt == Float32 {
						rel, abs = 2e-7, 1e-7
					}
					for i := range fy {
						for _, p := range [][2]float64{{fy[i], cy[i]}, {fdx[i], cdx[i]}} {
							if d := math.Abs(p[0] - p[1]); !(d <= abs+rel*math.Abs(p[1])) {
								t.Fatalf("x=%g: fused %g, composed %g (output, then gradient)", xv[i], p[0], p[1])
							}
						}
					}
				})
			}
		}
	}
}

// TestGELUNegativeTail: far out on the negative side the float32 GELU is
// 0 with a zero gradient, as PyTorch's float32 erf rounds to -1 there (the
// fast erf's clamp used to leave a gate of about 5e-9: outputs of -x·5e-9
// and gradients of the wrong sign).
func TestGELUNegativeTail(t *testing.T) {
	x := FromSlice(ctx.CPU(0), []float32{-1e6, -1e4, -100, -10, -6}, 5)
	x.AttachGrad(GradWrite)
	exit := EnterRecording(true)
	y := GELU(x, false)
	exit()
	Backward([]*NDArray{y}, []*NDArray{OnesLike(y)}, false)
	for i, v := range y.Float32s() {
		if math.Abs(float64(v)) > 1e-7 {
			t.Errorf("GELU(%v) = %v, want about 0", x.Float32s()[i], v)
		}
	}
	for i, g := range x.Grad().Float32s() {
		if g > 0 || math.Abs(float64(g)) > 1e-6 {
			t.Errorf("GELU'(%v) = %v, want about 0 and not positive", x.Float32s()[i], g)
		}
	}
}
