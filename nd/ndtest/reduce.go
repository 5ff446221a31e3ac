package ndtest

// The cases for the ops of nd/reduce.go: Sum, Mean, Max and Min (with
// and without kept dims) and ArgMax.

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confReduceCases are the shapes and axes every reduction runs on; nil axes
// reduce over everything.
var confReduceCases = []struct {
	shape []int
	axes  []int
}{
	{[]int{5}, nil},
	{[]int{5}, []int{0}},
	{[]int{3, 4}, nil},
	{[]int{3, 4}, []int{0}},
	{[]int{3, 4}, []int{1}},
	{[]int{3, 4}, []int{-1}},
	{[]int{3, 4}, []int{0, 1}},
	{[]int{7, 3}, []int{0}}, // axis 0 of [N, C]
	{[]int{2, 3, 4}, []int{1}},
	{[]int{2, 3, 4}, []int{2}},
	{[]int{2, 3, 4}, []int{0, 2}},
	{[]int{2, 3, 4}, []int{-1, -3}},
	{[]int{2, 3, 4, 5}, nil},
	{[]int{2, 3, 4, 5}, []int{0, 2, 3}}, // per-channel statistics of NCHW
	{[]int{2, 3, 4, 5}, []int{1}},
	{[]int{2, 3, 4, 5}, []int{3}},
	{[]int{2, 3, 4, 5}, []int{-2}},
	{[]int{2, 3, 4, 5}, []int{1, 3}},
	{[]int{2, 3, 4, 5}, []int{2, 0}},
	{[]int{1, 3, 1, 4}, []int{0, 2}}, // size-1 axes
}

// refReduceKind selects the reduction of refReduce.
type refReduceKind int

const (
	refSum refReduceKind = iota
	refMean
	refMax
	refMin
)

// refReduce reduces x (of shape) over axes (all when empty) and returns
// the values in the keepdims layout together with the keepdims shape and
// the shape with the reduced axes removed.
func refReduce(kind refReduceKind, x []float64, shape, axes []int) (vals []float64, keep, drop []int) {
	red := make([]bool, len(shape))
	for _, a := range axes {
		red[refAxis(a, len(shape))] = true
	}
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
	}
	keep = make([]int, len(shape))
	drop = []int{}
	count := 1
	for d, s := range shape {
		if red[d] {
			keep[d] = 1
			count *= s
		} else {
			keep[d] = s
			drop = append(drop, s)
		}
	}
	vals = make([]float64, refNumel(keep))
	for i := range vals {
		switch kind {
		case refMax:
			vals[i] = math.Inf(-1)
		case refMin:
			vals[i] = math.Inf(1)
		}
	}
	ks := refStrides(keep)
	idx := make([]int, len(shape))
	for i, v := range x {
		refUnravel(i, shape, idx)
		o := 0
		for d := range idx {
			if !red[d] {
				o += idx[d] * ks[d]
			}
		}
		switch kind {
		case refSum, refMean:
			vals[o] += v
		case refMax:
			vals[o] = math.Max(vals[o], v)
		case refMin:
			vals[o] = math.Min(vals[o], v)
		}
	}
	if kind == refMean {
		for i := range vals {
			vals[i] /= float64(count)
		}
	}
	return vals, keep, drop
}

// confReduce checks Sum, Mean, Max and Min with and without kept dims on
// every case of confReduceCases, then long float32 sums.
func confReduce(e confEnv) {
	ops := []struct {
		name string
		kind refReduceKind
		op   func(*nd.NDArray, ...int) *nd.NDArray
		keep bool
		tol  confTols
	}{
		{"Sum", refSum, nd.Sum, false, confTolDefault},
		{"SumKeepDims", refSum, nd.SumKeepDims, true, confTolDefault},
		{"Mean", refMean, nd.Mean, false, confTolDefault},
		{"MeanKeepDims", refMean, nd.MeanKeepDims, true, confTolDefault},
		{"Max", refMax, nd.Max, false, confTolExact},
		{"MaxKeepDims", refMax, nd.MaxKeepDims, true, confTolExact},
		{"Min", refMin, nd.Min, false, confTolExact},
		{"MinKeepDims", refMin, nd.MinKeepDims, true, confTolExact},
	}
	for _, o := range ops {
		e.run(o.name, func(e confEnv) {
			for i, c := range confReduceCases {
				e.run(fmt.Sprintf("%s_axes%v", confDims(c.shape), c.axes), func(e confEnv) {
					x, xv := e.rand(uint64(200+i), -2, 2, c.shape...)
					want, keep, drop := refReduce(o.kind, xv, c.shape, c.axes)
					shape := drop
					if o.keep {
						shape = keep
					}
					e.check(o.op(x, c.axes...), shape, want, o.tol)
				})
			}
		})
	}

	// Long sums: float32 accumulation must be blocked, pairwise or done in
	// float64. Summing 300007 copies of float32(0.1) one after the other in
	// float32 is off by 2.6e-3 relative, far outside rtol 1e-4, while any
	// of those schemes stays within ~1e-6.
	const n = 300007
	long := []struct {
		name   string
		vals   func(e confEnv) []float64
		shape  []int
		axes   []int
		isMean bool
	}{
		{"SumConst", func(e confEnv) []float64 { return e.round(confConst(n, 0.1)) }, []int{n}, nil, false},
		{"SumUniform", func(e confEnv) []float64 { return e.round(confUniform(300, n, 0, 1)) }, []int{n}, nil, false},
		{"MeanConst", func(e confEnv) []float64 { return e.round(confConst(n, 0.1)) }, []int{n}, nil, true},
		{"SumAxis0", func(e confEnv) []float64 { return e.round(confConst(3*100003, 0.1)) }, []int{100003, 3}, []int{0}, false},
		{"SumAxis1", func(e confEnv) []float64 { return e.round(confConst(3*100003, 0.1)) }, []int{3, 100003}, []int{1}, false},
	}
	for _, c := range long {
		e.run("Long"+c.name, func(e confEnv) {
			v := c.vals(e)
			x := e.arr(v, c.shape...)
			kind, op := refSum, nd.Sum
			if c.isMean {
				kind, op = refMean, nd.Mean
			}
			want, _, drop := refReduce(kind, v, c.shape, c.axes)
			for i := range want {
				want[i] = roundTo(e.dt, want[i]) // beyond Float16's range: ±Inf
			}
			e.check(op(x, c.axes...), drop, want, confTolDefault)
		})
	}
}

// refArgMax returns the index of the first maximum along axis and the
// shape without that axis.
func refArgMax(x []float64, shape []int, axis int) ([]float64, []int) {
	ax := refAxis(axis, len(shape))
	outer, n, inner := refNumel(shape[:ax]), shape[ax], refNumel(shape[ax+1:])
	out := make([]float64, outer*inner)
	for o := range outer {
		for i := range inner {
			best, arg := math.Inf(-1), 0
			for k := range n {
				if v := x[(o*n+k)*inner+i]; v > best {
					best, arg = v, k
				}
			}
			out[o*inner+i] = float64(arg)
		}
	}
	drop := append(append([]int{}, shape[:ax]...), shape[ax+1:]...)
	return out, drop
}

// confArgMax checks ArgMax along every axis of a 3-D array of small
// integers (so that ties are common and the first maximum must win), and
// on a row of equal values.
func confArgMax(e confEnv) {
	if !e.dtypeSupported() {
		e.Skipf("SKIPPED: %v cannot hold ArgMax's Int64 result", e.dev)
	}
	shape := []int{3, 4, 5}
	xv := confInts(400, refNumel(shape), 0, 3)
	for _, axis := range []int{0, 1, 2, -1, -3} {
		e.run(fmt.Sprintf("axis%d", axis), func(e confEnv) {
			want, drop := refArgMax(xv, shape, axis)
			e.checkAs(nd.ArgMax(e.arr(xv, shape...), axis), nd.Int64, drop, want, confTolExact)
		})
	}
	e.run("AllEqual", func(e confEnv) {
		v := []float64{2, 2, 2, 2, -1, 5, 5, 0}
		e.checkAs(nd.ArgMax(e.arr(v, 2, 4), 1), nd.Int64, []int{2}, []float64{0, 1}, confTolExact)
	})
	e.run("Random", func(e confEnv) {
		x, v := e.rand(401, -1, 1, 6, 33)
		want, drop := refArgMax(v, []int{6, 33}, 1)
		e.checkAs(nd.ArgMax(x, 1), nd.Int64, drop, want, confTolExact)
	})
}

// gradReduceShapes are the axis cases every reduction is checked on, from 1-D
// to 4-D.
var gradReduceShapes = []struct {
	name  string
	shape []int
	axes  []int
}{
	{"1-D/all", []int{7}, nil},
	{"2-D/all", []int{3, 4}, nil},
	{"2-D/axis-0", []int{3, 4}, []int{0}},
	{"2-D/axis-1", []int{3, 4}, []int{1}},
	{"2-D/axes-0-1", []int{3, 4}, []int{0, 1}},
	{"3-D/axis-1", []int{2, 3, 4}, []int{1}},
	{"3-D/axes-0-2", []int{2, 3, 4}, []int{0, 2}},
	{"3-D/axis-neg1", []int{2, 3, 4}, []int{-1}},
	{"3-D/axes-neg3-neg2", []int{2, 3, 4}, []int{-3, -2}},
	{"4-D/all", []int{2, 3, 2, 3}, nil},
	{"4-D/axes-0-2-3", []int{2, 3, 2, 3}, []int{0, 2, 3}},
	{"4-D/axes-1-3", []int{2, 3, 2, 3}, []int{1, 3}},
}

// gradReduceCases checks Sum, Mean, Max and Min and their KeepDims forms
// over all axes, one axis, several axes and negative axes. Max and Min get
// inputs without ties.
func gradReduceCases(dev ctx.Context) []gradCase {
	ops := []struct {
		name string
		f    func(x *nd.NDArray, axes ...int) *nd.NDArray
		ties bool // whether the op's gradient is undefined at ties
	}{
		{"Sum", nd.Sum, false},
		{"SumKeepDims", nd.SumKeepDims, false},
		{"Mean", nd.Mean, false},
		{"MeanKeepDims", nd.MeanKeepDims, false},
		{"Max", nd.Max, true},
		{"MaxKeepDims", nd.MaxKeepDims, true},
		{"Min", nd.Min, true},
		{"MinKeepDims", nd.MinKeepDims, true},
	}
	var cases []gradCase
	for _, op := range ops {
		for i, s := range gradReduceShapes {
			seed := 100 + uint64(i)
			in := func() []*nd.NDArray { return gradIn(gradSigned(dev, seed, s.shape...)) }
			if op.ties {
				in = func() []*nd.NDArray { return gradIn(gradDistinct(dev, seed, s.shape...)) }
			}
			cases = append(cases, gradCase{
				op: op.name, name: s.name, in: in,
				f: func(in []*nd.NDArray) *nd.NDArray { return op.f(in[0], s.axes...) },
			})
		}
	}
	// A reduction whose result feeds a nonlinear op, so that the incoming
	// gradient is not uniform across the reduced positions' outputs.
	cases = append(cases,
		gradCase{
			op: "Mean", name: "3-D/axis-1/then-square",
			in: func() []*nd.NDArray { return gradIn(gradSigned(dev, 120, 2, 3, 4)) },
			f:  func(in []*nd.NDArray) *nd.NDArray { return nd.Square(nd.Mean(in[0], 1)) },
		},
		gradCase{
			op: "MaxKeepDims", name: "2-D/axis-1/then-sub",
			in: func() []*nd.NDArray { return gradIn(gradDistinct(dev, 121, 3, 5)) },
			// The softmax-style shift x - max(x): the gradient flows
			// through both paths.
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Exp(nd.Sub(in[0], nd.MaxKeepDims(in[0], 1))) },
		},
	)
	return cases
}
