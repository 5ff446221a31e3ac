package ndtest

// The cases for the ops of nd/slice.go: Slice (with All, Span, SpanStep,
// From, Every), Flip, SwapAxes, Tile and Repeat.

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradSliceCases checks strided slices (negative steps included), Flip,
// SwapAxes, Tile and Repeat.
func gradSliceCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	g.add("Slice", "steps", g.one(6, 4, 5), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Slice(in[0], nd.SpanStep(1, 5, 2), nd.Every(-1), nd.From(-3))
	})
	g.add("Slice", "negative-step-span", g.one(7, 3), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Slice(in[0], nd.SpanStep(5, 0, -2), nd.Span(1, 3))
	})
	g.add("Flip", "two-axes", g.one(3, 2, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Flip(in[0], 0, 2) })
	g.add("SwapAxes", "0-2", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.SwapAxes(in[0], 0, 2) })
	g.add("Tile", "more-reps", g.one(2, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Tile(in[0], 2, 1, 3) })
	g.add("Repeat", "axis1", g.one(2, 3, 2), func(in []*nd.NDArray) *nd.NDArray { return nd.Repeat(in[0], 3, 1) })
	return g.cases
}

// confSlice is the Slice sub-test of the index family (index.go): Slice,
// Flip, SwapAxes, Tile and Repeat on the 2x3 array x = [[1 2 3] [4 5 6]].
func confSlice(e confEnv, x *nd.NDArray) {
	e.check(nd.Slice(x, nd.Every(-1), nd.SpanStep(2, -4, -2)), []int{2, 2}, []float64{6, 4, 3, 1}, confTolExact)
	e.check(nd.Slice(x, nd.From(1), nd.Span(-2, 10)), []int{1, 2}, []float64{5, 6}, confTolExact)
	e.check(nd.Slice(x, nd.Span(1, 1)), []int{0, 3}, []float64{}, confTolExact)
	e.check(nd.Flip(x), []int{2, 3}, []float64{6, 5, 4, 3, 2, 1}, confTolExact)
	e.check(nd.SwapAxes(x, 0, 1), []int{3, 2}, []float64{1, 4, 2, 5, 3, 6}, confTolExact)
	e.check(nd.Tile(x, 2, 1), []int{4, 3}, []float64{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, confTolExact)
	e.check(nd.Repeat(x, 2, 1), []int{2, 6}, []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}, confTolExact)
}
