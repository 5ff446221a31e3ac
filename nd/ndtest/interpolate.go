package ndtest

// The cases for the ops of nd/interpolate.go: Interpolate and
// ResampleAxis.

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confInterpolate checks Interpolate's rules on small images whose results
// are worked out by hand, and ResampleAxis's gather and weighted forms.
func confInterpolate(e confEnv) {
	x := e.arr([]float64{1, 2, 3, 4, 5, 6}, 1, 1, 2, 3)
	e.run("Nearest", func(e confEnv) {
		// Rows floor(o·2/4) = 0 0 1 1; columns unchanged.
		e.check(nd.Interpolate(x, nd.InterpolateOpts{Size: [2]int{4, 3}}), []int{1, 1, 4, 3},
			[]float64{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, confTolExact)
		e.check(nd.Interpolate(x, nd.InterpolateOpts{Scale: [2]float64{1, 0.5}}), []int{1, 1, 2, 1},
			[]float64{1, 4}, confTolExact)
	})
	e.run("Bilinear", func(e confEnv) {
		// Columns at (o+0.5)/2−0.5, clamped: 0, 0.25, 0.75, 1.25, 1.75, 2.
		e.check(nd.Interpolate(x, nd.InterpolateOpts{Size: [2]int{2, 6}, Mode: nd.InterpBilinear}), []int{1, 1, 2, 6},
			[]float64{1, 1.25, 1.75, 2.25, 2.75, 3, 4, 4.25, 4.75, 5.25, 5.75, 6}, confTolDefault)
		// Corners aligned: rows at 0, 0.5, 1.
		e.check(nd.Interpolate(x, nd.InterpolateOpts{Size: [2]int{3, 3}, Mode: nd.InterpBilinear, AlignCorners: true}), []int{1, 1, 3, 3},
			[]float64{1, 2, 3, 2.5, 3.5, 4.5, 4, 5, 6}, confTolDefault)
	})
	e.run("Antialias", func(e confEnv) {
		// 4 columns to 2: triangle weights 3/7 3/7 1/7 and 1/7 3/7 3/7.
		row := e.arr([]float64{1, 2, 3, 4}, 1, 4)
		e.check(nd.Interpolate(row, nd.InterpolateOpts{Size: [2]int{1, 2}, Mode: nd.InterpBilinear, Antialias: true}), []int{1, 2},
			[]float64{12.0 / 7, 23.0 / 7}, confTolDefault)
	})
	e.run("ResampleAxis", func(e confEnv) {
		v := e.arr([]float64{1, 2, 3}, 3)
		e.check(nd.ResampleAxis(v, 0, [][]int64{{2, 0, 5}}, nil), []int{3}, []float64{3, 1, 3}, confTolExact)
		e.check(nd.ResampleAxis(v, -1, [][]int64{{0, 1}, {1, 2}}, [][]float64{{0.5, 0.25}, {0.5, 0.75}}), []int{2},
			[]float64{1.5, 2.75}, confTolDefault)
	})
}

// gradInterpolateCases checks Interpolate's gradient in each mode and
// ResampleAxis's with weights.
func gradInterpolateCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	for _, c := range []struct {
		name string
		o    nd.InterpolateOpts
	}{
		{"nearest", nd.InterpolateOpts{Size: [2]int{5, 2}}},
		{"bilinear", nd.InterpolateOpts{Size: [2]int{5, 2}, Mode: nd.InterpBilinear}},
		{"align-corners", nd.InterpolateOpts{Size: [2]int{6, 7}, Mode: nd.InterpBilinear, AlignCorners: true}},
		{"antialias", nd.InterpolateOpts{Size: [2]int{2, 3}, Mode: nd.InterpBilinear, Antialias: true}},
	} {
		g.add("Interpolate", c.name, g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Interpolate(in[0], c.o) })
	}
	g.add("ResampleAxis", "weighted", g.one(3, 4), func(in []*nd.NDArray) *nd.NDArray {
		return nd.ResampleAxis(in[0], 1, [][]int64{{0, 3, 1}, {1, 2, 2}}, [][]float64{{0.5, 1, -2}, {0.25, 0, 3}})
	})
	return g.cases
}
