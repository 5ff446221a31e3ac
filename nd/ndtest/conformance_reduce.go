package ndtest

import (
	"fmt"
	"math"

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
			e.check(op(x, c.axes...), drop, want, confTolDefault)
		})
	}
}

// confConst returns n copies of v.
func confConst(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
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

// refSoftmax computes softmax (or log-softmax) along axis, subtracting the
// maximum first.
func refSoftmax(x []float64, shape []int, axis int, log bool) []float64 {
	ax := refAxis(axis, len(shape))
	outer, n, inner := refNumel(shape[:ax]), shape[ax], refNumel(shape[ax+1:])
	out := make([]float64, len(x))
	for o := range outer {
		for i := range inner {
			at := func(k int) int { return (o*n+k)*inner + i }
			m := math.Inf(-1)
			for k := range n {
				m = math.Max(m, x[at(k)])
			}
			s := 0.0
			for k := range n {
				s += math.Exp(x[at(k)] - m)
			}
			for k := range n {
				if log {
					out[at(k)] = x[at(k)] - m - math.Log(s)
				} else {
					out[at(k)] = math.Exp(x[at(k)]-m) / s
				}
			}
		}
	}
	return out
}

// confSoftmax checks Softmax and LogSoftmax along several axes of 2-D and
// 3-D arrays, with moderate inputs and with inputs around ±1000, where a
// formula without the maximum subtracted overflows.
func confSoftmax(e confEnv) {
	cases := []struct {
		shape  []int
		axis   int
		offset float64
	}{
		{[]int{4, 7}, 1, 0},
		{[]int{4, 7}, -1, 0},
		{[]int{4, 7}, 0, 0},
		{[]int{2, 3, 5}, 1, 0},
		{[]int{2, 3, 5}, -1, 0},
		{[]int{2, 3, 5}, 0, 0},
		{[]int{4, 7}, 1, 1000},
		{[]int{2, 3, 5}, -1, 1000},
		{[]int{2, 3, 5}, 1, -1000},
		{[]int{1, 1}, -1, 0},
	}
	for _, log := range []bool{false, true} {
		name, op := "Softmax", nd.Softmax
		if log {
			name, op = "LogSoftmax", nd.LogSoftmax
		}
		e.run(name, func(e confEnv) {
			for i, c := range cases {
				e.run(fmt.Sprintf("%s_axis%d_off%g", confDims(c.shape), c.axis, c.offset), func(e confEnv) {
					x, xv := e.rand(uint64(500+i), c.offset-3, c.offset+3, c.shape...)
					e.check(op(x, c.axis), c.shape, refSoftmax(xv, c.shape, c.axis, log), confTolDefault)
				})
			}
			e.run("Extremes", func(e confEnv) {
				v := []float64{1000, 1000, -1000, 0, 0, 0}
				e.check(op(e.arr(v, 2, 3), 1), []int{2, 3}, refSoftmax(v, []int{2, 3}, 1, log), confTolDefault)
			})
		})
	}
}

// refPick gathers x[..., clip(idx), ...] along axis.
func refPick(x []float64, shape []int, idx []float64, axis int) []float64 {
	ax := refAxis(axis, len(shape))
	outer, n, inner := refNumel(shape[:ax]), shape[ax], refNumel(shape[ax+1:])
	out := make([]float64, outer*inner)
	for o := range outer {
		for i := range inner {
			k := int(idx[o*inner+i])
			k = min(max(k, 0), n-1)
			out[o*inner+i] = x[(o*n+k)*inner+i]
		}
	}
	return out
}

// confPick checks Pick along axis 1, 0 and -1 with in-range and clipped
// out-of-range indices, and OneHot with out-of-range indices.
func confPick(e confEnv) {
	cases := []struct {
		shape []int
		axis  int
		idx   []float64
	}{
		{[]int{4, 5}, 1, []float64{0, 4, 2, 3}},
		{[]int{4, 5}, 1, []float64{-1, 7, 5, -3}}, // clipped to 0 and 4
		{[]int{4, 5}, 0, []float64{3, 0, 1, 2, 3}},
		{[]int{4, 5}, 0, []float64{4, -1, 9, 2, 0}},
		{[]int{4, 5}, -1, []float64{1, 1, 4, 0}},
		{[]int{2, 3, 4}, 1, []float64{0, 1, 2, 5, 2, 1, 0, -2}},
		{[]int{2, 3, 4}, 2, []float64{3, 0, 1, 2, 3, 3}},
	}
	for i, c := range cases {
		e.run(fmt.Sprintf("Pick_%s_axis%d_%d", confDims(c.shape), c.axis, i), func(e confEnv) {
			x, xv := e.rand(uint64(600+i), -2, 2, c.shape...)
			ax := refAxis(c.axis, len(c.shape))
			ishape := append(append([]int{}, c.shape[:ax]...), c.shape[ax+1:]...)
			got := nd.Pick(x, e.arr(c.idx, ishape...), c.axis)
			e.check(got, ishape, refPick(xv, c.shape, c.idx, c.axis), confTolExact)
		})
	}
	oneHot := []struct {
		idx     []float64
		shape   []int
		depth   int
		on, off float64
	}{
		{[]float64{0, 2, 4, 1}, []int{4}, 5, 1, 0},
		{[]float64{-1, 5, 2, 7}, []int{4}, 5, 1, 0}, // out of range: all off
		{[]float64{0, 1, 2, 2, 1, 0}, []int{2, 3}, 3, 2.5, -1},
		{[]float64{0}, []int{1}, 1, 1, 0},
	}
	for i, c := range oneHot {
		e.run(fmt.Sprintf("OneHot_%d", i), func(e confEnv) {
			want := make([]float64, 0, len(c.idx)*c.depth)
			for _, k := range c.idx {
				for d := range c.depth {
					want = append(want, refOnOff(int(k) == d, c.on, c.off))
				}
			}
			got := nd.OneHot(e.arr(c.idx, c.shape...), c.depth, c.on, c.off)
			e.check(got, append(append([]int{}, c.shape...), c.depth), want, confTolExact)
		})
	}
}

func refOnOff(c bool, on, off float64) float64 {
	if c {
		return on
	}
	return off
}
