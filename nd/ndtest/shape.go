package ndtest

// The cases for the ops of nd/shape.go: Reshape, Flatten, ExpandDims,
// Squeeze, Transpose, SliceAxis, Concat, Split, Stack and BroadcastTo.

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// refTranspose permutes the axes of x: output axis i is input axis perm[i].
func refTranspose(x []float64, shape, perm []int) ([]float64, []int) {
	out := make([]int, len(shape))
	for i, p := range perm {
		out[i] = shape[p]
	}
	st := refStrides(shape)
	res := make([]float64, len(x))
	idx := make([]int, len(out))
	for i := range res {
		refUnravel(i, out, idx)
		src := 0
		for d, p := range perm {
			src += idx[d] * st[p]
		}
		res[i] = x[src]
	}
	return res, out
}

// refSlice keeps indices [begin, end) of axis (already non-negative).
func refSlice(x []float64, shape []int, axis, begin, end int) ([]float64, []int) {
	outer, n, inner := refNumel(shape[:axis]), shape[axis], refNumel(shape[axis+1:])
	var res []float64
	for o := range outer {
		res = append(res, x[(o*n+begin)*inner:(o*n+end)*inner]...)
	}
	out := append([]int{}, shape...)
	out[axis] = end - begin
	if res == nil {
		res = []float64{}
	}
	return res, out
}

// refConcat joins arrays along axis.
func refConcat(axis int, xs [][]float64, shapes [][]int) ([]float64, []int) {
	out := append([]int{}, shapes[0]...)
	out[axis] = 0
	for _, s := range shapes {
		out[axis] += s[axis]
	}
	outer := refNumel(out[:axis])
	var res []float64
	for o := range outer {
		for i, x := range xs {
			row := shapes[i][axis] * refNumel(shapes[i][axis+1:])
			res = append(res, x[o*row:(o+1)*row]...)
		}
	}
	return res, out
}

// confShape checks the shape ops: Reshape, Flatten, ExpandDims, Squeeze,
// Transpose, SliceAxis, Concat, Split, Stack and BroadcastTo. They only
// move values, so every check is exact.
func confShape(e confEnv) {
	base := []int{2, 3, 4}
	x, xv := e.rand(1600, -5, 5, base...)
	for _, c := range []struct{ in, out []int }{
		{[]int{6, 4}, []int{6, 4}},
		{[]int{4, -1}, []int{4, 6}},
		{[]int{-1}, []int{24}},
		{[]int{2, -1, 2}, []int{2, 6, 2}},
		{[]int{1, 24, 1}, []int{1, 24, 1}},
	} {
		e.run(fmt.Sprintf("Reshape/%v", c.in), func(e confEnv) {
			e.check(nd.Reshape(x, c.in...), c.out, xv, confTolExact)
		})
	}
	e.run("Flatten", func(e confEnv) {
		e.check(nd.Flatten(x), []int{2, 12}, xv, confTolExact)
		e.check(nd.Flatten(nd.Reshape(x, 24)), []int{24, 1}, xv, confTolExact)
		y, yv := e.rand(1601, -1, 1, 2, 3, 2, 2)
		e.check(nd.Flatten(y), []int{2, 12}, yv, confTolExact)
	})
	for _, c := range []struct {
		axis int
		out  []int
	}{{0, []int{1, 2, 3, 4}}, {1, []int{2, 1, 3, 4}}, {3, []int{2, 3, 4, 1}}, {-1, []int{2, 3, 4, 1}}, {-4, []int{1, 2, 3, 4}}} {
		e.run(fmt.Sprintf("ExpandDims/axis%d", c.axis), func(e confEnv) {
			e.check(nd.ExpandDims(x, c.axis), c.out, xv, confTolExact)
		})
	}
	sq, sqv := e.rand(1602, -1, 1, 1, 3, 1, 4)
	for _, c := range []struct {
		axes []int
		out  []int
	}{{nil, []int{3, 4}}, {[]int{2}, []int{1, 3, 4}}, {[]int{-4}, []int{3, 1, 4}}, {[]int{0, 2}, []int{3, 4}}} {
		e.run(fmt.Sprintf("Squeeze/axes%v", c.axes), func(e confEnv) {
			e.check(nd.Squeeze(sq, c.axes...), c.out, sqv, confTolExact)
		})
	}

	x4, x4v := e.rand(1603, -5, 5, 2, 3, 4, 5)
	for _, c := range []struct {
		in   *nd.NDArray
		v    []float64
		sh   []int
		perm []int
	}{
		{x, xv, base, nil},
		{x4, x4v, []int{2, 3, 4, 5}, nil},
		{x4, x4v, []int{2, 3, 4, 5}, []int{0, 2, 3, 1}}, // NCHW -> NHWC
		{x4, x4v, []int{2, 3, 4, 5}, []int{0, 3, 1, 2}}, // NHWC -> NCHW layout
		{x4, x4v, []int{2, 3, 4, 5}, []int{3, 1, 0, 2}},
		{x4, x4v, []int{2, 3, 4, 5}, []int{0, 1, 3, 2}},
		{x4, x4v, []int{2, 3, 4, 5}, []int{0, 1, 2, 3}}, // identity
		{x, xv, base, []int{1, 0, 2}},
	} {
		e.run(fmt.Sprintf("Transpose/%s_perm%v", confDims(c.sh), c.perm), func(e confEnv) {
			perm := c.perm
			if perm == nil {
				for d := len(c.sh) - 1; d >= 0; d-- {
					perm = append(perm, d)
				}
			}
			want, out := refTranspose(c.v, c.sh, perm)
			e.check(nd.Transpose(c.in, c.perm...), out, want, confTolExact)
		})
	}
	e.run("Transpose/2d", func(e confEnv) {
		m, mv := e.rand(1604, -1, 1, 7, 13)
		want, out := refTranspose(mv, []int{7, 13}, []int{1, 0})
		e.check(nd.Transpose(m), out, want, confTolExact)
	})

	s3 := []int{4, 5, 6}
	sx, sxv := e.rand(1605, -5, 5, s3...)
	for axis := -1; axis < 3; axis++ {
		for _, r := range [][2]int{{1, 3}, {-3, -1}, {0, -2}, {0, 4}, {2, 2}, {-4, 4}} {
			e.run(fmt.Sprintf("SliceAxis/axis%d_%d_%d", axis, r[0], r[1]), func(e confEnv) {
				ax := refAxis(axis, 3)
				b, en := r[0], r[1]
				if b < 0 {
					b += s3[ax]
				}
				if en < 0 {
					en += s3[ax]
				}
				want, out := refSlice(sxv, s3, ax, b, en)
				e.check(nd.SliceAxis(sx, r[0], r[1], axis), out, want, confTolExact)
			})
		}
	}

	for axis := -1; axis < 3; axis++ {
		e.run(fmt.Sprintf("Concat/axis%d", axis), func(e confEnv) {
			ax := refAxis(axis, 3)
			var arrs []*nd.NDArray
			var vals [][]float64
			var shapes [][]int
			for i, k := range []int{2, 1, 3} {
				sh := []int{2, 3, 4}
				sh[ax] = k
				a, av := e.rand(uint64(1610+i), -1, 1, sh...)
				arrs, vals, shapes = append(arrs, a), append(vals, av), append(shapes, sh)
			}
			want, out := refConcat(ax, vals, shapes)
			e.check(nd.Concat(arrs, axis), out, want, confTolExact)
		})
	}
	e.run("Concat/single", func(e confEnv) {
		e.check(nd.Concat([]*nd.NDArray{x}, 1), base, xv, confTolExact)
	})

	sp := []int{6, 4, 6}
	spx, spv := e.rand(1620, -1, 1, sp...)
	for _, c := range []struct{ axis, n int }{{0, 3}, {1, 2}, {2, 3}, {-1, 2}, {1, 1}, {2, 6}} {
		e.run(fmt.Sprintf("Split/axis%d_n%d", c.axis, c.n), func(e confEnv) {
			parts := nd.Split(spx, c.n, c.axis)
			if len(parts) != c.n {
				e.Fatalf("%d parts, want %d", len(parts), c.n)
			}
			ax := refAxis(c.axis, 3)
			step := sp[ax] / c.n
			for i, p := range parts {
				want, out := refSlice(spv, sp, ax, i*step, (i+1)*step)
				e.check(p, out, want, confTolExact)
			}
		})
	}

	for _, axis := range []int{0, 1, 2, -1, -3} {
		e.run(fmt.Sprintf("Stack/axis%d", axis), func(e confEnv) {
			sh := []int{3, 4}
			ax := refAxis(axis, 3)
			exp := append(append(append([]int{}, sh[:ax]...), 1), sh[ax:]...)
			var arrs []*nd.NDArray
			var vals [][]float64
			var shapes [][]int
			for i := range 3 {
				a, av := e.rand(uint64(1630+i), -1, 1, sh...)
				arrs, vals, shapes = append(arrs, a), append(vals, av), append(shapes, exp)
			}
			want, out := refConcat(ax, vals, shapes)
			e.check(nd.Stack(arrs, axis), out, want, confTolExact)
		})
	}

	for i, c := range []struct{ in, to []int }{
		{[]int{3, 1}, []int{3, 4}},
		{[]int{4}, []int{2, 3, 4}},
		{[]int{1, 3, 1}, []int{2, 3, 5}},
		{[]int{1}, []int{2, 2}},
		{[]int{2, 3}, []int{2, 3}},
		{[]int{3, 1}, []int{0, 3, 2}},
	} {
		e.run(fmt.Sprintf("BroadcastTo/%s", confShapeName(c.in, c.to)), func(e confEnv) {
			a, av := e.rand(uint64(1640+i), -1, 1, c.in...)
			want, out := refBroadcast(func(a, _ float64) float64 { return a }, av, c.in, make([]float64, refNumel(c.to)), c.to)
			e.check(nd.BroadcastTo(a, c.to...), out, want, confTolExact)
		})
	}
}

// gradShapeCases checks the ops that move elements around: Reshape,
// Flatten, ExpandDims, Squeeze, Transpose, SliceAxis, Concat, Split,
// Stack and BroadcastTo.
func gradShapeCases(dev ctx.Context) []gradCase {
	one := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradSigned(dev, 41, shape...)) }
	}
	var cases []gradCase
	add := func(op, name string, in func() []*nd.NDArray, f func(x *nd.NDArray) *nd.NDArray) {
		cases = append(cases, gradCase{op: op, name: name, in: in,
			f: func(in []*nd.NDArray) *nd.NDArray { return f(in[0]) }})
	}
	reshape := func(shape ...int) func(x *nd.NDArray) *nd.NDArray {
		return func(x *nd.NDArray) *nd.NDArray { return nd.Reshape(x, shape...) }
	}
	add("Reshape", "3-D-to-2-D", one(2, 3, 4), reshape(6, 4))
	add("Reshape", "infer-last", one(2, 3, 4), reshape(4, -1))
	add("Reshape", "infer-middle", one(2, 3, 4), reshape(2, -1, 2))
	add("Reshape", "to-1-D", one(2, 3, 4), reshape(-1))
	add("Reshape", "from-1-D", one(24), reshape(2, 3, 4))
	// A view of a view feeding a nonlinear op.
	add("Reshape", "twice-then-tanh", one(2, 3, 4), func(x *nd.NDArray) *nd.NDArray {
		return nd.Tanh(nd.Reshape(nd.Reshape(x, 6, 4), 3, 8))
	})

	add("Flatten", "4-D", one(2, 3, 2, 2), nd.Flatten)
	add("Flatten", "3-D", one(2, 3, 4), nd.Flatten)
	add("Flatten", "2-D", one(3, 4), nd.Flatten)

	for _, c := range []struct {
		name string
		axis int
	}{{"axis-0", 0}, {"axis-1", 1}, {"axis-ndim", 2}, {"axis-neg1", -1}} {
		add("ExpandDims", c.name, one(3, 4), func(x *nd.NDArray) *nd.NDArray { return nd.ExpandDims(x, c.axis) })
	}

	squeeze := func(axes ...int) func(x *nd.NDArray) *nd.NDArray {
		return func(x *nd.NDArray) *nd.NDArray { return nd.Squeeze(x, axes...) }
	}
	add("Squeeze", "all", one(3, 1, 4, 1), squeeze())
	add("Squeeze", "axis-1", one(3, 1, 4, 1), squeeze(1))
	add("Squeeze", "axis-3", one(3, 1, 4, 1), squeeze(3))
	add("Squeeze", "axis-neg1", one(3, 1, 4, 1), squeeze(-1))
	add("Squeeze", "leading", one(1, 3, 4), squeeze(0))

	transpose := func(axes ...int) func(x *nd.NDArray) *nd.NDArray {
		return func(x *nd.NDArray) *nd.NDArray { return nd.Transpose(x, axes...) }
	}
	add("Transpose", "2-D/default", one(3, 4), transpose())
	add("Transpose", "3-D/default", one(2, 3, 4), transpose())
	add("Transpose", "3-D/perm-1-0-2", one(2, 3, 4), transpose(1, 0, 2))
	add("Transpose", "4-D/perm-0-2-3-1", one(2, 3, 2, 2), transpose(0, 2, 3, 1))
	add("Transpose", "4-D/perm-3-1-0-2", one(2, 3, 2, 2), transpose(3, 1, 0, 2))

	for _, c := range []struct {
		name             string
		axis, begin, end int
	}{
		{"axis-0", 0, 1, 3},
		{"axis-0/one-row", 0, 2, 3},
		{"axis-1", 1, 0, 2},
		{"axis-1/full", 1, 0, 3},
		{"axis-2", 2, 1, 2},
		{"axis-neg1", -1, 0, 1},
		{"axis-0/negative-bounds", 0, -3, -1},
		{"axis-1/negative-begin", 1, -2, 3},
		{"axis-2/negative-end", 2, 0, -1},
	} {
		add("SliceAxis", c.name, one(4, 3, 2), func(x *nd.NDArray) *nd.NDArray {
			return nd.SliceAxis(x, c.begin, c.end, c.axis)
		})
	}
	// A leading-axis slice is a view: slicing it again and feeding a
	// nonlinear op must still send the gradient to the right rows.
	add("SliceAxis", "view-of-view-then-square", one(4, 3, 2), func(x *nd.NDArray) *nd.NDArray {
		return nd.Square(nd.SliceAxis(nd.SliceAxis(x, 1, 4, 0), 1, 3, 0))
	})

	three := func(a, b, c []int) func() []*nd.NDArray {
		return func() []*nd.NDArray {
			return gradIn(gradSigned(dev, 42, a...), gradSigned(dev, 43, b...), gradSigned(dev, 44, c...))
		}
	}
	concat := func(axis int) func(in []*nd.NDArray) *nd.NDArray {
		return func(in []*nd.NDArray) *nd.NDArray { return nd.Concat(in, axis) }
	}
	cases = append(cases,
		gradCase{op: "Concat", name: "axis-0", f: concat(0),
			in: three([]int{2, 3}, []int{1, 3}, []int{3, 3})},
		gradCase{op: "Concat", name: "axis-1", f: concat(1),
			in: three([]int{2, 1}, []int{2, 3}, []int{2, 2})},
		gradCase{op: "Concat", name: "3-D/axis-1", f: concat(1),
			in: three([]int{2, 1, 2}, []int{2, 2, 2}, []int{2, 3, 2})},
		gradCase{op: "Concat", name: "3-D/axis-last", f: concat(2),
			in: three([]int{2, 3, 1}, []int{2, 3, 2}, []int{2, 3, 3})},
		gradCase{op: "Concat", name: "3-D/axis-neg1", f: concat(-1),
			in: three([]int{2, 3, 1}, []int{2, 3, 2}, []int{2, 3, 3})},
		gradCase{op: "Concat", name: "axis-1/middle-no-grad", f: concat(1),
			in: three([]int{2, 1}, []int{2, 3}, []int{2, 2}), noGrad: []int{1}},
	)

	// combine uses every output of Split, each in a different way.
	combine := func(outs []*nd.NDArray) *nd.NDArray {
		y := outs[0]
		for i, o := range outs[1:] {
			if i%2 == 0 {
				y = nd.Add(y, nd.MulScalar(o, 2))
			} else {
				y = nd.Mul(y, nd.Square(o))
			}
		}
		return y
	}
	split := func(axis, n, pick int) func(x *nd.NDArray) *nd.NDArray {
		return func(x *nd.NDArray) *nd.NDArray {
			outs := nd.Split(x, n, axis)
			if pick >= 0 {
				return outs[pick]
			}
			return combine(outs)
		}
	}
	add("Split", "axis-1/one-output", one(4, 6), split(1, 3, 1))
	add("Split", "axis-1/all-outputs", one(4, 6), split(1, 3, -1))
	add("Split", "axis-0/one-output", one(4, 6), split(0, 2, 1))
	add("Split", "axis-0/all-outputs", one(4, 6), split(0, 2, -1))
	add("Split", "3-D/axis-neg1/all-outputs", one(2, 3, 4), split(-1, 4, -1))

	stack := func(axis int) func(in []*nd.NDArray) *nd.NDArray {
		return func(in []*nd.NDArray) *nd.NDArray { return nd.Stack(in, axis) }
	}
	same := three([]int{2, 3}, []int{2, 3}, []int{2, 3})
	cases = append(cases,
		gradCase{op: "Stack", name: "axis-0", f: stack(0), in: same},
		gradCase{op: "Stack", name: "axis-1", f: stack(1), in: same},
		gradCase{op: "Stack", name: "axis-last", f: stack(2), in: same},
		gradCase{op: "Stack", name: "axis-neg1", f: stack(-1), in: same},
	)

	broadcast := func(shape ...int) func(x *nd.NDArray) *nd.NDArray {
		return func(x *nd.NDArray) *nd.NDArray { return nd.BroadcastTo(x, shape...) }
	}
	add("BroadcastTo", "rows", one(1, 3), broadcast(4, 3))
	add("BroadcastTo", "cols", one(3, 1), broadcast(3, 4))
	add("BroadcastTo", "missing-leading-axes", one(3), broadcast(2, 4, 3))
	add("BroadcastTo", "scalar-like", one(1, 1), broadcast(2, 3))
	add("BroadcastTo", "middle-axis", one(2, 1, 3), broadcast(2, 4, 3))
	add("BroadcastTo", "identity", one(2, 3), broadcast(2, 3))
	return cases
}
