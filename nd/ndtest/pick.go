package ndtest

// The cases for the ops of nd/pick.go: Pick and OneHot.

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

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

// gradPickCases checks Pick along every axis, with clipped out-of-range
// labels, and after LogSoftmax (the cross-entropy pattern).
func gradPickCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for _, c := range []struct {
		name   string
		shape  []int
		labels []float64
		lshape []int
		axis   int
	}{
		{"axis-1", []int{4, 5}, []float64{0, 4, 2, 2}, []int{4}, 1},
		{"axis-neg1", []int{4, 5}, []float64{3, 1, 0, 4}, []int{4}, -1},
		{"axis-0", []int{4, 5}, []float64{0, 3, 1, 1, 2}, []int{5}, 0},
		{"3-D/axis-1", []int{2, 3, 4}, []float64{0, 1, 2, 1, 2, 2, 0, 0}, []int{2, 4}, 1},
		// Indices outside [0, n) are clipped to the nearest end.
		{"axis-1/out-of-range-clipped", []int{4, 5}, []float64{-1, 7, 2, 5}, []int{4}, 1},
	} {
		cases = append(cases, gradCase{
			op: "Pick", name: c.name, noGrad: []int{1},
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, 63, c.shape...), gradLabels(dev, c.labels, c.lshape...))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Pick(in[0], in[1], c.axis) },
		})
	}
	// Pick after LogSoftmax: the cross-entropy pattern.
	cases = append(cases, gradCase{
		op: "Pick", name: "after-log-softmax", noGrad: []int{1}, chain: true,
		in: func() []*nd.NDArray {
			return gradIn(gradSigned(dev, 64, 4, 5), gradLabels(dev, []float64{1, 0, 4, 3}, 4))
		},
		f: func(in []*nd.NDArray) *nd.NDArray { return nd.Pick(nd.LogSoftmax(in[0], 1), in[1], 1) },
	})
	return cases
}
