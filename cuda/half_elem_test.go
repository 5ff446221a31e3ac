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

// TestHalfElementwiseGPU: Unary and Binary ops on Float16 and BFloat16
// arrays run on the device's half kernels with the bits of the widened
// path (float32 copies, the float32 kernel, rounding; HalfEnv=0) for every
// value, specials included, contiguous and broadcast, with Bool results
// for the comparisons; and a Unary op allocates only its result.
func TestHalfElementwiseGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	unary := map[string]func(*nd.NDArray) *nd.NDArray{
		"Neg": nd.Neg, "Exp": nd.Exp, "Log": nd.Log, "Sqrt": nd.Sqrt, "Tanh": nd.Tanh,
		"Sigmoid": nd.Sigmoid, "Relu": nd.Relu, "Abs": nd.Abs, "Sign": nd.Sign, "Square": nd.Square,
		"Softrelu": nd.Softrelu, "Erf": nd.Erf, "Log1p": nd.Log1p, "Sin": nd.Sin, "Rsqrt": nd.Rsqrt,
		"Reciprocal": nd.Reciprocal,
		"AddScalar":  func(x *nd.NDArray) *nd.NDArray { return nd.AddScalar(x, 0.3) },
		"MulScalar":  func(x *nd.NDArray) *nd.NDArray { return nd.MulScalar(x, -1.7) },
		"PowScalar":  func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 1.5) },
		"Clip":       func(x *nd.NDArray) *nd.NDArray { return nd.Clip(x, -0.5, 2) },
	}
	binary := map[string]func(a, b *nd.NDArray) *nd.NDArray{
		"Add": nd.Add, "Sub": nd.Sub, "Mul": nd.Mul, "Div": nd.Div, "Pow": nd.Pow,
		"Maximum": nd.Maximum, "Minimum": nd.Minimum, "Mod": nd.Mod, "Fmod": nd.Fmod,
		"Equal": nd.Equal, "Greater": nd.Greater, "LessEqual": nd.LessEqual,
	}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		r := rand.New(rand.NewPCG(7, 8))
		vals := func(n int) *nd.NDArray {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(12)-6)))
			}
			specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
				float32(math.NaN()), 6e-8, -3e-39, 65504, 1, -1}
			copy(v, specials)
			return nd.FromSlice(ctx.CPU(0), v).AsType(dt)
		}
		x, y, z := vals(4*5*6), vals(4*5*6), vals(5*6)
		x, y, z = nd.Reshape(x, 4, 5, 6), nd.Reshape(y, 4, 5, 6), nd.Reshape(z, 5, 6)
		both := func(t *testing.T, f func(in []*nd.NDArray) *nd.NDArray, host ...*nd.NDArray) {
			t.Helper()
			run := func(off bool) []uint64 {
				halfOff = off
				defer func() { halfOff = false }()
				in := make([]*nd.NDArray, len(host))
				for i, h := range host {
					in[i] = h.CopyTo(dev)
				}
				before := nd.MemoryStats(dev).Allocs
				out := f(in)
				if n := nd.MemoryStats(dev).Allocs - before; !off && n != 1 {
					t.Errorf("%d allocations on the half kernels, want 1 (the result)", n)
				}
				var bits []uint64
				for _, v := range out.Float64s() {
					if math.IsNaN(v) {
						v = math.NaN()
					}
					bits = append(bits, math.Float64bits(v))
				}
				return bits
			}
			want, got := run(true), run(false)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("[%d]: half kernels %v, widened %v", i, math.Float64frombits(got[i]), math.Float64frombits(want[i]))
				}
			}
		}
		for name, f := range unary {
			t.Run(fmt.Sprint(name, "/", dt), func(t *testing.T) {
				both(t, func(in []*nd.NDArray) *nd.NDArray { return f(in[0]) }, x)
			})
		}
		for name, f := range binary {
			t.Run(fmt.Sprint(name, "/", dt), func(t *testing.T) {
				both(t, func(in []*nd.NDArray) *nd.NDArray { return f(in[0], in[1]) }, x, y)
				both(t, func(in []*nd.NDArray) *nd.NDArray { return f(in[0], in[1]) }, x, z) // broadcast
			})
		}
	}
}

// TestHalfPoolGPU: max and average pooling on Float16 and BFloat16 arrays
// run on pool.cu's half instances with the bits of the widened path
// (HalfEnv=0), forward and backward, ties and specials included.
func TestHalfPoolGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	opts := []nd.PoolOpts{
		{Type: nd.PoolMax, Kernel: [2]int{2, 2}},
		{Type: nd.PoolMax, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true},
		{Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}},
		{Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Pad: [2]int{1, 1}, ExcludePad: true},
		{Type: nd.PoolAvg, Global: true},
	}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		r := rand.New(rand.NewPCG(1, 2))
		v := make([]float32, 2*3*7*8)
		for i := range v {
			v[i] = float32(r.IntN(9)-4) * 0.37 // ties
		}
		v[5], v[17], v[40] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1))
		host := nd.FromSlice(ctx.CPU(0), v, 2, 3, 7, 8).AsType(dt)
		for _, o := range opts {
			t.Run(fmt.Sprint(o.Type, o.Kernel, o.Stride, o.Global, "/", dt), func(t *testing.T) {
				run := func(off bool) [][]float64 {
					halfOff = off
					defer func() { halfOff = false }()
					x := host.CopyTo(dev)
					x.AttachGrad(nd.GradWrite)
					exit := nd.EnterRecording(true)
					y := nd.Pool2D(x, o)
					exit()
					nd.Seed(3)
					g := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, y.Shape()...).AsType(dt)
					nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{g.CopyTo(dev)}, false)
					return [][]float64{y.Float64s(), x.Grad().Float64s()}
				}
				want, got := run(true), run(false)
				for i := range want {
					for j := range want[i] {
						w, g := want[i][j], got[i][j]
						if !sameBitsOrNaN(w, g) {
							t.Fatalf("array %d [%d]: half kernels %v, widened %v", i, j, g, w)
						}
					}
				}
			})
		}
	}
}

// TestHalfReduceGPU: Sum, Max and Min of Float16 and BFloat16 arrays run
// on reduce.cu's half instances with the bits of the widened path
// (HalfEnv=0), over every axis choice of a [6, 70, 5] array (one thread
// per output, and blocks with partial sums), NaN and ±Inf included.
func TestHalfReduceGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	ops := map[string]func(*nd.NDArray, ...int) *nd.NDArray{"Sum": nd.Sum, "Max": nd.Max, "Min": nd.Min}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		r := rand.New(rand.NewPCG(5, 6))
		v := make([]float32, 6*70*5)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 3)
		}
		v[7], v[900], v[901] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
		host := nd.FromSlice(ctx.CPU(0), v, 6, 70, 5).AsType(dt)
		for name, f := range ops {
			for _, axes := range [][]int{{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}, {}} {
				t.Run(fmt.Sprint(name, axes, "/", dt), func(t *testing.T) {
					run := func(off bool) []float64 {
						halfOff = off
						defer func() { halfOff = false }()
						return f(host.CopyTo(dev), axes...).Float64s()
					}
					want, got := run(true), run(false)
					for j := range want {
						if !sameBitsOrNaN(want[j], got[j]) {
							t.Fatalf("[%d]: half kernels %v, widened %v", j, got[j], want[j])
						}
					}
				})
			}
		}
	}
}

// sameBitsOrNaN reports whether a and b have the same bits, any NaN
// matching any NaN.
func sameBitsOrNaN(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestHalfBatchNormGPU: BatchNorm of Float16 and BFloat16 inputs beside
// float32 parameters and running statistics (as mixed precision keeps
// them) runs on batchnorm.cu's half instances with the bits of the
// widened path (HalfEnv=0): the output, every gradient and the running
// statistics, in training and predict mode, with and without the fused
// ReLU, scale and shift, on the channel axis 1 and last. The forward pass
// makes only the fused kernels' arrays (no float32 copies).
func TestHalfBatchNormGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	cases := []struct {
		name   string
		shape  []int
		axis   int
		train  bool
		relu   bool
		affine bool
	}{
		{"train", []int{4, 6, 5, 3}, 1, true, false, true},
		{"train+relu", []int{4, 6, 5, 3}, 1, true, true, true},
		{"predict+relu", []int{4, 6, 5, 3}, 1, false, true, true},
		{"train/no-affine", []int{16, 6}, 1, true, false, false},
		{"predict/channels-last", []int{3, 4, 6}, -1, false, false, true},
		{"train+relu/channels-last", []int{3, 4, 6}, -1, true, true, true},
	}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		for _, c := range cases {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				ch := c.shape[(c.axis+len(c.shape))%len(c.shape)]
				r := rand.New(rand.NewPCG(7, 8))
				vals := func(n int, lo, hi float64) []float32 {
					v := make([]float32, n)
					for i := range v {
						v[i] = float32(lo + (hi-lo)*r.Float64())
					}
					return v
				}
				xv := vals(nd.Zeros(ctx.CPU(0), nd.Float32, c.shape...).Size(), -3, 3)
				xv[1] = float32(math.Copysign(0, -1))
				gv, bv, mv, vv := vals(ch, 0.5, 1.5), vals(ch, -0.5, 0.5), vals(ch, -1, 1), vals(ch, 0.5, 2)
				run := func(off bool) ([][]float64, int64) {
					halfOff = off
					defer func() { halfOff = false }()
					x := nd.FromSlice(ctx.CPU(0), xv, c.shape...).AsType(dt).CopyTo(dev)
					x.AttachGrad(nd.GradWrite)
					var gamma, beta *nd.NDArray
					if c.affine {
						gamma, beta = nd.FromSlice(dev, gv), nd.FromSlice(dev, bv)
						gamma.AttachGrad(nd.GradWrite)
						beta.AttachGrad(nd.GradWrite)
					}
					rm, rv := nd.FromSlice(dev, mv), nd.FromSlice(dev, vv)
					before := nd.MemoryStats(dev).Allocs
					exit := nd.EnterRecording(c.train)
					y := nd.BatchNorm(x, gamma, beta, rm, rv, nd.BatchNormOpts{Axis: &c.axis, Relu: c.relu})
					exit()
					allocs := nd.MemoryStats(dev).Allocs - before
					nd.Seed(3)
					g := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, y.Shape()...).AsType(dt)
					nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{g.CopyTo(dev)}, false)
					out := [][]float64{y.Float64s(), x.Grad().Float64s(), rm.Float64s(), rv.Float64s()}
					if c.affine {
						out = append(out, gamma.Grad().Float64s(), beta.Grad().Float64s())
					}
					return out, allocs
				}
				want, wideAllocs := run(true)
				got, allocs := run(false)
				for i := range want {
					for j := range want[i] {
						if !sameBitsOrNaN(want[i][j], got[i][j]) {
							t.Fatalf("array %d [%d]: half kernels %v, widened %v", i, j, got[i][j], want[i][j])
						}
					}
				}
				// The fused kernels' arrays: the output, the mean and invstd
				// (and in training the variance and the partial sums).
				most := int64(3)
				if c.train {
					most = 5
				}
				if allocs > most {
					t.Errorf("the forward pass made %d allocations (the widened one %d), want at most %d: the half kernels did not run", allocs, wideAllocs, most)
				}
			})
		}
	}
}
