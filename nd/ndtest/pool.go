package ndtest

// The cases for the ops of nd/pool.go: Pool2D and its wrappers
// (MaxPool2D, AvgPool2D, GlobalMaxPool2D, GlobalAvgPool2D).

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// refPoolOut is the pooled size along one axis with PyTorch's rules: in
// ceil mode a last window that would start in the padding is dropped.
func refPoolOut(in, k, s, p int, ceil bool) int {
	span := in + 2*p - k
	if !ceil {
		return span/s + 1
	}
	out := (span+s-1)/s + 1
	if (out-1)*s >= in+p {
		out--
	}
	return out
}

// refPool2D pools x [n, c, h, w] with PyTorch's semantics: max windows
// ignore the padding; the average divisor is the window clipped to the
// padded input when padding is counted, and the window clipped to the
// input otherwise.
func refPool2D(x []float64, shape []int, o nd.PoolOpts) ([]float64, []int) {
	n, c, h, w := shape[0], shape[1], shape[2], shape[3]
	kh, kw, ph, pw := o.Kernel[0], o.Kernel[1], o.Pad[0], o.Pad[1]
	if o.Global {
		kh, kw, ph, pw = h, w, 0, 0
	}
	sh, sw := o.Stride[0], o.Stride[1]
	if sh == 0 {
		sh = kh
	}
	if sw == 0 {
		sw = kw
	}
	oh, ow := refPoolOut(h, kh, sh, ph, o.CeilMode), refPoolOut(w, kw, sw, pw, o.CeilMode)
	out := make([]float64, n*c*oh*ow)
	for m := range n * c {
		plane := x[m*h*w : (m+1)*h*w]
		for y := range oh {
			for xo := range ow {
				y0, x0 := y*sh-ph, xo*sw-pw
				y1, x1 := min(y0+kh, h+ph), min(x0+kw, w+pw)
				padded := (y1 - y0) * (x1 - x0)
				y0, x0, y1, x1 = max(y0, 0), max(x0, 0), min(y1, h), min(x1, w)
				acc := math.Inf(-1)
				if o.Type == nd.PoolAvg {
					acc = 0
				}
				for iy := y0; iy < y1; iy++ {
					for ix := x0; ix < x1; ix++ {
						if o.Type == nd.PoolAvg {
							acc += plane[iy*w+ix]
						} else {
							acc = math.Max(acc, plane[iy*w+ix])
						}
					}
				}
				if o.Type == nd.PoolAvg {
					if !o.ExcludePad {
						acc /= float64(padded)
					} else {
						acc /= float64((y1 - y0) * (x1 - x0))
					}
				}
				out[(m*oh+y)*ow+xo] = acc
			}
		}
	}
	return out, []int{n, c, oh, ow}
}

// confPool2D checks Pool2D (max and average, stride, padding, ceil mode,
// counting the padding or not, global) and its wrappers.
func confPool2D(e confEnv) {
	type pc struct {
		name  string
		shape []int
		o     nd.PoolOpts
	}
	var cases []pc
	for _, typ := range []struct {
		name string
		t    nd.PoolOpts
	}{{"max", nd.PoolOpts{Type: nd.PoolMax}}, {"avg", nd.PoolOpts{Type: nd.PoolAvg, ExcludePad: true}}, {"avgpad", nd.PoolOpts{Type: nd.PoolAvg}}} {
		geo := []pc{
			{"k2s2", []int{2, 3, 6, 6}, nd.PoolOpts{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}},
			{"k2_default_stride", []int{1, 2, 5, 4}, nd.PoolOpts{Kernel: [2]int{2, 2}}},
			{"k3s1p1", []int{2, 2, 5, 5}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Pad: [2]int{1, 1}}},
			{"k3s2p1", []int{2, 2, 7, 7}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
			{"k3s2_ceil", []int{1, 2, 6, 6}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, CeilMode: true}},
			{"k3s2p1_ceil", []int{1, 2, 6, 6}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true}},
			// The ceil-mode window that would start in the padding is dropped:
			// 5 rows, k2 s2 p1 gives 3 outputs, not 4.
			{"k2s2p1_ceil_drop", []int{1, 2, 5, 5}, nd.PoolOpts{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true}},
			{"k2s2_ceil_partial", []int{2, 1, 5, 7}, nd.PoolOpts{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, CeilMode: true}},
			{"nonsquare", []int{2, 3, 6, 9}, nd.PoolOpts{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Pad: [2]int{1, 1}}},
			{"global", []int{2, 3, 5, 7}, nd.PoolOpts{Global: true}},
			{"global_kernel_ignored", []int{2, 3, 4, 4}, nd.PoolOpts{Global: true, Kernel: [2]int{2, 2}}},
		}
		for _, g := range geo {
			g.o.Type, g.o.ExcludePad = typ.t.Type, typ.t.ExcludePad
			g.name = typ.name + "_" + g.name
			cases = append(cases, g)
		}
	}
	tol := func(o nd.PoolOpts) confTols {
		if o.Type == nd.PoolMax {
			return confTolExact
		}
		return confTolDefault
	}
	for i, c := range cases {
		e.run("Pool2D/"+c.name, func(e confEnv) {
			x, xv := e.rand(uint64(1100+i), -1, 1, c.shape...)
			want, shape := refPool2D(xv, c.shape, c.o)
			e.check(nd.Pool2D(x, c.o), shape, want, tol(c.o))
		})
	}
	wrappers := []struct {
		name string
		op   func(x *nd.NDArray) *nd.NDArray
		o    nd.PoolOpts
	}{
		{"MaxPool2D", func(x *nd.NDArray) *nd.NDArray { return nd.MaxPool2D(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}) },
			nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
		{"AvgPool2D", func(x *nd.NDArray) *nd.NDArray { return nd.AvgPool2D(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}) },
			nd.PoolOpts{Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
		{"GlobalMaxPool2D", nd.GlobalMaxPool2D, nd.PoolOpts{Type: nd.PoolMax, Global: true}},
		{"GlobalAvgPool2D", nd.GlobalAvgPool2D, nd.PoolOpts{Type: nd.PoolAvg, Global: true}},
	}
	for i, c := range wrappers {
		e.run(c.name, func(e confEnv) {
			shape := []int{2, 3, 7, 6}
			x, xv := e.rand(uint64(1200+i), -1, 1, shape...)
			want, oshape := refPool2D(xv, shape, c.o)
			e.check(c.op(x), oshape, want, tol(c.o))
		})
	}
	// Adaptive average pooling: 4×4 → 2×2 (2×2 windows), and 3×3 → 2×2
	// with overlapping windows rows/columns [0, 2) and [1, 3).
	e.run("AdaptiveAvgPool2D", func(e confEnv) {
		v := make([]float64, 16)
		for i := range v {
			v[i] = float64(i)
		}
		e.check(nd.AdaptiveAvgPool2D(e.arr(v, 1, 1, 4, 4), 2, 2), []int{1, 1, 2, 2}, []float64{2.5, 4.5, 10.5, 12.5}, confTolDefault)
		e.check(nd.AdaptiveAvgPool2D(e.arr(v[:9], 1, 1, 3, 3), 2, 2), []int{1, 1, 2, 2}, []float64{2, 3, 5, 6}, confTolDefault)
	})
}

// gradPoolCases checks Pool2D (max and average) with stride, padding,
// CeilMode and ExcludePad, global pooling, and the MaxPool2D,
// AvgPool2D, GlobalMaxPool2D and GlobalAvgPool2D shorthands. Max-pool
// inputs are permutations of distinct values, so no window has a tie.
func gradPoolCases(dev ctx.Context) []gradCase {
	type pc struct {
		name  string
		shape []int
		o     nd.PoolOpts
	}
	k := func(h, w int) [2]int { return [2]int{h, w} }
	windows := []pc{
		{"2x2/stride-2", []int{1, 2, 4, 4}, nd.PoolOpts{Kernel: k(2, 2)}},
		{"2x2/stride-1-overlapping", []int{1, 2, 4, 4}, nd.PoolOpts{Kernel: k(2, 2), Stride: k(1, 1)}},
		{"3x3/stride-1", []int{2, 1, 4, 4}, nd.PoolOpts{Kernel: k(3, 3), Stride: k(1, 1)}},
		{"3x3/stride-2/pad-1", []int{1, 2, 5, 5}, nd.PoolOpts{Kernel: k(3, 3), Stride: k(2, 2), Pad: k(1, 1)}},
		{"3x3/stride-1/pad-1", []int{1, 2, 4, 4}, nd.PoolOpts{Kernel: k(3, 3), Stride: k(1, 1), Pad: k(1, 1)}},
		// 5 = 2+2+1: floor mode drops the last column and row, ceil mode
		// adds a partial window there.
		{"2x2/stride-2/floor-drops-border", []int{1, 2, 5, 5}, nd.PoolOpts{Kernel: k(2, 2)}},
		{"2x2/stride-2/ceil", []int{1, 2, 5, 5}, nd.PoolOpts{Kernel: k(2, 2), CeilMode: true}},
		{"3x3/stride-2/pad-1/ceil", []int{1, 2, 4, 4}, nd.PoolOpts{Kernel: k(3, 3), Stride: k(2, 2), Pad: k(1, 1), CeilMode: true}},
		{"non-square", []int{1, 2, 4, 5}, nd.PoolOpts{Kernel: k(2, 3), Stride: k(1, 2), Pad: k(1, 1)}},
		{"global", []int{2, 3, 3, 3}, nd.PoolOpts{Global: true}},
	}
	var all []pc
	for _, w := range windows {
		m := w
		m.name = "max/" + w.name
		m.o.Type = nd.PoolMax
		all = append(all, m)
		a := w
		a.name = "avg/" + w.name
		a.o.Type = nd.PoolAvg
		a.o.ExcludePad = true
		all = append(all, a)
		if w.o.Pad != [2]int{} || w.o.CeilMode {
			a.name = "avg/" + w.name + "/count-include-pad"
			a.o.ExcludePad = false
			all = append(all, a)
		}
	}
	var cases []gradCase
	for i, c := range all {
		seed := 200 + uint64(i)
		in := func() []*nd.NDArray { return gradIn(gradDistinct(dev, seed, c.shape...)) }
		cases = append(cases, gradCase{
			op: "Pool2D", name: c.name, in: in,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Pool2D(in[0], c.o) },
		})
	}
	x := func() []*nd.NDArray { return gradIn(gradDistinct(dev, 250, 1, 2, 5, 5)) }
	cases = append(cases,
		gradCase{op: "MaxPool2D", name: "3x3/stride-2/pad-1", in: x,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.MaxPool2D(in[0], k(3, 3), k(2, 2), k(1, 1)) }},
		gradCase{op: "AvgPool2D", name: "3x3/stride-2/pad-1", in: x,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.AvgPool2D(in[0], k(3, 3), k(2, 2), k(1, 1)) }},
		gradCase{op: "GlobalMaxPool2D", name: "4-D", in: x,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.GlobalMaxPool2D(in[0]) }},
		gradCase{op: "GlobalAvgPool2D", name: "4-D", in: x,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.GlobalAvgPool2D(in[0]) }},
		gradCase{op: "AdaptiveAvgPool2D", name: "5x5-to-3x2", in: x,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.AdaptiveAvgPool2D(in[0], 3, 2) }},
		gradCase{op: "AdaptiveAvgPool2D", name: "5x5-to-7x7", in: x,
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.AdaptiveAvgPool2D(in[0], 7, 7) }},
	)
	return cases
}
