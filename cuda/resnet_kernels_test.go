//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// TestBatchNormReluGPU compares BatchNorm with Relu set (the GPU's
// bn_apply_relu kernel) against Relu(BatchNorm(...)) on gpu(0), in
// training and inference, in both float dtypes: the output and the
// gradients of x, gamma and beta bit for bit, NaN and −0 inputs included.
func TestBatchNormReluGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	shape := []int{3, 4, 5, 6}
	r := rand.New(rand.NewPCG(4, 2))
	x := make([]float64, 3*4*5*6)
	hg := make([]float64, len(x))
	for i := range x {
		x[i], hg[i] = r.Float64()*6-3, r.Float64()*2-1
	}
	x[7], x[100] = math.NaN(), math.Copysign(0, -1)
	for _, train := range []bool{true, false} {
		for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
			t.Run(fmt.Sprint(train, dt), func(t *testing.T) {
				run := func(fused bool) [][]float64 {
					mk := func(v []float64, shape ...int) *nd.NDArray {
						return nd.FromSlice(ctx.CPU(0), v, shape...).AsType(dt).CopyTo(dev)
					}
					xa := mk(x, shape...)
					ga, ba := mk([]float64{1, 0.5, 2, -1}, 4), mk([]float64{0.1, -0.2, 0, 0.3}, 4)
					rm, rv := mk([]float64{0, 0.1, -0.1, 0.2}, 4), mk([]float64{1, 2, 0.5, 1.5}, 4)
					for _, a := range []*nd.NDArray{xa, ga, ba} {
						a.AttachGrad(nd.GradWrite)
					}
					exit := nd.EnterRecording(train)
					var y *nd.NDArray
					if fused {
						y = nd.BatchNorm(xa, ga, ba, rm, rv, nd.BatchNormOpts{Relu: true})
					} else {
						y = nd.Relu(nd.BatchNorm(xa, ga, ba, rm, rv, nd.BatchNormOpts{}))
					}
					exit()
					nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{mk(hg, shape...)}, false)
					return [][]float64{y.Float64s(), xa.Grad().Float64s(), ga.Grad().Float64s(), ba.Grad().Float64s(), rm.Float64s()}
				}
				want, got := run(false), run(true)
				for i := range want {
					for j := range want[i] {
						if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
							t.Fatalf("array %d [%d]: fused %v, composed %v", i, j, got[i][j], want[i][j])
						}
					}
				}
			})
		}
	}
}

// TestPoolBackwardGPU compares pooling's output and gradient on gpu(0)
// with the CPU's, bit for bit (NaNs as NaNs): inputs with many ties, ±0
// in both orders and NaN, in overlapping (3×3 stride 2, padded, ceil mode)
// and tiled (2×2) windows; average pooling with and without the padding
// counted.
func TestPoolBackwardGPU(t *testing.T) {
	needGPUs(t, 1)
	r := rand.New(rand.NewPCG(8, 1))
	for _, o := range []nd.PoolOpts{
		{Type: nd.PoolMax, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}},
		{Type: nd.PoolMax, Kernel: [2]int{2, 2}},
		{Type: nd.PoolMax, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, CeilMode: true},
		{Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}},
		{Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, ExcludePad: true, CeilMode: true},
	} {
		for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
			t.Run(fmt.Sprint(o.Type, o.Kernel, o.Stride, o.ExcludePad, dt), func(t *testing.T) {
				shape := []int{2, 3, 9, 10}
				x := make([]float64, 2*3*9*10)
				for i := range x {
					x[i] = float64(r.IntN(4)) - 2 // ties everywhere
				}
				x[5], x[60], x[61] = math.NaN(), math.Copysign(0, -1), math.NaN()
				x[20], x[21], x[30], x[31] = 0, math.Copysign(0, -1), math.Copysign(0, -1), 0 // −0 after +0 and before it
				run := func(dev ctx.Context) [][]float64 {
					xa := nd.FromSlice(ctx.CPU(0), x, shape...).AsType(dt).CopyTo(dev)
					xa.AttachGrad(nd.GradWrite)
					exit := nd.EnterRecording(true)
					y := nd.Pool2D(xa, o)
					exit()
					g := nd.RandomUniform(ctx.CPU(0), dt, -1, 1, y.Shape()...)
					nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{g.CopyTo(dev)}, false)
					return [][]float64{y.Float64s(), xa.Grad().Float64s()}
				}
				nd.Seed(2)
				want := run(ctx.CPU(0))
				nd.Seed(2)
				got := run(ctx.GPU(0))
				for i := range want {
					if !slices.EqualFunc(got[i], want[i], sameBitsOrNaN) {
						for j := range want[i] {
							if !sameBitsOrNaN(got[i][j], want[i][j]) {
								t.Fatalf("array %d [%d]: gpu(0) %v (%#x), cpu(0) %v (%#x)", i, j, got[i][j], math.Float64bits(got[i][j]), want[i][j], math.Float64bits(want[i][j]))
							}
						}
					}
				}
			})
		}
	}
}

// TestWriteStagingLarge writes arrays larger than a stage group (copied
// into page-locked memory by several goroutines), back to back, and reads
// them back.
func TestWriteStagingLarge(t *testing.T) {
	needGPUs(t, 1)
	defer func(k int) { stageCopiers = k }(stageCopiers)
	dev := ctx.GPU(0)
	for _, copiers := range []int{1, 3} {
		stageCopiers = copiers
		const n = stageGroup/4 + 300_001 // one group, then 128 KiB pieces and a ragged end
		host := make([]float32, n)
		var arrays []*nd.NDArray
		for i := range 3 {
			for j := range host {
				host[j] = float32(i*7 + j)
			}
			arrays = append(arrays, nd.FromSlice(dev, host, n)) // host is reused at once
		}
		for i, a := range arrays {
			for j, v := range a.Float32s() {
				if v != float32(i*7+j) {
					t.Fatalf("%d copiers: array %d [%d] = %v, want %v", copiers, i, j, v, float32(i*7+j))
				}
			}
			a.Release()
		}
	}
}

// TestBatchNormStatsKernels compares the one-launch statistics kernels
// with the Unary and Binary calls they replace, on gpu(0), bit for bit,
// with and without running statistics, in both float dtypes.
func TestBatchNormStatsKernels(t *testing.T) {
	needGPUs(t, 1)
	dev, be := ctx.GPU(0), Default()
	const c = 37
	eps, mom, varScale := 1e-5, 0.9, 1.0+1.0/63 // variables: 1 − mom rounds as it does in nd
	r := rand.New(rand.NewPCG(3, 3))
	host := func(lo, hi float64) []float64 {
		v := make([]float64, c)
		for i := range v {
			v[i] = lo + (hi-lo)*r.Float64()
		}
		return v
	}
	mean, variance, runMean, runVar := host(-2, 2), host(0, 3), host(-1, 1), host(0.5, 2)
	variance[3] = 0
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		bufs := map[string]backend.Buffer{}
		arr := func(name string, v []float64) backend.Arg {
			b, err := be.Alloc(dev, dt, c)
			if err != nil {
				t.Fatal(err)
			}
			if v != nil {
				be.Write(b, 0, v)
			}
			bufs[name] = b
			return backend.Arg{Buf: b}
		}
		read := func(a backend.Arg) []float64 {
			out := make([]float64, c)
			be.Read(a.Buf, 0, out)
			return out
		}
		p := backend.ChannelParams{Outer: 1, C: c, Inner: 1, DType: dt, Device: dev}
		m, v := arr("mean", mean), arr("var", variance)
		// Composed, as nd runs it without the kernels.
		inv1, rm1, rv1, tmp := arr("inv1", nil), arr("rm1", runMean), arr("rv1", runVar), arr("tmp", nil)
		be.Unary(backend.AddScalar, inv1, v, c, eps, 0)
		be.Unary(backend.RSqrt, inv1, inv1, c, 0, 0)
		for _, s := range []struct {
			run, batch backend.Arg
			scale      float64
		}{{rm1, m, 1}, {rv1, v, varScale}} {
			be.Unary(backend.MulScalar, tmp, s.batch, c, (1-mom)*s.scale, 0)
			be.Unary(backend.MulScalar, s.run, s.run, c, mom, 0)
			be.Binary(backend.Add, []int{c}, s.run, s.run, tmp)
		}
		em1, ei1 := arr("em1", nil), arr("ei1", nil)
		be.Unary(backend.MulScalar, em1, rm1, c, 1, 0)
		be.Unary(backend.AddScalar, ei1, rv1, c, eps, 0)
		be.Unary(backend.RSqrt, ei1, ei1, c, 0, 0)
		// Fused.
		inv2, rm2, rv2, inv3 := arr("inv2", nil), arr("rm2", runMean), arr("rv2", runVar), arr("inv3", nil)
		be.BatchNormTrainStats(p, inv2, m, v, rm2, rv2, eps, mom, varScale)
		be.BatchNormTrainStats(p, inv3, m, v, backend.Arg{}, backend.Arg{}, eps, mom, varScale)
		em2, ei2 := arr("em2", nil), arr("ei2", nil)
		be.BatchNormEvalStats(p, em2, ei2, rm2, rv2, eps)
		for k, pair := range [][2]backend.Arg{{inv1, inv2}, {inv1, inv3}, {rm1, rm2}, {rv1, rv2}, {em1, em2}, {ei1, ei2}} {
			want, got := read(pair[0]), read(pair[1])
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%v pair %d [%d]: fused %v, composed %v", dt, k, i, got[i], want[i])
				}
			}
		}
		for _, b := range bufs {
			be.Free(dev, b)
		}
	}
}

// TestReluSignedZeroGPU: ReLU on gpu(0) lets −0 and NaN through as the
// CPU's does (the fused BatchNorm+ReLU and bias+ReLU kernels too).
func TestReluSignedZeroGPU(t *testing.T) {
	needGPUs(t, 1)
	in := []float64{math.Copysign(0, -1), 0, -1, 2.5, math.Inf(-1), math.NaN()}
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		x := nd.FromSlice(ctx.CPU(0), in, len(in)).AsType(dt)
		want, got := nd.Relu(x).Float64s(), nd.Relu(x.CopyTo(ctx.GPU(0))).Float64s()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Errorf("%v: Relu(%v) = %v on gpu(0), %v on cpu(0)", dt, in[i], got[i], want[i])
			}
		}
	}
}

// TestPoolBackwardGPUOutputWritten: max pooling's gradient on gpu(0) does
// not depend on the forward's output, which an in-place op may overwrite
// before the backward pass (found by review: a version that skipped
// windows by comparing x with y dropped their gradients); a stride past
// 32 bits takes the 64-bit index path.
func TestPoolBackwardGPUOutputWritten(t *testing.T) {
	needGPUs(t, 1)
	for _, c := range []struct {
		name      string
		o         nd.PoolOpts
		shape     []int
		overwrite bool
	}{
		{"output-overwritten", nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}, []int{1, 2, 6, 6}, true},
		{"stride-2^32", nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{2, 2}, Stride: [2]int{1 << 32, 1 << 32}}, []int{1, 1, 2, 2}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := make([]float64, numelOf(c.shape))
			for i := range x {
				x[i] = math.Sin(float64(i))
			}
			run := func(dev ctx.Context) []float64 {
				xa := nd.FromSlice(ctx.CPU(0), x, c.shape...).AsType(nd.Float32).CopyTo(dev)
				xa.AttachGrad(nd.GradWrite)
				exit := nd.EnterRecording(true)
				y := nd.Pool2D(xa, c.o)
				z := nd.MulScalar(y, 1) // its backward pass does not read y
				exit()
				if c.overwrite {
					nd.FillInPlace(y, 100)
				}
				nd.Backward([]*nd.NDArray{z}, nil, false)
				return xa.Grad().Float64s()
			}
			want, got := run(ctx.CPU(0)), run(ctx.GPU(0))
			if !slices.Equal(got, want) {
				t.Fatalf("dx: gpu(0) %v, cpu(0) %v", got, want)
			}
		})
	}
}

// numelOf returns the number of elements of shape.
func numelOf(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// TestMaxSignedZeroGPU: of +0 and −0, max is +0 and min −0 on gpu(0) in
// either order, as Go's max and min and the CPU backend give them (max
// pooling, the Max and Min reductions, Maximum and Minimum).
func TestMaxSignedZeroGPU(t *testing.T) {
	needGPUs(t, 1)
	n0 := math.Copysign(0, -1)
	in := []float64{0, -1, n0, -1, n0, -1, 0, -1} // 2×2 windows {+0, −0 …} and {−0, +0 …}
	ops := []struct {
		name string
		f    func(x *nd.NDArray) *nd.NDArray
	}{
		{"maxpool", func(x *nd.NDArray) *nd.NDArray {
			return nd.Pool2D(nd.Reshape(x, 1, 1, 2, 4), nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{2, 2}})
		}},
		{"max", func(x *nd.NDArray) *nd.NDArray { return nd.Max(nd.Reshape(x, 4, 2), 0) }},
		{"min", func(x *nd.NDArray) *nd.NDArray { return nd.Min(nd.Reshape(x, 4, 2), 0) }},
		{"maximum", func(x *nd.NDArray) *nd.NDArray { return nd.Maximum(x, nd.Neg(x)) }},
		{"minimum", func(x *nd.NDArray) *nd.NDArray { return nd.Minimum(x, nd.Neg(x)) }},
	}
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		for _, op := range ops {
			x := nd.FromSlice(ctx.CPU(0), in, len(in)).AsType(dt)
			want, got := op.f(x).Float64s(), op.f(x.CopyTo(ctx.GPU(0))).Float64s()
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Errorf("%v %s [%d]: gpu(0) %v, cpu(0) %v", dt, op.name, i, got[i], want[i])
				}
			}
		}
	}
}

// TestConvDirectGPU compares the small convolutions that conv_direct
// computes (one thread per output) with the column-matrix path on gpu(0)
// and with the CPU: groups, strides, padding, dilation, one and two
// images, both float dtypes, to 1e-5 (float32) and 1e-12 (float64)
// relative to the largest output.
func TestConvDirectGPU(t *testing.T) {
	needGPUs(t, 1)
	defer func(on bool) { directConvOn = on }(directConvOn)
	cases := []struct {
		n, c, h, w, oc, k, groups int
		o                         nd.ConvOpts
	}{
		{1, 1, 28, 28, 6, 5, 1, nd.ConvOpts{}}, // LeNet's first convolution at batch 1
		{1, 6, 12, 12, 16, 5, 1, nd.ConvOpts{}},
		{2, 4, 9, 7, 6, 3, 2, nd.ConvOpts{Stride: [2]int{2, 1}, Pad: [2]int{1, 2}, Groups: 2}},
		{1, 3, 10, 10, 4, 3, 1, nd.ConvOpts{Pad: [2]int{2, 2}, Dilate: [2]int{2, 2}}},
	}
	for i, c := range cases {
		for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
			x := nd.RandomNormal(ctx.CPU(0), dt, 0, 1, c.n, c.c, c.h, c.w)
			w := nd.RandomNormal(ctx.CPU(0), dt, 0, 1, c.oc, c.c/c.groups, c.k, c.k)
			g := newConvGeom(backend.ConvParams{N: c.n, InC: c.c, OutC: c.oc, KH: c.k, KW: c.k, Groups: c.groups, DType: backend.Float32})
			if g.kk > directConvTerms {
				t.Fatalf("case %d: %d terms a value, past conv_direct's limit", i, g.kk)
			}
			want := nd.Conv2D(x, w, nil, c.o).Float64s()
			var got [2][]float64
			for k, on := range []bool{true, false} {
				directConvOn = on
				got[k] = nd.Conv2D(x.CopyTo(ctx.GPU(0)), w.CopyTo(ctx.GPU(0)), nil, c.o).Float64s()
			}
			tol := 1e-5
			if dt == nd.Float64 {
				tol = 1e-12
			}
			scale := 0.0
			for _, v := range want {
				scale = math.Max(scale, math.Abs(v))
			}
			for j := range want {
				for k, name := range []string{"direct", "columns"} {
					if d := math.Abs(got[k][j] - want[j]); !(d <= tol*scale) {
						t.Fatalf("case %d %v [%d]: %s %v, cpu(0) %v", i, dt, j, name, got[k][j], want[j])
					}
				}
			}
		}
	}
}
