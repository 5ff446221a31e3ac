package ndtest

// The cases for the ops of nd/conv.go: Conv2D.

import (
	"math"
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confConvCase is one Conv2D configuration: input [n, c, h, w], weight
// [o, c/groups, kh, kw], options and whether a bias is added.
type confConvCase struct {
	name       string
	n, c, h, w int
	o, kh, kw  int
	opts       nd.ConvOpts
	bias       bool
}

// refConvOut is the output size of a convolution along one axis.
func refConvOut(in, k, stride, pad, dilate int) int {
	return (in+2*pad-dilate*(k-1)-1)/stride + 1
}

// refConv2D is the direct definition of grouped, strided, padded and
// dilated 2-D cross-correlation.
func refConv2D(c confConvCase, x, w, bias []float64) ([]float64, []int) {
	one := func(v int) int { return max(v, 1) }
	sh, sw := one(c.opts.Stride[0]), one(c.opts.Stride[1])
	ph, pw := c.opts.Pad[0], c.opts.Pad[1]
	dh, dw := one(c.opts.Dilate[0]), one(c.opts.Dilate[1])
	g := one(c.opts.Groups)
	oh, ow := refConvOut(c.h, c.kh, sh, ph, dh), refConvOut(c.w, c.kw, sw, pw, dw)
	cpg, opg := c.c/g, c.o/g
	out := make([]float64, c.n*c.o*oh*ow)
	for n := range c.n {
		for oc := range c.o {
			grp := oc / opg
			for y := range oh {
				for xo := range ow {
					s := 0.0
					if bias != nil {
						s = bias[oc]
					}
					for ic := range cpg {
						for ky := range c.kh {
							iy := y*sh - ph + ky*dh
							if iy < 0 || iy >= c.h {
								continue
							}
							for kx := range c.kw {
								ix := xo*sw - pw + kx*dw
								if ix < 0 || ix >= c.w {
									continue
								}
								xi := ((n*c.c+grp*cpg+ic)*c.h+iy)*c.w + ix
								wi := ((oc*cpg+ic)*c.kh+ky)*c.kw + kx
								s += x[xi] * w[wi]
							}
						}
					}
					out[((n*c.o+oc)*oh+y)*ow+xo] = s
				}
			}
		}
	}
	return out, []int{c.n, c.o, oh, ow}
}

// confConvCases are the Conv2D configurations of the suite.
var confConvCases = []confConvCase{
	{name: "3x3", n: 2, c: 3, h: 7, w: 7, o: 4, kh: 3, kw: 3, bias: true},
	{name: "3x3_nobias", n: 2, c: 3, h: 7, w: 7, o: 4, kh: 3, kw: 3},
	{name: "pad1", n: 2, c: 3, h: 6, w: 6, o: 4, kh: 3, kw: 3, opts: nd.ConvOpts{Pad: [2]int{1, 1}}, bias: true},
	{name: "pad2_k5", n: 1, c: 2, h: 5, w: 6, o: 3, kh: 5, kw: 5, opts: nd.ConvOpts{Pad: [2]int{2, 2}}},
	{name: "stride2", n: 2, c: 3, h: 9, w: 8, o: 4, kh: 3, kw: 3, opts: nd.ConvOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}, bias: true},
	{name: "stride2_nopad", n: 1, c: 2, h: 8, w: 8, o: 2, kh: 2, kw: 2, opts: nd.ConvOpts{Stride: [2]int{2, 2}}},
	{name: "dilate2", n: 2, c: 3, h: 9, w: 9, o: 4, kh: 3, kw: 3, opts: nd.ConvOpts{Dilate: [2]int{2, 2}}, bias: true},
	{name: "dilate2_pad2", n: 1, c: 2, h: 7, w: 8, o: 3, kh: 3, kw: 3, opts: nd.ConvOpts{Dilate: [2]int{2, 2}, Pad: [2]int{2, 2}}},
	{name: "groups2", n: 2, c: 4, h: 6, w: 6, o: 6, kh: 3, kw: 3, opts: nd.ConvOpts{Groups: 2, Pad: [2]int{1, 1}}, bias: true},
	{name: "depthwise", n: 2, c: 4, h: 6, w: 7, o: 4, kh: 3, kw: 3, opts: nd.ConvOpts{Groups: 4, Pad: [2]int{1, 1}}, bias: true},
	{name: "depthwise_x2", n: 1, c: 3, h: 5, w: 5, o: 6, kh: 3, kw: 3, opts: nd.ConvOpts{Groups: 3}},
	{name: "1x1", n: 3, c: 5, h: 4, w: 6, o: 3, kh: 1, kw: 1, bias: true},
	{name: "1x1_stride2", n: 1, c: 4, h: 5, w: 5, o: 2, kh: 1, kw: 1, opts: nd.ConvOpts{Stride: [2]int{2, 2}}},
	{name: "nonsquare", n: 2, c: 2, h: 6, w: 9, o: 3, kh: 2, kw: 4, opts: nd.ConvOpts{Stride: [2]int{1, 2}, Pad: [2]int{1, 0}}, bias: true},
	{name: "nonsquare_dilate", n: 1, c: 2, h: 8, w: 5, o: 2, kh: 3, kw: 1, opts: nd.ConvOpts{Dilate: [2]int{2, 1}, Stride: [2]int{2, 1}, Pad: [2]int{0, 1}}},
	{name: "kernel_equals_input", n: 2, c: 3, h: 4, w: 5, o: 2, kh: 4, kw: 5, bias: true},
	{name: "1x1_input", n: 2, c: 3, h: 1, w: 1, o: 4, kh: 1, kw: 1, bias: true},
	{name: "wide", n: 2, c: 16, h: 12, w: 12, o: 16, kh: 3, kw: 3, opts: nd.ConvOpts{Pad: [2]int{1, 1}}, bias: true},
}

// confConv2D checks Conv2D on confConvCases against the direct
// definition. The widest case sums 144 products per output, so float32
// uses confTolLongSum.
func confConv2D(e confEnv) {
	for i, c := range confConvCases {
		e.run(c.name, func(e confEnv) {
			g := max(c.opts.Groups, 1)
			x, xv := e.rand(uint64(900+3*i), -1, 1, c.n, c.c, c.h, c.w)
			w, wv := e.rand(uint64(901+3*i), -1, 1, c.o, c.c/g, c.kh, c.kw)
			var bias *nd.NDArray
			var bv []float64
			if c.bias {
				bias, bv = e.rand(uint64(902+3*i), -1, 1, c.o)
			}
			want, shape := refConv2D(c, xv, wv, bv)
			if bias != nil && e.dt.IsHalf() {
				// A GPU's convolution (cuDNN's, and so PyTorch's) rounds the
				// sums to the dtype and then adds the bias: an output near
				// zero keeps half an ulp of its sum, which the tolerance
				// allows element by element.
				sums, _ := refConv2D(c, xv, wv, nil)
				e.checkHalfBias(nd.Conv2D(x, w, bias, c.opts), shape, want, sums, confTolLongSum)
			} else {
				e.check(nd.Conv2D(x, w, bias, c.opts), shape, want, confTolLongSum)
			}
			// The layer with a ReLU: the same sums, then max(·, 0). (In half
			// precision it is Conv2D, then BiasRelu, each rounding to the
			// dtype: the bias cancels sums rounded once already, so small
			// outputs fall outside Conv2D's tolerance; those two ops have
			// their own half-precision cases.)
			if bias != nil && !e.dt.IsHalf() {
				for j, v := range want {
					want[j] = math.Max(v, 0)
				}
				e.check(nd.Conv2DBiasRelu(x, w, bias, c.opts), shape, want, confTolLongSum)
			}
		})
	}
}

// gradConvCases checks Conv2D with every option: padding, stride,
// dilation, groups (depthwise included), 1x1 and non-square kernels, with
// and without bias; gradients for x, w and b.
func gradConvCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range []struct {
		name    string
		x, w    []int
		o       nd.ConvOpts
		noBias  bool
		onlyXOf bool // differentiate x only
	}{
		{name: "plain", x: []int{2, 2, 4, 4}, w: []int{3, 2, 3, 3}},
		{name: "plain/no-bias", x: []int{2, 2, 4, 4}, w: []int{3, 2, 3, 3}, noBias: true},
		{name: "pad-1", x: []int{1, 2, 4, 4}, w: []int{2, 2, 3, 3}, o: nd.ConvOpts{Pad: [2]int{1, 1}}},
		{name: "stride-2", x: []int{1, 2, 5, 5}, w: []int{2, 2, 3, 3}, o: nd.ConvOpts{Stride: [2]int{2, 2}}},
		{name: "stride-2/pad-1", x: []int{1, 2, 5, 5}, w: []int{2, 2, 3, 3},
			o: nd.ConvOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
		// Stride larger than the kernel: some inputs reach no output and
		// must get a zero gradient.
		{name: "stride-3/kernel-2", x: []int{1, 1, 7, 7}, w: []int{2, 1, 2, 2}, o: nd.ConvOpts{Stride: [2]int{3, 3}}},
		{name: "dilation-2", x: []int{1, 2, 5, 5}, w: []int{2, 2, 2, 2}, o: nd.ConvOpts{Dilate: [2]int{2, 2}}},
		{name: "dilation-2/pad-2", x: []int{1, 2, 4, 4}, w: []int{2, 2, 3, 3},
			o: nd.ConvOpts{Dilate: [2]int{2, 2}, Pad: [2]int{2, 2}}},
		{name: "groups-2", x: []int{1, 4, 4, 4}, w: []int{4, 2, 2, 2}, o: nd.ConvOpts{Groups: 2}},
		{name: "groups-2/no-bias", x: []int{1, 4, 4, 4}, w: []int{2, 2, 2, 2}, o: nd.ConvOpts{Groups: 2}, noBias: true},
		{name: "depthwise", x: []int{1, 3, 4, 4}, w: []int{3, 1, 3, 3}, o: nd.ConvOpts{Groups: 3, Pad: [2]int{1, 1}}},
		{name: "depthwise/multiplier-2", x: []int{1, 3, 4, 4}, w: []int{6, 1, 3, 3}, o: nd.ConvOpts{Groups: 3}},
		{name: "1x1", x: []int{2, 3, 3, 3}, w: []int{4, 3, 1, 1}},
		{name: "1x1/no-bias", x: []int{2, 3, 3, 3}, w: []int{4, 3, 1, 1}, noBias: true},
		{name: "non-square-kernel", x: []int{1, 2, 4, 5}, w: []int{2, 2, 2, 3}},
		{name: "non-square-everything", x: []int{1, 2, 5, 6}, w: []int{2, 2, 2, 3},
			o: nd.ConvOpts{Stride: [2]int{1, 2}, Pad: [2]int{1, 0}, Dilate: [2]int{2, 1}}},
		{name: "plain/x-only", x: []int{2, 2, 4, 4}, w: []int{3, 2, 3, 3}, onlyXOf: true},
	} {
		seed := 80 + 3*uint64(i)
		gc := gradCase{op: "Conv2D", name: c.name}
		if c.noBias {
			gc.in = func() []*nd.NDArray { return gradIn(gradSigned(dev, seed, c.x...), gradSigned(dev, seed+1, c.w...)) }
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv2D(in[0], in[1], nil, c.o) }
		} else {
			gc.in = func() []*nd.NDArray {
				return gradIn(gradSigned(dev, seed, c.x...), gradSigned(dev, seed+1, c.w...), gradSigned(dev, seed+2, c.w[0]))
			}
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv2D(in[0], in[1], in[2], c.o) }
		}
		if c.onlyXOf {
			gc.noGrad = []int{1, 2}
		}
		cases = append(cases, gc)
	}
	// Conv2DBiasRelu: the fused layer, on the plain, padded and grouped
	// shapes (its gradients are BiasRelu's, then the convolution's).
	for i, c := range []struct {
		name string
		x, w []int
		o    nd.ConvOpts
	}{
		{"plain", []int{2, 2, 4, 4}, []int{3, 2, 3, 3}, nd.ConvOpts{}},
		{"pad-1", []int{1, 2, 4, 4}, []int{2, 2, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}},
		{"groups-2", []int{1, 4, 4, 4}, []int{4, 2, 2, 2}, nd.ConvOpts{Groups: 2}},
	} {
		seed := 140 + 3*uint64(i)
		cases = append(cases, gradCase{op: "Conv2DBiasRelu", name: c.name,
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, seed, c.x...), gradSigned(dev, seed+1, c.w...), gradSigned(dev, seed+2, c.w[0]))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Conv2DBiasRelu(in[0], in[1], in[2], c.o) },
		})
	}
	return cases
}

// checkHalfBias is check for a half-precision result computed as the
// rounded sums plus a bias: element i may also differ by half an ulp of
// sums[i] in the dtype.
func (e confEnv) checkHalfBias(got *nd.NDArray, shape []int, want, sums []float64, tl confTols) {
	e.T.Helper()
	if !slices.Equal(got.Shape(), shape) || got.DType() != e.dt || got.Context() != e.dev {
		e.Fatalf("result %v %v on %v, want %v %v on %v", got.DType(), got.Shape(), got.Context(), e.dt, shape, e.dev)
	}
	mant := 10 // float16's stored mantissa bits
	if e.dt == nd.BFloat16 {
		mant = 7
	}
	base := e.tol(tl)
	bad := 0
	for i, g := range got.Float64s() {
		_, exp := math.Frexp(math.Abs(sums[i]))
		t := confTol{base.atol + math.Ldexp(1, exp-2-mant), base.rtol} // half an ulp of the sum
		if !confClose(g, want[i], t) {
			if bad < 5 {
				e.Errorf("element %d: got %.10g, want %.10g (diff %.3g, atol %g with the sum's half ulp, rtol %g)", i, g, want[i], math.Abs(g-want[i]), t.atol, t.rtol)
			}
			bad++
		}
	}
	if bad > 5 {
		e.Errorf("... %d of %d elements differ", bad, len(want))
	}
}
