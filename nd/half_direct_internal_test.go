package nd

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// halfBackend is the CPU backend posing as one that computes on half
// arrays itself (backend.HalfGemmer, HalfConvolver, HalfElementwise, as
// the CUDA backend does): it widens the operands on the host, runs the
// float32 kernel and rounds the result. It drives nd's direct half paths
// without a GPU.
type halfBackend struct {
	backend.Backend
	direct atomic.Int64 // kernel calls that got half operands
}

func (h *halfBackend) GemmHalf(dt backend.DType) bool                    { return dt.IsHalf() }
func (h *halfBackend) ConvHalf(_ ctx.Context, p backend.ConvParams) bool { return p.DType.IsHalf() }
func (h *halfBackend) ElementwiseHalf(dt backend.DType) bool             { return dt.IsHalf() }

// run calls f on float32 copies of args (nil Bufs stay nil) where the
// first is half, rounding the copy of out (index 0) back; it reports
// whether it did.
func (h *halfBackend) run(args []backend.Arg, f func(w []backend.Arg)) bool {
	if args[1].Buf == nil || !args[1].Buf.DType().IsHalf() {
		return false
	}
	h.direct.Add(1)
	w := make([]backend.Arg, len(args))
	for i, a := range args {
		w[i] = a
		if a.Buf == nil || !a.Buf.DType().IsHalf() {
			continue
		}
		b, err := h.Backend.Alloc(ctx.CPU(0), backend.Float32, a.Buf.Len())
		if err != nil {
			panic(err)
		}
		h.Backend.Cast(backend.Arg{Buf: b}, backend.Arg{Buf: a.Buf}, a.Buf.Len())
		w[i] = backend.Arg{Buf: b, Off: a.Off, Strides: a.Strides}
	}
	f(w)
	if args[0].Buf != w[0].Buf {
		h.Backend.Cast(backend.Arg{Buf: args[0].Buf}, backend.Arg{Buf: w[0].Buf}, args[0].Buf.Len())
	}
	for i, a := range w {
		if a.Buf != args[i].Buf {
			h.Backend.Free(ctx.CPU(0), a.Buf)
		}
	}
	return true
}

func (h *halfBackend) Gemm(p backend.GemmParams) {
	if !h.run([]backend.Arg{p.C, p.A, p.B}, func(w []backend.Arg) {
		q := p
		q.C, q.A, q.B = w[0], w[1], w[2]
		h.Backend.Gemm(q)
	}) {
		h.Backend.Gemm(p)
	}
}

func (h *halfBackend) conv(p backend.ConvParams, o, a, b backend.Arg, f func(backend.ConvParams, backend.Arg, backend.Arg, backend.Arg)) {
	q := p
	q.DType = Float32
	if !h.run([]backend.Arg{o, a, b}, func(w []backend.Arg) { f(q, w[0], w[1], w[2]) }) {
		f(p, o, a, b)
	}
}

func (h *halfBackend) Conv2D(p backend.ConvParams, y, x, w backend.Arg) {
	h.conv(p, y, x, w, h.Backend.Conv2D)
}

func (h *halfBackend) Conv2DBackwardData(p backend.ConvParams, dx, dy, w backend.Arg) {
	h.conv(p, dx, dy, w, h.Backend.Conv2DBackwardData)
}

func (h *halfBackend) Conv2DBackwardFilter(p backend.ConvParams, dw, x, dy backend.Arg) {
	h.conv(p, dw, x, dy, h.Backend.Conv2DBackwardFilter)
}

func (h *halfBackend) Unary(op backend.UnaryOp, dst, x backend.Arg, n int, p1, p2 float64) {
	if !h.run([]backend.Arg{dst, x}, func(w []backend.Arg) { h.Backend.Unary(op, w[0], w[1], n, p1, p2) }) {
		h.Backend.Unary(op, dst, x, n, p1, p2)
	}
}

func (h *halfBackend) Binary(op backend.BinaryOp, shape []int, dst, a, b backend.Arg) {
	if !h.run([]backend.Arg{dst, a, b}, func(w []backend.Arg) { h.Backend.Binary(op, shape, w[0], w[1], w[2]) }) {
		h.Backend.Binary(op, shape, dst, a, b)
	}
}

// TestHalfDirect: with a backend that computes on half arrays itself,
// convolutions (with a bias, groups, 1-D, fused with ReLU), dense layers,
// products against a shared matrix and elementwise ops take the direct
// paths and give the widened paths' values, forward and every gradient
// for every choice of inputs that want one, within a few units in the
// last place (a direct convolution's bias is added after its rounding).
func TestHalfDirect(t *testing.T) {
	cases := []struct {
		name   string
		f      func(in []*NDArray) *NDArray
		shapes [][]int
	}{
		{"Conv2D+bias", func(in []*NDArray) *NDArray { return Conv2D(in[0], in[1], in[2], ConvOpts{Pad: [2]int{1, 1}}) }, [][]int{{2, 4, 6, 6}, {6, 4, 3, 3}, {6}}},
		{"Conv2D groups", func(in []*NDArray) *NDArray {
			return Conv2D(in[0], in[1], nil, ConvOpts{Groups: 2, Stride: [2]int{2, 2}})
		}, [][]int{{2, 4, 7, 7}, {6, 2, 3, 3}}},
		{"Conv1D+bias", func(in []*NDArray) *NDArray { return Conv1D(in[0], in[1], in[2], Conv1DOpts{Pad: 1}) }, [][]int{{2, 4, 9}, {5, 4, 3}, {5}}},
		{"Conv2DBiasRelu", func(in []*NDArray) *NDArray {
			return Conv2DBiasRelu(in[0], in[1], in[2], ConvOpts{Pad: [2]int{1, 1}})
		}, [][]int{{2, 4, 6, 6}, {6, 4, 3, 3}, {6}}},
		{"FullyConnected+bias", func(in []*NDArray) *NDArray { return FullyConnected(in[0], in[1], in[2]) }, [][]int{{5, 12}, {7, 12}, {7}}},
		{"Dot shared", func(in []*NDArray) *NDArray { return Dot(in[0], in[1], false, true) }, [][]int{{3, 5, 12}, {7, 12}}},
		{"Mul broadcast", func(in []*NDArray) *NDArray { return Tanh(Mul(in[0], in[1])) }, [][]int{{3, 5}, {5}}},
	}
	for _, dt := range []DType{Float16, BFloat16} {
		eps := math.Pow(2, -9)
		if dt == BFloat16 {
			eps = math.Pow(2, -6)
		}
		for _, c := range cases {
			for mask := 1; mask < 1<<len(c.shapes); mask++ {
				t.Run(fmt.Sprint(c.name, "/", dt, "/", mask), func(t *testing.T) {
					run := func() [][]float64 {
						Seed(4)
						in := make([]*NDArray, len(c.shapes))
						for i, s := range c.shapes {
							in[i] = RandomUniform(ctx.CPU(0), Float32, -1, 1, s...).AsType(dt).Detach()
							if mask&(1<<i) != 0 {
								in[i].AttachGrad(GradWrite)
							}
						}
						exit := EnterRecording(true)
						y := c.f(in)
						exit()
						Seed(8)
						Backward([]*NDArray{y}, []*NDArray{RandomUniform(ctx.CPU(0), Float32, -1, 1, y.Shape()...).AsType(dt)}, false)
						out := [][]float64{y.Float64s()}
						for i, a := range in {
							if mask&(1<<i) != 0 {
								out = append(out, a.Grad().Float64s())
							}
						}
						return out
					}
					want := run()
					real := backend.For(ctx.CPU(0))
					h := &halfBackend{Backend: real}
					backend.Register(ctx.KindCPU, h)
					got := run()
					backend.Register(ctx.KindCPU, real)
					if h.direct.Load() == 0 {
						t.Fatal("no kernel got half operands: the direct paths were not taken")
					}
					for i := range want {
						for j := range want[i] {
							if d := math.Abs(want[i][j] - got[i][j]); !(d <= eps*(1+math.Abs(want[i][j]))) {
								t.Fatalf("array %d [%d]: direct %v, widened %v", i, j, got[i][j], want[i][j])
							}
						}
					}
				})
			}
		}
	}
}
