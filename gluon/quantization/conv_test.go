package quantization_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

// convCase is a convolution of the table tests: NCHW input [n, c, h, w]
// and nn.Conv2D's options.
type convCase struct {
	name       string
	n, c, h, w int
	channels   int
	o          nn.Conv2DOpts
	perTensor  bool
	in         *quantization.QParams // nil: the input's own range, reduce_range
}

var convCases = []convCase{
	{name: "3x3-pad1-relu", n: 2, c: 5, h: 9, w: 8, channels: 7, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}, Pad: [2]int{1, 1}, Act: "relu"}},
	{name: "stride2-nobias", n: 1, c: 8, h: 11, w: 10, channels: 16, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, NoBias: true}},
	{name: "rect-dilated", n: 2, c: 4, h: 10, w: 9, channels: 6, o: nn.Conv2DOpts{Kernel: [2]int{3, 2}, Dilate: [2]int{2, 1}, Pad: [2]int{2, 1}, Stride: [2]int{1, 2}}},
	{name: "groups3", n: 2, c: 6, h: 7, w: 7, channels: 9, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}, Pad: [2]int{1, 1}, Groups: 3}},
	{name: "depthwise-s2", n: 2, c: 8, h: 9, w: 9, channels: 8, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}, Pad: [2]int{1, 1}, Stride: [2]int{2, 2}, Groups: 8, Act: "relu"}},
	{name: "depthwise-x2", n: 1, c: 4, h: 6, w: 5, channels: 8, o: nn.Conv2DOpts{Kernel: [2]int{5, 5}, Pad: [2]int{2, 2}, Groups: 4}},
	{name: "1x1", n: 3, c: 7, h: 5, w: 6, channels: 5, o: nn.Conv2DOpts{Kernel: [2]int{1, 1}}},
	{name: "1x1-stride2", n: 2, c: 16, h: 8, w: 8, channels: 32, o: nn.Conv2DOpts{Kernel: [2]int{1, 1}, Stride: [2]int{2, 2}}},
	{name: "stem7x7", n: 1, c: 3, h: 20, w: 20, channels: 16, o: nn.Conv2DOpts{Kernel: [2]int{7, 7}, Stride: [2]int{2, 2}, Pad: [2]int{3, 3}}},
	{name: "per-tensor", n: 2, c: 6, h: 6, w: 6, channels: 4, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}}, perTensor: true},
	{name: "tanh", n: 1, c: 3, h: 5, w: 5, channels: 4, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}, Pad: [2]int{1, 1}, Act: "tanh"}},
	// A fixed quantization narrower than the input: clamped bytes, up to
	// 255 (AVX2's split kernel).
	{name: "clamped", n: 2, c: 8, h: 6, w: 6, channels: 8, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}, Pad: [2]int{1, 1}}, in: &quantization.QParams{Scale: 0.01, Zero: 200}},
	// Images in several chunks of unrolled rows (2 MiB each).
	{name: "chunks", n: 3, c: 128, h: 30, w: 30, channels: 8, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}, Pad: [2]int{1, 1}}},
	{name: "empty-batch", n: 0, c: 3, h: 5, w: 5, channels: 4, o: nn.Conv2DOpts{Kernel: [2]int{3, 3}}},
}

// build returns the case's float convolution (random weights), its input
// and the layer quantized for it.
func (c convCase) build(t testing.TB, seed uint64) (*nn.Conv2D, *nd.NDArray, *quantization.Conv2D) {
	t.Helper()
	o := c.o
	o.InChannels = c.c
	f := nn.NewConv2D(c.channels, 0, o)
	initNet(t, f, seed)
	x := randInput(seed+1, c.n, c.c, c.h, c.w)
	in := quantization.QParams{Scale: 0.02, Zero: 60}
	if c.in != nil {
		in = *c.in
	} else if c.n > 0 {
		lo, hi, _ := nd.MinMaxF32(x.Float32s())
		var err error
		if in, err = quantization.MinMaxQParams(lo, hi, true); err != nil {
			t.Fatal(err)
		}
	}
	q, err := quantization.NewConv2D(f, in, quantization.StaticOpts{PerTensor: c.perTensor})
	if err != nil {
		t.Fatal(err)
	}
	return f, x, q
}

// refConv is the quantized convolution by its definition: the input
// quantized with q's parameters, exact int32 sums over the taps inside
// the image (padding is the zero point: no term), then
// float32(float32(Σ)·fl(sx·sw[o])) + b[o] and the activation. It also
// returns, per output, the bound of its error against the float
// convolution: sx/2·Σ|w| + sw/2·Σ|x̂| over the taps.
func refConv(c convCase, x []float32, f *nn.Conv2D, q *quantization.Conv2D) (y []float32, bound []float64) {
	g := max(c.o.Groups, 1)
	kh, kw := c.o.Kernel[0], c.o.Kernel[1]
	sh, sw := max(c.o.Stride[0], 1), max(c.o.Stride[1], 1)
	dh, dw := max(c.o.Dilate[0], 1), max(c.o.Dilate[1], 1)
	ph, pw := c.o.Pad[0], c.o.Pad[1]
	oh := (c.h+2*ph-dh*(kh-1)-1)/sh + 1
	ow := (c.w+2*pw-dw*(kw-1)-1)/sw + 1
	in := q.Input()
	xq := make([]uint8, len(x))
	nd.QuantizeU8(xq, x, 1/in.Scale, in.Zero)
	wq, scales := q.Weight()
	wf := f.Weight.ListData()[0].Float32s()
	bias := q.Bias()
	cg, ocg := c.c/g, c.channels/g
	y = make([]float32, c.n*c.channels*oh*ow)
	bound = make([]float64, len(y))
	for n := range c.n {
		for o := range c.channels {
			grp := o / ocg
			sc := scales[min(o, len(scales)-1)]
			for i := range oh {
				for j := range ow {
					var acc int32
					var bw, bx float64
					for ci := range cg {
						ch := grp*cg + ci
						for a := range kh {
							for b := range kw {
								ih, iw := i*sh-ph+a*dh, j*sw-pw+b*dw
								if ih < 0 || ih >= c.h || iw < 0 || iw >= c.w {
									continue
								}
								wi := ((o*cg+ci)*kh+a)*kw + b
								v := int32(xq[((n*c.c+ch)*c.h+ih)*c.w+iw]) - in.Zero
								acc += v * int32(wq[wi])
								bw += math.Abs(float64(wf[wi]))
								bx += math.Abs(float64(v) * float64(in.Scale))
							}
						}
					}
					k := ((n*c.channels+o)*oh+i)*ow + j
					v := float32(float32(acc) * (in.Scale * sc))
					if bias != nil {
						v += bias[o]
					}
					switch c.o.Act {
					case "relu":
						v = max(v, 0)
					case "tanh":
						v = float32(math.Tanh(float64(v)))
					}
					y[k] = v
					bound[k] = float64(in.Scale)/2*bw + float64(sc)/2*bx
				}
			}
		}
	}
	return y, bound
}

// TestConv2DExact: the int8 convolution equals its definition (refConv:
// exact int32 sums, then the two float32 roundings) bit for bit, for
// every geometry nn.Conv2D has — padding, stride, dilation, rectangular
// kernels, groups, depthwise with and without a channel multiplier, 1×1
// layers read in place or strided — per channel and per tensor, with a
// fused ReLU or another activation, inputs clamped beyond the calibrated
// range, batches in several chunks and an empty batch.
func TestConv2DExact(t *testing.T) {
	for i, c := range convCases {
		t.Run(c.name, func(t *testing.T) {
			f, x, q := c.build(t, uint64(10+i))
			want, _ := refConv(c, x.Float32s(), f, q)
			got := q.Forward(x)
			fwant := f.Forward(x)
			if fmt.Sprint(got.Shape()) != fmt.Sprint(fwant.Shape()) {
				t.Fatalf("shape %v, nn.Conv2D's %v", got.Shape(), fwant.Shape())
			}
			tanh := c.o.Act == "tanh"
			for k, v := range got.Float32s() {
				if w := want[k]; math.Float32bits(v) != math.Float32bits(w) && !(tanh && math.Abs(float64(v-w)) <= 2e-7) {
					t.Fatalf("output %d = %v, want %v", k, v, w)
				}
			}
		})
	}
}

// TestConv2DFloatError: against the float convolution each output errs
// by no more than int8 rounding allows, sx/2·Σ|w| + sw/2·Σ|x̂| over its
// taps (the input's and the weights' rounding errors, each at most half
// a step), plus the float convolution's own rounding; the test reports
// the largest share of that bound used.
func TestConv2DFloatError(t *testing.T) {
	var worst float64
	for i, c := range convCases {
		if c.in != nil || c.o.Act == "tanh" || c.n == 0 {
			continue // clamped inputs have no such bound
		}
		f, x, q := c.build(t, uint64(40+i))
		xs := x.Float32s()
		c.o.Act = "" // compare before the ReLU: it only shrinks differences
		_, bound := refConv(c, xs, f, q)
		fo := f.Options()
		fo.Act = ""
		plain := nn.NewConv2D(f.Channels, 0, fo)
		plain.Weight, plain.Bias = f.Weight, f.Bias
		want := plain.Forward(x).Float32s()
		got := q.Forward(x).Float32s()
		for k, v := range got {
			if f.Options().Act == "relu" {
				want[k] = max(want[k], 0)
			}
			d := math.Abs(float64(v - want[k]))
			b := bound[k] + 1e-5*(math.Abs(float64(want[k]))+1e-3)
			if d > b {
				t.Fatalf("%s: output %d = %v, float %v: error %.3g beyond the bound %.3g", c.name, k, v, want[k], d, b)
			}
			worst = max(worst, d/b)
		}
	}
	t.Logf("largest error: %.2f of the int8 rounding bound", worst)
}

// TestConv2DBadCalls: misuse panics with nd's error kinds.
func TestConv2DBadCalls(t *testing.T) {
	_, x, q := convCases[0].build(t, 3)
	_, _, unpadded := convCases[9].build(t, 4)
	for _, tc := range []struct {
		name string
		kind nd.ErrorKind
		f    func()
	}{
		{"nil", nd.ErrArgument, func() { q.Forward(nil) }},
		{"float64", nd.ErrDType, func() { q.Forward(x.AsType(nd.Float64)) }},
		{"3-d", nd.ErrShape, func() { q.Forward(randInput(1, 5, 9, 8)) }},
		{"channels", nd.ErrShape, func() { q.Forward(randInput(1, 1, 4, 9, 8)) }},
		{"too small", nd.ErrShape, func() { unpadded.Forward(randInput(1, 1, 6, 2, 2)) }},
		{"recording", nd.ErrGraph, func() { autograd.Record(func() { q.Forward(x) }) }},
	} {
		err := nd.Catch(tc.f)
		var e *nd.Error
		if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(e.Error(), "conv") {
			t.Errorf("%s: %v, want an error of kind %v", tc.name, err, tc.kind)
		}
	}
}

// TestNewConv2DErrors: layers and input quantizations NewConv2D refuses.
func TestNewConv2DErrors(t *testing.T) {
	good := quantization.QParams{Scale: 0.1, Zero: 10}
	f, _, _ := convCases[0].build(t, 5)
	uninit := nn.NewConv2D(4, 3, nn.Conv2DOpts{})
	for _, tc := range []struct {
		name string
		c    *nn.Conv2D
		in   quantization.QParams
	}{
		{"nil", nil, good},
		{"uninitialised", uninit, good},
		{"zero scale", f, quantization.QParams{Scale: 0, Zero: 0}},
		{"NaN scale", f, quantization.QParams{Scale: float32(math.NaN())}},
		{"tiny scale", f, quantization.QParams{Scale: 1e-45}},
		{"zero point", f, quantization.QParams{Scale: 1, Zero: 256}},
		{"negative zero point", f, quantization.QParams{Scale: 1, Zero: -1}},
	} {
		if _, err := quantization.NewConv2D(tc.c, tc.in, quantization.StaticOpts{}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	w := f.Weight.ListData()[0].Float32s()
	w[r.IntN(len(w))] = float32(math.Inf(1))
	f.Weight.SetData(nd.FromSlice(dev, w, f.Weight.ListData()[0].Shape()...))
	if _, err := quantization.NewConv2D(f, good, quantization.StaticOpts{}); err == nil {
		t.Error("infinite weight: no error")
	}
}
