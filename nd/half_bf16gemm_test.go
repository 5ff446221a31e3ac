package nd_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
	"github.com/goluon/goluon/nd/cpu"
)

// TestBF16DenseOnCPU: a BFloat16 dense layer on a CPU whose Gemm
// multiplies bfloat16 itself (AVX512_BF16: backend.HalfGemmer) gives the
// float64 products of the same bfloat16 values, forward and for both
// gradients (the products of the backward pass transpose their
// operands), within bfloat16's rounding of each result and float32's of
// the sums.
func TestBF16DenseOnCPU(t *testing.T) {
	if !(&cpu.Backend{}).GemmHalf(backend.BFloat16) {
		t.Skip("this CPU's Gemm widens bfloat16 (no AVX512_BF16)")
	}
	const m, k, n = 64, 300, 256 // every product of the pass is large enough for the bfloat16 kernel
	dev := ctx.CPU(0)
	r := rand.New(rand.NewPCG(1, 2))
	vals := func(size int) []float32 {
		v := make([]float32, size)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	x := nd.FromSlice(dev, vals(m*k), m, k).AsType(nd.BFloat16)
	w := nd.FromSlice(dev, vals(n*k), n, k).AsType(nd.BFloat16)
	g := nd.FromSlice(dev, vals(m*n), m, n).AsType(nd.BFloat16)
	x.AttachGrad(nd.GradWrite)
	w.AttachGrad(nd.GradWrite)
	exit := nd.EnterRecording(true)
	y := nd.FullyConnected(x, w, nil)
	exit()
	nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{g}, false)
	xv, wv, gv := x.Float64s(), w.Float64s(), g.Float64s()
	// check compares got (rows×cols) with Σ_l at(i, l)·bt(j, l) over l < depth.
	check := func(name string, got []float64, rows, cols, depth int, at, bt func(i, l int) float64) {
		t.Helper()
		for i := range rows {
			for j := range cols {
				var s, mag float64
				for l := range depth {
					p := at(i, l) * bt(j, l)
					s, mag = s+p, mag+math.Abs(p)
				}
				if d := math.Abs(got[i*cols+j] - s); !(d <= math.Abs(s)*math.Ldexp(1, -8)+mag*float64(depth)*math.Ldexp(1, -24)) {
					t.Fatalf("%s[%d][%d] = %v, float64 %v", name, i, j, got[i*cols+j], s)
				}
			}
		}
	}
	check("y", y.Float64s(), m, n, k, func(i, l int) float64 { return xv[i*k+l] }, func(j, l int) float64 { return wv[j*k+l] })
	check("dx", x.Grad().Float64s(), m, k, n, func(i, l int) float64 { return gv[i*n+l] }, func(j, l int) float64 { return wv[l*k+j] })
	check("dw", w.Grad().Float64s(), n, k, m, func(i, l int) float64 { return gv[l*n+i] }, func(j, l int) float64 { return xv[l*k+j] })
}

// TestMatMulEmptyBatch: a batched product over an empty batch is an
// empty array in every dtype (a backend's Batch 0 would mean one product).
func TestMatMulEmptyBatch(t *testing.T) {
	for _, dt := range []nd.DType{nd.Float32, nd.Float64, nd.Float16, nd.BFloat16} {
		y := nd.MatMul(nd.Zeros(ctx.CPU(0), dt, 0, 3, 5), nd.Zeros(ctx.CPU(0), dt, 0, 5, 4))
		if s := y.Shape(); len(s) != 3 || s[0] != 0 || s[1] != 3 || s[2] != 4 {
			t.Errorf("%v: shape %v, want [0 3 4]", dt, s)
		}
	}
}
