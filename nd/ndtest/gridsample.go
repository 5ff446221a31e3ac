package ndtest

// The cases for the op of nd/gridsample.go: GridSample.

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confGridSample checks GridSample on a 2×2 image [[1 2] [3 4]] at points
// whose samples, and grid gradients on the clipping bounds, are worked out
// by hand.
func confGridSample(e confEnv) {
	x := e.arr([]float64{1, 2, 3, 4}, 1, 1, 2, 2)
	// Points (x, y): the top-left corner, the centre, the bottom-right corner.
	grid := e.arr([]float64{-1, -1, 0, 0, 1, 1}, 1, 1, 3, 2)
	e.run("AlignCorners", func(e confEnv) {
		// Corners at the pixels' centres: 1, the mean 2.5, 4.
		e.check(nd.GridSample(x, grid, nd.GridSampleOpts{AlignCorners: true}), []int{1, 1, 1, 3}, []float64{1, 2.5, 4}, confTolDefault)
	})
	e.run("Zeros", func(e confEnv) {
		// Corners at the pixels' outer edges: a quarter of the corner
		// pixel (the rest reads zeros), the mean, a quarter of 4.
		e.check(nd.GridSample(x, grid, nd.GridSampleOpts{}), []int{1, 1, 1, 3}, []float64{0.25, 2.5, 1}, confTolDefault)
	})
	e.run("Border", func(e confEnv) {
		e.check(nd.GridSample(x, grid, nd.GridSampleOpts{Padding: nd.GridBorder}), []int{1, 1, 1, 3}, []float64{1, 2.5, 4}, confTolDefault)
	})
	for _, pad := range []nd.GridPadding{nd.GridBorder, nd.GridReflection} {
		e.run([]string{"", "BorderBoundGradient", "ReflectionBoundGradient"}[pad], func(e confEnv) {
			// Aligned: (1, 0) is on the right edge's centres, between 2
			// and 4, (−1, −1) the top-left pixel's centre, (0, 0) inside.
			// A coordinate on the bound passes no gradient (PyTorch's
			// clip_coordinates_set_grad); inside, ∂/∂x = 1·½, ∂/∂y = 2·½.
			g := e.arr([]float64{1, 0, -1, -1, 0, 0}, 1, 1, 3, 2)
			g.AttachGrad(nd.GradWrite)
			var y, l *nd.NDArray
			nd.DefaultSession().Record(func() {
				y = nd.GridSample(x, g, nd.GridSampleOpts{Padding: pad, AlignCorners: true})
				l = nd.Sum(y)
			})
			e.check(y, []int{1, 1, 1, 3}, []float64{3, 1, 2.5}, confTolDefault)
			e.check(nd.Grad([]*nd.NDArray{l}, nil, []*nd.NDArray{g})[0], []int{1, 1, 3, 2}, []float64{0, 1, 0, 0, 0.5, 1}, confTolDefault)
		})
	}
	e.run("Nearest", func(e confEnv) {
		// Aligned: (0.5, 0.5) rounds half to even, to pixel (0, 0).
		e.check(nd.GridSample(x, grid, nd.GridSampleOpts{Nearest: true, AlignCorners: true}), []int{1, 1, 1, 3}, []float64{1, 1, 4}, confTolExact)
	})
}

// gradGridSampleCases checks GridSample's gradients for the input and the
// grid.
func gradGridSampleCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	for _, c := range []struct {
		name string
		o    nd.GridSampleOpts
	}{{"zeros", nd.GridSampleOpts{}}, {"reflection", nd.GridSampleOpts{Padding: nd.GridReflection, AlignCorners: true}}} {
		g.add("GridSample", c.name, g.two([]int{1, 2, 3, 4}, []int{1, 2, 3, 2}), func(in []*nd.NDArray) *nd.NDArray {
			return nd.GridSample(in[0], in[1], c.o)
		})
	}
	return g.cases
}
