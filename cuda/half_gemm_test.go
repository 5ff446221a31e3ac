//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// TestHalfGemmGPU: Float16 and BFloat16 products on the device's own half
// GEMM (cuBLAS GemmEx; backend.HalfGemmer) — Dot in every transposition,
// batched against batched and against one shared matrix, FullyConnected
// with and without a bias — give the CPU's widened results, forward and
// every gradient, within a few units in the last place of the dtype (the
// two differ only in the order of the float32 sums, so a value may round
// the other way). A forward product allocates only its result on the
// device: no float32 copies.
func TestHalfGemmGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	type tcase struct {
		name   string
		shapes [][]int
		f      func(in []*nd.NDArray) *nd.NDArray
	}
	dot := func(ta, tb bool) func(in []*nd.NDArray) *nd.NDArray {
		return func(in []*nd.NDArray) *nd.NDArray { return nd.Dot(in[0], in[1], ta, tb) }
	}
	cases := []tcase{
		{"NN", [][]int{{37, 70}, {70, 29}}, dot(false, false)},
		{"TN", [][]int{{70, 37}, {70, 29}}, dot(true, false)},
		{"NT", [][]int{{37, 70}, {29, 70}}, dot(false, true)},
		{"TT", [][]int{{70, 37}, {29, 70}}, dot(true, true)},
		{"batched", [][]int{{3, 9, 17}, {3, 17, 11}}, dot(false, false)},
		{"shared", [][]int{{3, 9, 17}, {17, 11}}, dot(false, false)},
		{"dense", [][]int{{8, 50}, {21, 50}}, func(in []*nd.NDArray) *nd.NDArray { return nd.FullyConnected(in[0], in[1], nil) }},
		{"dense+bias", [][]int{{8, 50}, {21, 50}, {21}}, func(in []*nd.NDArray) *nd.NDArray { return nd.FullyConnected(in[0], in[1], in[2]) }},
		{"K=0", [][]int{{3, 0}, {0, 4}}, dot(false, false)},
		{"dense K=0", [][]int{{3, 0}, {4, 0}, {4}}, func(in []*nd.NDArray) *nd.NDArray { return nd.FullyConnected(in[0], in[1], in[2]) }},
	}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		if !defaultBackend.GemmHalf(dt) {
			t.Fatalf("GemmHalf(%v) is false: %s", dt, halfGemmWhy())
		}
		for _, c := range cases {
			t.Run(fmt.Sprint(c.name, "/", dt), func(t *testing.T) {
				nd.Seed(5)
				host := make([]*nd.NDArray, len(c.shapes))
				for i, s := range c.shapes {
					host[i] = nd.RandomUniform(ctx.CPU(0), nd.Float32, -2, 2, s...).AsType(dt)
				}
				run := func(d ctx.Context) [][]float64 { return halfGradRun(t, d, dev, host, c.f, 1) }
				closeHalf(t, dt, run(ctx.CPU(0)), run(dev))
			})
		}
	}
}

// closeHalf fails unless got's arrays equal want's within a few units in
// the last place of dt: both are float32 sums rounded to dt, in different
// orders.
func closeHalf(t *testing.T, dt nd.DType, want, got [][]float64) {
	t.Helper()
	eps := math.Pow(2, -10)
	if dt == nd.BFloat16 {
		eps = math.Pow(2, -7)
	}
	for i := range want {
		scale := 0.0
		for _, v := range want[i] {
			scale += math.Abs(v) / float64(len(want[i]))
		}
		for j := range want[i] {
			w, g := want[i][j], got[i][j]
			if d := math.Abs(w - g); !(d <= eps*(2*math.Abs(w)+scale)) {
				t.Fatalf("array %d [%d]: gpu %v, cpu(0) %v (tolerance %.3g)", i, j, g, w, eps*(2*math.Abs(w)+scale))
			}
		}
	}
}

// TestHalfConvGPU: Float16 and BFloat16 convolutions on cuDNN's own half
// path (backend.HalfConvolver) give the CPU's widened results, forward and
// every gradient (input, filter, bias), within a few units in the last
// place; the bias is added after the convolution's rounding, which the
// tolerance covers. A forward convolution allocates only its result (and
// cuDNN's workspace). Skipped where the device has no
// half convolution (the emulator has no cuDNN).
func TestHalfConvGPU(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	nd.Zeros(dev, nd.Float32, 1).Release() // starts the device, which ConvHalf asks
	cases := []struct {
		name string
		x, w []int
		bias bool
		o    nd.ConvOpts
	}{
		{"3x3", []int{2, 8, 9, 9}, []int{16, 8, 3, 3}, false, nd.ConvOpts{Pad: [2]int{1, 1}}},
		{"3x3+bias", []int{2, 8, 9, 9}, []int{16, 8, 3, 3}, true, nd.ConvOpts{Pad: [2]int{1, 1}}},
		{"stride2", []int{3, 4, 11, 10}, []int{8, 4, 3, 3}, true, nd.ConvOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
		{"1x1", []int{2, 16, 6, 6}, []int{8, 16, 1, 1}, false, nd.ConvOpts{}},
		{"groups", []int{2, 8, 7, 7}, []int{8, 2, 3, 3}, true, nd.ConvOpts{Pad: [2]int{1, 1}, Groups: 4}},
	}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		p := backend.ConvParams{N: 2, InC: 8, InH: 9, InW: 9, OutC: 16, OutH: 9, OutW: 9, KH: 3, KW: 3,
			StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1, Groups: 1, DType: dt}
		if !defaultBackend.ConvHalf(dev, p) {
			t.Skipf("no %v convolution on %v (cuDNN missing or without an algorithm)", dt, dev)
		}
		for _, c := range cases {
			t.Run(fmt.Sprint(c.name, "/", dt), func(t *testing.T) {
				nd.Seed(6)
				shapes := [][]int{c.x, c.w}
				if c.bias {
					shapes = append(shapes, []int{c.w[0]})
				}
				host := make([]*nd.NDArray, len(shapes))
				for i, s := range shapes {
					host[i] = nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, s...).AsType(dt)
				}
				conv := func(in []*nd.NDArray) *nd.NDArray {
					var bias *nd.NDArray
					if c.bias {
						bias = in[2]
					}
					return nd.Conv2D(in[0], in[1], bias, c.o)
				}
				// On dev: its result and cuDNN's workspace.
				run := func(d ctx.Context) [][]float64 { return halfGradRun(t, d, dev, host, conv, 2) }
				closeHalf(t, dt, run(ctx.CPU(0)), run(dev))
			})
		}
	}
}

// halfGradRun copies host to d, each with a gradient attached, runs f
// while recording and backpropagates a fixed weighting (seed 9) of its
// result; it returns the result and every input's gradient. On dev it
// fails when f made more than maxAllocs allocations (float32 copies of
// half operands would add some).
func halfGradRun(t *testing.T, d, dev ctx.Context, host []*nd.NDArray, f func([]*nd.NDArray) *nd.NDArray, maxAllocs int64) [][]float64 {
	t.Helper()
	in := make([]*nd.NDArray, len(host))
	for i, h := range host {
		in[i] = h.CopyTo(d)
		in[i].AttachGrad(nd.GradWrite)
	}
	before := nd.MemoryStats(d).Allocs
	exit := nd.EnterRecording(true)
	y := f(in)
	exit()
	if n := nd.MemoryStats(d).Allocs - before; d == dev && n > maxAllocs {
		t.Errorf("the forward op made %d allocations on %v, want at most %d", n, d, maxAllocs)
	}
	nd.Seed(9)
	g := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, y.Shape()...).AsType(y.DType())
	nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{g.CopyTo(d)}, false)
	out := [][]float64{y.Float64s()}
	for _, a := range in {
		out = append(out, a.Grad().Float64s())
	}
	return out
}
