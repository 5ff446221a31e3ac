//go:build cuda || cudaemu

package cuda

import (
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// TestDropoutMaskMatchesHost draws masks with the GPU kernel and checks
// them value for value against the host formula nd documents (splitmix64
// of seed + i/2, low half for even i): odd and even lengths, both float
// types, several drop probabilities.
func TestDropoutMaskMatchesHost(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	mix := func(x uint64) uint64 {
		x += 0x9e3779b97f4a7c15
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		return x ^ x>>31
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, n := range []int{1, 7, 1000, 100001} {
			for _, p := range []float64{0.1, 0.5, 0.9} {
				seed := uint64(n)*7919 + uint64(p*100)
				thr := uint32(p * (1 << 32))
				keep := 1 / (1 - p)
				buf, err := Default().Alloc(dev, dt, n)
				if err != nil {
					t.Fatal(err)
				}
				Default().DropoutMask(backend.Arg{Buf: buf}, n, seed, thr, keep)
				got := make([]float64, n)
				Default().Read(buf, 0, got)
				Default().Free(dev, buf)
				dropped := 0
				for i, v := range got {
					u := mix(seed + uint64(i/2))
					bits := uint32(u)
					if i%2 == 1 {
						bits = uint32(u >> 32)
					}
					want := 0.0
					if bits >= thr {
						want = keep
						if dt == backend.Float32 {
							want = float64(float32(keep))
						}
					} else {
						dropped++
					}
					if math.Float64bits(v) != math.Float64bits(want) {
						t.Fatalf("%v n=%d p=%g: mask[%d] = %v, want %v", dt, n, p, i, v, want)
					}
				}
				if n == 100001 && math.Abs(float64(dropped)/float64(n)-p) > 0.01 {
					t.Errorf("%v p=%g: dropped %d of %d", dt, p, dropped, n)
				}
			}
		}
	}
}

// TestBiasReluMatchesCPU runs nd.BiasRelu forward and backward on gpu(0)
// (the fused kernels) and on cpu(0) (nd/cpu's): the same outputs and input
// gradients bit for bit, the bias gradients to rounding (sums in another
// order); dense (inner 1) and convolution shapes, both float types.
func TestBiasReluMatchesCPU(t *testing.T) {
	needGPUs(t, 1)
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		for _, shape := range [][]int{{7, 13}, {4, 6, 5, 9}, {2, 3, 1, 1}, {2, 3, 64, 64}} { // the last: 2 blocks a channel
			s := nd.NewScope()
			nd.Seed(11)
			xc := nd.RandomUniform(ctx.CPU(0), dt, -1, 1, shape...)
			bc := nd.RandomUniform(ctx.CPU(0), dt, -0.5, 0.5, shape[1])
			gc := nd.RandomUniform(ctx.CPU(0), dt, -1, 1, shape...)
			biasRelu := func(x, b *nd.NDArray) *nd.NDArray { return nd.BiasRelu(x, b, 1) }
			want, got := fwdBwd(ctx.CPU(0), xc, bc, gc, biasRelu), fwdBwd(ctx.GPU(0), xc, bc, gc, biasRelu)
			y0, dx0, db0 := want[0], want[1], want[2]
			y1, dx1, db1 := got[0], got[1], got[2]
			for i := range y0 {
				if math.Float64bits(y0[i]) != math.Float64bits(y1[i]) || math.Float64bits(dx0[i]) != math.Float64bits(dx1[i]) {
					t.Fatalf("%v %v [%d]: y %v / %v, dx %v / %v (cpu / gpu)", dt, shape, i, y0[i], y1[i], dx0[i], dx1[i])
				}
			}
			for c := range db0 {
				if math.Abs(db0[c]-db1[c]) > 1e-5*(1+math.Abs(db0[c])) {
					t.Errorf("%v %v: dbias[%d] %v on cpu, %v on gpu", dt, shape, c, db0[c], db1[c])
				}
			}
			s.Close()
		}
	}
}

// TestSoftmaxCEMatchesCPU runs nd.SoftmaxCrossEntropy forward and backward
// on gpu(0) (the fused kernels) and on cpu(0) (nd/cpu's): losses and logit
// gradients to 1e-12 in float64 and 2e-6 in float32 (the CPU's float32
// exponential is its own polynomial), over class axes with and without
// trailing positions, integer and float labels, and labels outside [0, C)
// (clipped, as Pick clips them).
func TestSoftmaxCEMatchesCPU(t *testing.T) {
	needGPUs(t, 1)
	for _, c := range []struct {
		shape  []int
		axis   int
		labels []float64
		ldt    nd.DType
	}{
		{[]int{4, 10}, 1, []float64{3, 0, 9, 5}, nd.Int32},
		{[]int{2, 5, 3}, 1, []float64{4, 0, 1, 2, 3, 4}, nd.Float32},
		{[]int{3, 6}, 1, []float64{-2, 7, 5}, nd.Int64},
		{[]int{6, 2}, 0, []float64{5, 1}, nd.Int64},
	} {
		for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
			s := nd.NewScope()
			nd.Seed(5)
			xc := nd.RandomUniform(ctx.CPU(0), dt, -4, 4, c.shape...)
			lc := nd.FromSlice(ctx.CPU(0), c.labels, len(c.labels)).AsType(c.ldt)
			if c.axis == 1 && len(c.shape) == 3 {
				lc = nd.Reshape(lc, c.shape[0], c.shape[2])
			}
			hc := nd.RandomUniform(ctx.CPU(0), dt, 0.5, 1.5, lc.Shape()...)
			run := func(dev ctx.Context) [2][]float64 {
				x, l, h := xc.CopyTo(dev), lc.CopyTo(dev), hc.CopyTo(dev)
				x.AttachGrad(nd.GradWrite)
				var loss *nd.NDArray
				autograd.Record(func() {
					loss = nd.SoftmaxCrossEntropy(x, l, c.axis)
					autograd.Backward(nd.Sum(nd.Mul(loss, h)))
				})
				return [2][]float64{loss.Float64s(), x.Grad().Float64s()}
			}
			want, got := run(ctx.CPU(0)), run(ctx.GPU(0))
			tol := 1e-12
			if dt == nd.Float32 {
				tol = 2e-6
			}
			for k, name := range []string{"loss", "dx"} {
				for i := range want[k] {
					if d := math.Abs(got[k][i] - want[k][i]); !(d <= tol*(1+math.Abs(want[k][i]))) {
						t.Fatalf("%v %v axis %d: %s[%d] = %v on gpu(0), %v on cpu(0)", dt, c.shape, c.axis, name, i, got[k][i], want[k][i])
					}
				}
			}
			s.Close()
		}
	}
}
