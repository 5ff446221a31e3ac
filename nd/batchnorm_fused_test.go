package nd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestBatchNormFusedMatchesComposed runs BatchNorm with the CPU backend's
// fused kernels and with the composed ops (the path of backends without
// them), in training and inference mode, on several layouts and channel
// axes, with and without gamma and beta, and compares the outputs, the
// updated running statistics and the gradients of x, gamma and beta for a
// random head gradient: to 1e-10 in float64 and 2e-5 in float32.
func TestBatchNormFusedMatchesComposed(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	for _, c := range []struct {
		shape       []int
		o           BatchNormOpts
		gamma, beta bool
	}{
		{[]int{4, 3, 5, 6}, BatchNormOpts{}, true, true},
		{[]int{16, 7}, BatchNormOpts{Epsilon: new(1e-3), Momentum: new(0.99)}, true, true},
		{[]int{3, 5, 4, 9}, BatchNormOpts{Axis: new(3)}, false, true},
		{[]int{6, 2, 37}, BatchNormOpts{Axis: new(0)}, true, false},
		{[]int{2, 4, 11, 13}, BatchNormOpts{}, false, false},
	} {
		for _, train := range []bool{true, false} {
			for _, dt := range []DType{Float64, Float32} {
				t.Run(fmt.Sprint(c.shape, c.o.Axis != nil, train, dt), func(t *testing.T) {
					ax, _, _ := c.o.Resolved()
					ch := c.shape[ax]
					r := rand.New(rand.NewPCG(uint64(len(c.shape)), uint64(ch)))
					vals := func(n int, lo, hi float64) []float64 {
						v := make([]float64, n)
						for i := range v {
							v[i] = lo + (hi-lo)*r.Float64()
						}
						return v
					}
					x, hg := vals(numel(c.shape), -3, 5), vals(numel(c.shape), -1, 1)
					g, b := vals(ch, 0.5, 2), vals(ch, -1, 1)
					rm, rv := vals(ch, -1, 1), vals(ch, 0.5, 2)
					run := func(fused bool) [][]float64 {
						SetFusedKernels(fused)
						mk := func(v []float64, shape ...int) *NDArray {
							a := FromSlice(dev, v, shape...)
							if dt == Float32 {
								a = a.AsType(Float32)
							}
							return a
						}
						xa, ha := mk(x, c.shape...), mk(hg, c.shape...)
						rma, rva := mk(rm, ch), mk(rv, ch)
						xa.AttachGrad(GradWrite)
						var ga, ba *NDArray
						if c.gamma {
							ga = mk(g, ch)
							ga.AttachGrad(GradWrite)
						}
						if c.beta {
							ba = mk(b, ch)
							ba.AttachGrad(GradWrite)
						}
						exit := EnterRecording(train)
						y := BatchNorm(xa, ga, ba, rma, rva, c.o)
						exit()
						Backward([]*NDArray{y}, []*NDArray{ha}, false)
						out := [][]float64{y.AsType(Float64).Float64s(), rma.AsType(Float64).Float64s(),
							rva.AsType(Float64).Float64s(), xa.Grad().AsType(Float64).Float64s()}
						for _, p := range []*NDArray{ga, ba} {
							if p != nil {
								out = append(out, p.Grad().AsType(Float64).Float64s())
							}
						}
						return out
					}
					got, want := run(true), run(false)
					tol := 1e-10
					if dt == Float32 {
						tol = 2e-5
					}
					names := []string{"y", "running mean", "running var", "dx", "dgamma/dbeta", "dbeta"}
					for i := range want {
						for j := range want[i] {
							if d := math.Abs(got[i][j] - want[i][j]); d > tol*(1+math.Abs(want[i][j])) {
								t.Fatalf("%s[%d]: fused %v, composed %v", names[i], j, got[i][j], want[i][j])
							}
						}
					}
				})
			}
		}
	}
}

// BenchmarkBatchNorm times one training-mode forward and backward pass of
// batch normalisation over mnist-convnet-bn's 256 channels of 24×24 (32
// images), with the fused kernels and with the composed ops.
func BenchmarkBatchNorm(b *testing.B) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	shape := []int{32, 256, 24, 24}
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, numel(shape))
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	x := FromSlice(dev, v, shape...)
	gamma, beta := Ones(dev, Float32, 256), Zeros(dev, Float32, 256)
	rm, rv := Zeros(dev, Float32, 256), Ones(dev, Float32, 256)
	for _, fused := range []bool{true, false} {
		b.Run(map[bool]string{true: "fused", false: "composed"}[fused], func(b *testing.B) {
			SetFusedKernels(fused)
			x.AttachGrad(GradWrite)
			gamma.AttachGrad(GradWrite)
			beta.AttachGrad(GradWrite)
			for b.Loop() {
				s := NewScope()
				exit := EnterRecording(true)
				y := BatchNorm(x, gamma, beta, rm, rv, BatchNormOpts{})
				exit()
				Backward([]*NDArray{y}, nil, false)
				s.Close()
			}
		})
	}
}

// TestBatchNormReluMatchesComposed runs BatchNorm with Relu set against
// Relu(BatchNorm(...)), both on the fused kernels and both composed, in
// training and predict mode, and compares the output, the gradients of x,
// gamma and beta and the running statistics bit for bit (inputs with NaN
// and values that normalise to ±0).
func TestBatchNormReluMatchesComposed(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	r := rand.New(rand.NewPCG(51, 52))
	for _, shape := range [][]int{{4, 3, 5, 6}, {8, 16, 2, 2}, {16, 7}} {
		for _, dt := range []DType{Float32, Float64} {
			for _, train := range []bool{true, false} {
				for _, fused := range []bool{true, false} {
					ch := shape[1]
					n := numel(shape)
					x, hg := make([]float64, n), make([]float64, n)
					for i := range x {
						x[i], hg[i] = float64(r.IntN(7)-3)/2, r.NormFloat64()
						if i%29 == 5 {
							x[i] = math.NaN()
						}
					}
					gm, bt := make([]float64, ch), make([]float64, ch)
					for c := range gm {
						gm[c], bt[c] = float64(r.IntN(3)+1)/2, float64(r.IntN(3)-1)/2
					}
					run := func(fusedRelu bool) [][]float64 {
						SetFusedKernels(fused)
						mk := func(v []float64, s ...int) *NDArray { return FromSlice(dev, v, s...).AsType(dt) }
						xa, ga, ba := mk(x, shape...), mk(gm, ch), mk(bt, ch)
						rm, rv := Zeros(dev, dt, ch), Ones(dev, dt, ch)
						for _, a := range []*NDArray{xa, ga, ba} {
							a.AttachGrad(GradWrite)
						}
						exit := EnterRecording(train)
						var y *NDArray
						if fusedRelu {
							y = BatchNorm(xa, ga, ba, rm, rv, BatchNormOpts{Relu: true})
						} else {
							y = Relu(BatchNorm(xa, ga, ba, rm, rv, BatchNormOpts{}))
						}
						exit()
						Backward([]*NDArray{y}, []*NDArray{mk(hg, shape...)}, false)
						var out [][]float64
						for _, a := range []*NDArray{y, xa.Grad(), ga.Grad(), ba.Grad(), rm, rv} {
							out = append(out, a.AsType(Float64).Float64s())
						}
						return out
					}
					got, want := run(true), run(false)
					for i, name := range []string{"y", "dx", "dgamma", "dbeta", "running mean", "running var"} {
						for j := range want[i] {
							g, w := got[i][j], want[i][j]
							if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
								t.Fatalf("%v %v train=%v fused=%v %s[%d]: Relu option %v, Relu(BatchNorm) %v", shape, dt, train, fused, name, j, g, w)
							}
						}
					}
				}
			}
		}
	}
}
