package ndtest

// The cases for the ops of nd/index.go: Take, Gather, ScatterAdd and
// IndexAdd. This file also holds the "index" conformance family, whose
// sub-tests live with their ops: Pad (pad.go), Slice (slice.go), Gather
// (here) and Scans (sort.go and math.go).

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradIndexCases checks the indexing ops' gradients; index arrays are
// Int64 and captured by the cases (they get no gradient). Repeated and
// out-of-range indices exercise the scatter-add backward.
func gradIndexCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	idx := g.lazy([]int{2, 0, 2, 3, 5, -1}, 2, 3)
	g.add("Take", "axis0-clip", g.one(4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx(in), 0, nd.TakeClip) })
	g.add("Take", "axis1-wrap", g.one(2, 4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx(in), 1, nd.TakeWrap) })
	g.add("Take", "last-axis", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx(in), -1, nd.TakeClip) })

	gidx := g.lazy([]int{0, 2, 2, 1, 1, 1, 3, 0}, 2, 4)
	g.add("Gather", "axis1-repeats", g.one(2, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Gather(in[0], gidx(in), 1) })
	gidx0 := g.lazy([]int{1, 0, 2, 2, 0, 1}, 2, 3)
	g.add("Gather", "axis0", g.one(3, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Gather(in[0], gidx0(in), 0) })
	g.add("ScatterAdd", "axis1", g.two([]int{2, 4}, []int{2, 4}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.ScatterAdd(in[0], gidx(in), in[1], 1)
	})
	iidx := g.lazy([]int{3, 0, 3})
	g.add("IndexAdd", "axis1-repeats", g.two([]int{2, 4, 2}, []int{2, 3, 2}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.IndexAdd(in[0], iidx(in), in[1], 1)
	})
	return g.cases
}

// confIndex checks the forward values of the shape-moving indexing ops
// against hand-computed results.
func confIndex(e confEnv) {
	if !e.dtypeSupported() {
		e.Skipf("SKIPPED: %v cannot hold integer index arrays yet", e.dev)
	}
	x := e.arr([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	e.run("Pad", func(e confEnv) { confPad(e, x) })     // pad.go
	e.run("Slice", func(e confEnv) { confSlice(e, x) }) // slice.go
	e.run("Gather", func(e confEnv) { confGather(e, x) })
	e.run("Scans", func(e confEnv) {
		confScans(e, x)  // sort.go
		confLogSumExp(e) // math.go
	})
}

// confGather is the Gather sub-test of the index family: Gather,
// ScatterAdd, Take and IndexAdd on the 2x3 array x = [[1 2 3] [4 5 6]].
func confGather(e confEnv, x *nd.NDArray) {
	idx := nd.FromSlice(e.dev, []int64{2, 2, 0, 1, 0, 1}, 2, 3)
	e.check(nd.Gather(x, idx, 1), []int{2, 3}, []float64{3, 3, 1, 5, 4, 5}, confTolExact)
	e.check(nd.ScatterAdd(x, idx, x, 1), []int{2, 3}, []float64{4, 2, 6, 9, 15, 6}, confTolExact)
	e.check(nd.Take(x, nd.FromSlice(e.dev, []int64{1, 1, 0}), 0, nd.TakeClip), []int{3, 3},
		[]float64{4, 5, 6, 4, 5, 6, 1, 2, 3}, confTolExact)
	e.check(nd.IndexAdd(x, nd.FromSlice(e.dev, []int64{0, 0}), nd.Slice(x, nd.All(), nd.Span(0, 2)), 1),
		[]int{2, 3}, []float64{4, 2, 3, 13, 5, 6}, confTolExact)
}
