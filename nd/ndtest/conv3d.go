package ndtest

// The cases for the ops of nd/conv3d.go: Conv3D, Conv3DTranspose and
// Pool3D.

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// conv3DCase is a Conv3D configuration: input [n, c, d, h, w], weight
// [o, c/groups, k[0], k[1], k[2]].
type conv3DCase struct {
	name          string
	n, c, d, h, w int
	o             int
	k             [3]int
	opts          nd.Conv3DOpts
	bias          bool
}

var conv3DCases = []conv3DCase{
	{name: "k3", n: 2, c: 2, d: 4, h: 5, w: 4, o: 3, k: [3]int{3, 3, 2}, bias: true},
	{name: "strided_padded", n: 1, c: 2, d: 5, h: 4, w: 5, o: 2, k: [3]int{2, 2, 3}, opts: nd.Conv3DOpts{Stride: [3]int{2, 1, 2}, Pad: [3]int{1, 1, 0}}},
	{name: "dilated_groups", n: 1, c: 4, d: 6, h: 4, w: 4, o: 4, k: [3]int{2, 2, 2}, opts: nd.Conv3DOpts{Dilate: [3]int{2, 1, 2}, Groups: 2}, bias: true},
}

// refConv3D is the direct 3-D cross-correlation of x with w (and bias).
func refConv3D(c conv3DCase, x, w, b []float64) ([]float64, []int) {
	g := max(c.opts.Groups, 1)
	s, p, dl := [3]int{}, c.opts.Pad, [3]int{}
	for i := range 3 {
		s[i], dl[i] = max(c.opts.Stride[i], 1), max(c.opts.Dilate[i], 1)
	}
	in := [3]int{c.d, c.h, c.w}
	var out [3]int
	for i := range 3 {
		out[i] = (in[i]+2*p[i]-dl[i]*(c.k[i]-1)-1)/s[i] + 1
	}
	cg, og := c.c/g, c.o/g
	y := make([]float64, c.n*c.o*out[0]*out[1]*out[2])
	at := 0
	for n := range c.n {
		for o := range c.o {
			for z := range out[0] {
				for r := range out[1] {
					for q := range out[2] {
						sum := 0.0
						if b != nil {
							sum = b[o]
						}
						for ci := range cg {
							ch := (o/og)*cg + ci
							for a := range c.k[0] {
								zi := z*s[0] - p[0] + a*dl[0]
								for bb := range c.k[1] {
									ri := r*s[1] - p[1] + bb*dl[1]
									for cc := range c.k[2] {
										qi := q*s[2] - p[2] + cc*dl[2]
										if zi < 0 || zi >= c.d || ri < 0 || ri >= c.h || qi < 0 || qi >= c.w {
											continue
										}
										xv := x[(((n*c.c+ch)*c.d+zi)*c.h+ri)*c.w+qi]
										wv := w[(((o*cg+ci)*c.k[0]+a)*c.k[1]+bb)*c.k[2]+cc]
										sum += xv * wv
									}
								}
							}
						}
						y[at] = sum
						at++
					}
				}
			}
		}
	}
	return y, []int{c.n, c.o, out[0], out[1], out[2]}
}

// refConv3DTranspose is the direct transposed 3-D convolution of x
// [n, c, in...] with w [c, o/groups, k...]: every input element adds its
// value times the kernel at its strided, dilated output positions.
func refConv3DTranspose(n, c int, in [3]int, x []float64, o int, k [3]int, w []float64, opts nd.Conv3DTransposeOpts) ([]float64, []int) {
	g := max(opts.Groups, 1)
	var s, d, out [3]int
	for i := range 3 {
		s[i], d[i] = max(opts.Stride[i], 1), max(opts.Dilate[i], 1)
		out[i] = (in[i]-1)*s[i] - 2*opts.Pad[i] + d[i]*(k[i]-1) + opts.OutputPad[i] + 1
	}
	cg, og := c/g, o/g
	y := make([]float64, n*o*out[0]*out[1]*out[2])
	for b := range n {
		for ci := range c {
			for z := range in[0] {
				for r := range in[1] {
					for q := range in[2] {
						xv := x[(((b*c+ci)*in[0]+z)*in[1]+r)*in[2]+q]
						for oo := range og {
							oc := (ci/cg)*og + oo
							for a := range k[0] {
								oz := z*s[0] - opts.Pad[0] + a*d[0]
								for bb := range k[1] {
									or := r*s[1] - opts.Pad[1] + bb*d[1]
									for cc := range k[2] {
										oq := q*s[2] - opts.Pad[2] + cc*d[2]
										if oz < 0 || oz >= out[0] || or < 0 || or >= out[1] || oq < 0 || oq >= out[2] {
											continue
										}
										wv := w[(((ci*og+oo)*k[0]+a)*k[1]+bb)*k[2]+cc]
										y[(((b*o+oc)*out[0]+oz)*out[1]+or)*out[2]+oq] += xv * wv
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return y, []int{n, o, out[0], out[1], out[2]}
}

// pool3DCases are Pool3D configurations on an input [1, 2, 5, 4, 6].
var pool3DCases = []struct {
	name string
	opts nd.Pool3DOpts
}{
	{"max", nd.Pool3DOpts{Type: nd.PoolMax, Kernel: [3]int{2, 2, 2}}},
	{"max_ceil_padded", nd.Pool3DOpts{Type: nd.PoolMax, Kernel: [3]int{3, 2, 3}, Stride: [3]int{2, 2, 2}, Pad: [3]int{1, 1, 1}, CeilMode: true}},
	{"avg", nd.Pool3DOpts{Type: nd.PoolAvg, Kernel: [3]int{2, 2, 3}, Stride: [3]int{1, 2, 3}}},
	{"avg_padded", nd.Pool3DOpts{Type: nd.PoolAvg, Kernel: [3]int{3, 3, 2}, Stride: [3]int{2, 1, 2}, Pad: [3]int{1, 1, 1}}},
	{"avg_exclude_ceil", nd.Pool3DOpts{Type: nd.PoolAvg, Kernel: [3]int{3, 2, 3}, Stride: [3]int{2, 2, 2}, Pad: [3]int{1, 1, 1}, CeilMode: true, ExcludePad: true}},
	{"global_avg", nd.Pool3DOpts{Type: nd.PoolAvg, Global: true}},
}

// refPool3D pools x [1, c, d, h, w] directly with PyTorch's rules.
func refPool3D(o nd.Pool3DOpts, x []float64, c int, in [3]int) ([]float64, []int) {
	k, s, p := o.Kernel, o.Stride, o.Pad
	if o.Global {
		k, s, p = in, in, [3]int{}
	}
	var out [3]int
	for i := range 3 {
		if s[i] == 0 {
			s[i] = k[i]
		}
		span := in[i] + 2*p[i] - k[i]
		out[i] = span/s[i] + 1
		if o.CeilMode {
			out[i] = (span+s[i]-1)/s[i] + 1
			if (out[i]-1)*s[i] >= in[i]+p[i] {
				out[i]--
			}
		}
	}
	var y []float64
	for ch := range c {
		for z := range out[0] {
			for r := range out[1] {
				for q := range out[2] {
					lo, hi := [3]int{z * s[0], r * s[1], q * s[2]}, [3]int{}
					size := 1
					for i := range 3 {
						lo[i] -= p[i]
						hi[i] = min(lo[i]+k[i], in[i]+p[i])
						size *= hi[i] - lo[i]
					}
					best, sum, count := math.Inf(-1), 0.0, 0
					for a := max(lo[0], 0); a < min(hi[0], in[0]); a++ {
						for b := max(lo[1], 0); b < min(hi[1], in[1]); b++ {
							for cc := max(lo[2], 0); cc < min(hi[2], in[2]); cc++ {
								v := x[((ch*in[0]+a)*in[1]+b)*in[2]+cc]
								best, sum = math.Max(best, v), sum+v
								count++
							}
						}
					}
					switch {
					case o.Type == nd.PoolMax:
						y = append(y, best)
					case o.ExcludePad:
						y = append(y, sum/float64(count))
					default:
						y = append(y, sum/float64(size))
					}
				}
			}
		}
	}
	return y, []int{1, c, out[0], out[1], out[2]}
}

func confConv3D(e confEnv) {
	for i, c := range conv3DCases {
		e.run(c.name, func(e confEnv) {
			g := max(c.opts.Groups, 1)
			x, xv := e.rand(uint64(2300+3*i), -1, 1, c.n, c.c, c.d, c.h, c.w)
			w, wv := e.rand(uint64(2301+3*i), -1, 1, c.o, c.c/g, c.k[0], c.k[1], c.k[2])
			var bias *nd.NDArray
			var bv []float64
			if c.bias {
				bias, bv = e.rand(uint64(2302+3*i), -1, 1, c.o)
			}
			want, shape := refConv3D(c, xv, wv, bv)
			e.check(nd.Conv3D(x, w, bias, c.opts), shape, want, confTolLongSum)
		})
	}
	e.run("Conv3DTranspose", func(e confEnv) {
		opts := nd.Conv3DTransposeOpts{Stride: [3]int{2, 1, 2}, Pad: [3]int{1, 0, 1}, OutputPad: [3]int{1, 0, 0}, Groups: 2}
		x, xv := e.rand(2500, -1, 1, 1, 4, 3, 3, 2)
		w, wv := e.rand(2501, -1, 1, 4, 1, 2, 2, 3)
		want, shape := refConv3DTranspose(1, 4, [3]int{3, 3, 2}, xv, 2, [3]int{2, 2, 3}, wv, opts)
		e.check(nd.Conv3DTranspose(x, w, nil, opts), shape, want, confTolLongSum)
	})
	for i, c := range pool3DCases {
		e.run("Pool3D_"+c.name, func(e confEnv) {
			x, xv := e.rand(uint64(2400+i), -1, 1, 1, 2, 5, 4, 6)
			want, shape := refPool3D(c.opts, xv, 2, [3]int{5, 4, 6})
			e.check(nd.Pool3D(x, c.opts), shape, want, confTolDefault)
		})
	}
}

// gradConv3DCases checks Conv3D's and Conv3DTranspose's gradients for x,
// w and b, and Pool3D's.
func gradConv3DCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range conv3DCases[1:] {
		g := max(c.opts.Groups, 1)
		seed := 330 + 3*uint64(i)
		x, w := []int{1, c.c, c.d, c.h, c.w}, []int{c.o, c.c / g, c.k[0], c.k[1], c.k[2]}
		cases = append(cases, gradCase{op: "Conv3D", name: c.name,
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, seed, x...), gradSigned(dev, seed+1, w...), gradSigned(dev, seed+2, c.o))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Conv3D(in[0], in[1], in[2], c.opts) }})
	}
	cases = append(cases, gradCase{op: "Conv3DTranspose", name: "strided_groups",
		in: func() []*nd.NDArray {
			return gradIn(gradSigned(dev, 345, 1, 4, 2, 2, 2), gradSigned(dev, 346, 4, 1, 2, 2, 2), gradSigned(dev, 347, 2))
		},
		f: func(in []*nd.NDArray) *nd.NDArray {
			return nd.Conv3DTranspose(in[0], in[1], in[2], nd.Conv3DTransposeOpts{Stride: [3]int{2, 1, 1}, Pad: [3]int{1, 0, 0}, OutputPad: [3]int{1, 0, 0}, Groups: 2})
		}})
	for _, c := range pool3DCases {
		if c.opts.Type == nd.PoolMax { // ties and kinks: checked by the goldens instead
			continue
		}
		cases = append(cases, gradCase{op: "Pool3D", name: c.name,
			in: func() []*nd.NDArray { return gradIn(gradSigned(dev, 340, 1, 2, 5, 4, 6)) },
			f:  func(in []*nd.NDArray) *nd.NDArray { return nd.Pool3D(in[0], c.opts) }})
	}
	return cases
}
