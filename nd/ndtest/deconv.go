package ndtest

// The cases for the ops of nd/deconv.go: Conv2DTranspose.

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// deconvCase is one Conv2DTranspose configuration: input [n, c, h, w],
// weight [c, o/groups, kh, kw].
type deconvCase struct {
	name       string
	n, c, h, w int
	o, kh, kw  int
	opts       nd.ConvTransposeOpts
	bias       bool
}

var deconvCases = []deconvCase{
	{name: "k3", n: 2, c: 3, h: 4, w: 4, o: 2, kh: 3, kw: 3, bias: true},
	{name: "stride2", n: 1, c: 2, h: 3, w: 4, o: 3, kh: 3, kw: 3, opts: nd.ConvTransposeOpts{Stride: [2]int{2, 2}}, bias: true},
	{name: "stride2_pad1_outpad1", n: 2, c: 2, h: 3, w: 3, o: 2, kh: 3, kw: 3,
		opts: nd.ConvTransposeOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, OutputPad: [2]int{1, 1}}},
	{name: "k4_stride2_pad1", n: 1, c: 3, h: 4, w: 4, o: 2, kh: 4, kw: 4,
		opts: nd.ConvTransposeOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}, bias: true},
	{name: "dilate2", n: 1, c: 2, h: 3, w: 3, o: 2, kh: 2, kw: 3, opts: nd.ConvTransposeOpts{Dilate: [2]int{2, 2}}},
	{name: "groups2", n: 2, c: 4, h: 3, w: 3, o: 6, kh: 2, kw: 2, opts: nd.ConvTransposeOpts{Groups: 2, Stride: [2]int{2, 1}}, bias: true},
	{name: "nonsquare", n: 1, c: 2, h: 2, w: 5, o: 3, kh: 1, kw: 3, opts: nd.ConvTransposeOpts{Stride: [2]int{3, 1}, Pad: [2]int{0, 1}, OutputPad: [2]int{2, 0}}},
	// Stride 1 with output padding (allowed below the dilation): the
	// convolution it transposes does not cover the output's last rows and
	// columns, so the kernels must not take the 1x1 shortcut that treats
	// the two planes as one.
	{name: "k1_dilate2_outpad1", n: 2, c: 3, h: 3, w: 4, o: 2, kh: 1, kw: 1,
		opts: nd.ConvTransposeOpts{Dilate: [2]int{2, 3}, OutputPad: [2]int{1, 2}}, bias: true},
	{name: "k3_dilate2_pad1_outpad1", n: 1, c: 2, h: 3, w: 3, o: 2, kh: 3, kw: 3,
		opts: nd.ConvTransposeOpts{Dilate: [2]int{2, 2}, Pad: [2]int{1, 1}, OutputPad: [2]int{1, 0}}},
}

// refDeconv is the direct definition: every input element scatters its
// product with the kernel into the output.
func refDeconv(c deconvCase, x, w, bias []float64) ([]float64, []int) {
	one := func(v int) int { return max(v, 1) }
	sh, sw := one(c.opts.Stride[0]), one(c.opts.Stride[1])
	ph, pw := c.opts.Pad[0], c.opts.Pad[1]
	dh, dw := one(c.opts.Dilate[0]), one(c.opts.Dilate[1])
	g := one(c.opts.Groups)
	oh := (c.h-1)*sh - 2*ph + dh*(c.kh-1) + c.opts.OutputPad[0] + 1
	ow := (c.w-1)*sw - 2*pw + dw*(c.kw-1) + c.opts.OutputPad[1] + 1
	cpg, opg := c.c/g, c.o/g
	out := make([]float64, c.n*c.o*oh*ow)
	for n := range c.n {
		for oc := range c.o {
			for i := range oh * ow {
				if bias != nil {
					out[(n*c.o+oc)*oh*ow+i] = bias[oc]
				}
			}
		}
		for ic := range c.c {
			grp := ic / cpg
			for y := range c.h {
				for xi := range c.w {
					v := x[((n*c.c+ic)*c.h+y)*c.w+xi]
					for oc := range opg {
						for ky := range c.kh {
							oy := y*sh - ph + ky*dh
							if oy < 0 || oy >= oh {
								continue
							}
							for kx := range c.kw {
								ox := xi*sw - pw + kx*dw
								if ox < 0 || ox >= ow {
									continue
								}
								out[((n*c.o+grp*opg+oc)*oh+oy)*ow+ox] += v * w[((ic*opg+oc)*c.kh+ky)*c.kw+kx]
							}
						}
					}
				}
			}
		}
	}
	return out, []int{c.n, c.o, oh, ow}
}

func confDeconv(e confEnv) {
	for i, c := range deconvCases {
		e.run(c.name, func(e confEnv) {
			g := max(c.opts.Groups, 1)
			x, xv := e.rand(uint64(2900+3*i), -1, 1, c.n, c.c, c.h, c.w)
			w, wv := e.rand(uint64(2901+3*i), -1, 1, c.c, c.o/g, c.kh, c.kw)
			var bias *nd.NDArray
			var bv []float64
			if c.bias {
				bias, bv = e.rand(uint64(2902+3*i), -1, 1, c.o)
			}
			want, shape := refDeconv(c, xv, wv, bv)
			e.check(nd.Conv2DTranspose(x, w, bias, c.opts), shape, want, confTolLongSum)
		})
	}
}

// gradDeconvCases checks Conv2DTranspose's gradients for x, w and b.
func gradDeconvCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range deconvCases {
		g := max(c.opts.Groups, 1)
		seed := 400 + 3*uint64(i)
		gc := gradCase{op: "Conv2DTranspose", name: c.name}
		x, w := []int{c.n, c.c, c.h, c.w}, []int{c.c, c.o / g, c.kh, c.kw}
		if c.bias {
			gc.in = func() []*nd.NDArray {
				return gradIn(gradSigned(dev, seed, x...), gradSigned(dev, seed+1, w...), gradSigned(dev, seed+2, c.o))
			}
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv2DTranspose(in[0], in[1], in[2], c.opts) }
		} else {
			gc.in = func() []*nd.NDArray { return gradIn(gradSigned(dev, seed, x...), gradSigned(dev, seed+1, w...)) }
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv2DTranspose(in[0], in[1], nil, c.opts) }
		}
		cases = append(cases, gc)
	}
	return cases
}
