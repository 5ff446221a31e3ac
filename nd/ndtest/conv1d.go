package ndtest

// The cases for the ops of nd/conv1d.go: Conv1D.

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// conv1DCases are Conv1D configurations: input [n, c, w], weight
// [o, c/groups, k]. Each is checked against refConv2D over a height of one.
var conv1DCases = []struct {
	name    string
	n, c, w int
	o, k    int
	opts    nd.Conv1DOpts
	bias    bool
}{
	{name: "k3", n: 2, c: 3, w: 9, o: 4, k: 3, bias: true},
	{name: "pad1_stride2", n: 2, c: 3, w: 9, o: 2, k: 3, opts: nd.Conv1DOpts{Pad: 1, Stride: 2}},
	{name: "dilate2", n: 1, c: 2, w: 10, o: 3, k: 3, opts: nd.Conv1DOpts{Dilate: 2, Pad: 2}, bias: true},
	{name: "groups2", n: 2, c: 4, w: 7, o: 6, k: 2, opts: nd.Conv1DOpts{Groups: 2}, bias: true},
	{name: "k1", n: 3, c: 5, w: 4, o: 2, k: 1},
}

func confConv1D(e confEnv) {
	for i, c := range conv1DCases {
		e.run(c.name, func(e confEnv) {
			g := max(c.opts.Groups, 1)
			x, xv := e.rand(uint64(1900+3*i), -1, 1, c.n, c.c, c.w)
			w, wv := e.rand(uint64(1901+3*i), -1, 1, c.o, c.c/g, c.k)
			var bias *nd.NDArray
			var bv []float64
			if c.bias {
				bias, bv = e.rand(uint64(1902+3*i), -1, 1, c.o)
			}
			ref := confConvCase{n: c.n, c: c.c, h: 1, w: c.w, o: c.o, kh: 1, kw: c.k, opts: nd.ConvOpts{
				Stride: [2]int{1, c.opts.Stride}, Pad: [2]int{0, c.opts.Pad}, Dilate: [2]int{1, c.opts.Dilate}, Groups: c.opts.Groups}}
			want, shape := refConv2D(ref, xv, wv, bv)
			e.check(nd.Conv1D(x, w, bias, c.opts), []int{shape[0], shape[1], shape[3]}, want, confTolLongSum)
		})
	}
}

// gradConv1DCases checks Conv1D's gradients for x, w and b.
func gradConv1DCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range conv1DCases {
		g := max(c.opts.Groups, 1)
		seed := 300 + 3*uint64(i)
		gc := gradCase{op: "Conv1D", name: c.name}
		x, w := []int{min(c.n, 2), c.c, c.w}, []int{c.o, c.c / g, c.k}
		if c.bias {
			gc.in = func() []*nd.NDArray {
				return gradIn(gradSigned(dev, seed, x...), gradSigned(dev, seed+1, w...), gradSigned(dev, seed+2, c.o))
			}
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv1D(in[0], in[1], in[2], c.opts) }
		} else {
			gc.in = func() []*nd.NDArray { return gradIn(gradSigned(dev, seed, x...), gradSigned(dev, seed+1, w...)) }
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv1D(in[0], in[1], nil, c.opts) }
		}
		cases = append(cases, gc)
	}
	return cases
}
