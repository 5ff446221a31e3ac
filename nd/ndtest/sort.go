package ndtest

// The cases for the ops of nd/sort.go: Cumsum, Sort (whose indices are
// ArgSort's), TopK, Norm, Var and Std.

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradSortCases checks Cumsum along every axis, Sort and TopK on inputs
// without ties, Norm (L1 away from its kink at 0, L2), Var and Std.
func gradSortCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	for _, ax := range []int{0, 1, 2} {
		g.add("Cumsum", "axis"+string(rune('0'+ax)), g.one(3, 4, 2), func(in []*nd.NDArray) *nd.NDArray { return nd.Cumsum(in[0], ax) })
	}
	distinct := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradDistinct(dev, 64, shape...)) }
	}
	g.add("Sort", "axis1-desc", distinct(3, 5), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.Sort(in[0], 1, true); return v })
	g.add("Sort", "axis0-asc", distinct(4, 3), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.Sort(in[0], 0, false); return v })
	g.add("TopK", "largest", distinct(3, 6), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.TopK(in[0], 2, -1, true); return v })
	g.add("TopK", "smallest-axis0", distinct(5, 2), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.TopK(in[0], 3, 0, false); return v })

	nonzero := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradNonzero(dev, 65, shape...)) }
	}
	g.add("Norm", "L1-axis1", nonzero(3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Norm(in[0], 1, 1) })
	g.add("Norm", "L2-all", g.one(3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Norm(in[0], 2) })
	g.add("Norm", "L2-keep-axes02", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.NormKeepDims(in[0], 2, 0, 2) })
	g.add("Var", "ddof1-axis1", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Var(in[0], 1, 1) })
	g.add("Var", "ddof0-all", g.one(2, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.VarKeepDims(in[0], 0) })
	g.add("Std", "ddof1-axis0", g.one(4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Std(in[0], 1, 0) })
	return g.cases
}

// confScans is the Scans sub-test of the index family (index.go), with
// confLogSumExp (math.go): Cumsum, TopK and Norm on the 2x3 array
// x = [[1 2 3] [4 5 6]] and on hand-written values.
func confScans(e confEnv, x *nd.NDArray) {
	e.check(nd.Cumsum(x, 1), []int{2, 3}, []float64{1, 3, 6, 4, 9, 15}, confTolDefault)
	v, i := nd.TopK(e.arr([]float64{3, 1, 4, 1, 5, 9, 2, 6}, 2, 4), 2, 1, true)
	e.check(v, []int{2, 2}, []float64{4, 3, 9, 6}, confTolExact)
	e.checkAs(i, nd.Int64, []int{2, 2}, []float64{2, 0, 1, 3}, confTolExact)
	e.check(nd.Norm(x, 2, 1), []int{2}, []float64{math.Sqrt(14), math.Sqrt(77)}, confTolDefault)
	e.check(nd.NormKeepDims(x, 1, 0), []int{1, 3}, []float64{5, 7, 9}, confTolDefault)
	// x is [[1 2 3] [4 5 6]]: variances and standard deviations along each
	// axis, sample (ddof 1) and population (ddof 0).
	e.check(nd.Var(x, 1, 1), []int{2}, []float64{1, 1}, confTolDefault)
	e.check(nd.VarKeepDims(x, 0, 0), []int{1, 3}, []float64{2.25, 2.25, 2.25}, confTolDefault)
	e.check(nd.Std(x, 1, 0), []int{3}, []float64{math.Sqrt(4.5), math.Sqrt(4.5), math.Sqrt(4.5)}, confTolDefault)
	e.check(nd.Std(x, 0), []int{}, []float64{math.Sqrt(35.0 / 12)}, confTolDefault)
	e.check(nd.StdKeepDims(x, 0), []int{1, 1}, []float64{math.Sqrt(35.0 / 12)}, confTolDefault)
	// ArgSort keeps the first of equal values first, both ways.
	e.checkAs(nd.ArgSort(e.arr([]float64{3, 1, 4, 1, 5, 9, 2, 6}, 2, 4), 1, false), nd.Int64, []int{2, 4}, []float64{1, 3, 0, 2, 2, 0, 3, 1}, confTolExact)
	e.checkAs(nd.ArgSort(e.arr([]float64{3, 1, 4, 1, 5, 9, 2, 6}, 2, 4), 0, true), nd.Int64, []int{2, 4}, []float64{1, 1, 0, 1, 0, 0, 1, 0}, confTolExact)
	e.checkAs(nd.OneHotAs(nd.FromSlice(e.dev, []int64{2, 0, -1}), 3, 5, -1, nd.Int32), nd.Int32, []int{3, 3}, []float64{-1, -1, 5, 5, -1, -1, -1, -1, -1}, confTolExact)
}
