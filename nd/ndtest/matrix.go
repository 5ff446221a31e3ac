package ndtest

// The cases for the ops of nd/matrix.go and nd/search.go: Eye, Linspace,
// Tril, Triu, Diagonal, DiagEmbed, Outer, Roll, Meshgrid, Searchsorted,
// Bucketize, Nonzero, Bincount and Unique, on small inputs whose results
// are worked out by hand.

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func confMatrix(e confEnv) {
	m := e.arr([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 3, 4)
	e.run("Eye", func(e confEnv) {
		e.check(nd.Eye(e.dev, e.dt, 2, 3, 1), []int{2, 3}, []float64{0, 1, 0, 0, 0, 1}, confTolExact)
	})
	e.run("Linspace", func(e confEnv) {
		e.check(nd.Linspace(e.dev, e.dt, -1, 1, 5), []int{5}, []float64{-1, -0.5, 0, 0.5, 1}, confTolExact)
	})
	e.run("Triangles", func(e confEnv) {
		e.check(nd.Tril(m, 0), []int{3, 4}, []float64{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}, confTolExact)
		e.check(nd.Triu(m, 1), []int{3, 4}, []float64{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}, confTolExact)
	})
	e.run("Diagonals", func(e confEnv) {
		e.check(nd.Diagonal(m, 1), []int{3}, []float64{2, 7, 12}, confTolExact)
		e.check(nd.DiagEmbed(e.arr([]float64{1, 2}, 2), -1), []int{3, 3}, []float64{0, 0, 0, 1, 0, 0, 0, 2, 0}, confTolExact)
	})
	e.run("Outer", func(e confEnv) {
		e.check(nd.Outer(e.arr([]float64{1, 2}, 2), e.arr([]float64{3, 4, 5}, 3)), []int{2, 3}, []float64{3, 4, 5, 6, 8, 10}, confTolExact)
	})
	e.run("Roll", func(e confEnv) {
		e.check(nd.Roll(m, -1, 1), []int{3, 4}, []float64{2, 3, 4, 1, 6, 7, 8, 5, 10, 11, 12, 9}, confTolExact)
	})
	e.run("Meshgrid", func(e confEnv) {
		g := nd.Meshgrid("xy", e.arr([]float64{1, 2, 3}, 3), e.arr([]float64{4, 5}, 2))
		e.check(g[0], []int{2, 3}, []float64{1, 2, 3, 1, 2, 3}, confTolExact)
		e.check(g[1], []int{2, 3}, []float64{4, 4, 4, 5, 5, 5}, confTolExact)
	})
	if !e.dtypeSupported() {
		e.Skipf("SKIPPED: %v cannot allocate integer arrays yet (the searches return them)", e.dev)
	}
	e.run("Searchsorted", func(e confEnv) {
		sorted, v := e.arr([]float64{1, 3, 3, 5}, 4), e.arr([]float64{0, 3, 4, 6}, 4)
		e.ints(nd.Searchsorted(sorted, v, false), nd.Int64, []int{4}, 0, 1, 3, 4)
		e.ints(nd.Bucketize(v, sorted, true), nd.Int64, []int{4}, 0, 3, 3, 4)
	})
	e.run("Nonzero", func(e confEnv) {
		e.ints(nd.Nonzero(e.arr([]float64{0, 1, 2, 0}, 2, 2)), nd.Int64, []int{2, 2}, 0, 1, 1, 0)
	})
	e.run("Bincount", func(e confEnv) {
		x := nd.FromSlice(e.dev, []int64{2, 0, 2}, 3)
		e.ints(nd.Bincount(x, nil, 4), nd.Int64, []int{4}, 1, 0, 2, 0)
		e.check(nd.Bincount(x, e.arr([]float64{0.5, 1, 2}, 3), 0), []int{3}, []float64{1, 0, 2.5}, confTolExact)
	})
	e.run("Unique", func(e confEnv) {
		v, inv, cnt := nd.Unique(e.arr([]float64{3, 1, 3, 2}, 2, 2))
		e.check(v, []int{3}, []float64{1, 2, 3}, confTolExact)
		e.ints(inv, nd.Int64, []int{2, 2}, 2, 0, 2, 1)
		e.ints(cnt, nd.Int64, []int{3}, 1, 1, 2)
	})
}

// gradMatrixCases checks the gradients of the rearrangements.
func gradMatrixCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	g.add("Tril", "batch", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Tril(in[0], -1) })
	g.add("Triu", "batch", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Triu(in[0], 1) })
	g.add("Diagonal", "offset", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Diagonal(in[0], 1) })
	g.add("DiagEmbed", "offset", g.one(2, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.DiagEmbed(in[0], -2) })
	g.add("Outer", "vectors", g.two([]int{3}, []int{4}), func(in []*nd.NDArray) *nd.NDArray { return nd.Outer(in[0], in[1]) })
	g.add("Roll", "axis1", g.one(2, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Roll(in[0], 3, 1) })
	g.add("Meshgrid", "ij", g.two([]int{3}, []int{4}), func(in []*nd.NDArray) *nd.NDArray {
		xs := nd.Meshgrid("ij", in[0], in[1])
		return nd.Add(nd.Mul(xs[0], xs[0]), xs[1])
	})
	weights := func() []*nd.NDArray { return gradIn(gradSigned(dev, 69, 5)) }
	g.add("Bincount", "weights", weights, func(in []*nd.NDArray) *nd.NDArray {
		return nd.Bincount(nd.FromSlice(in[0].Context(), []int64{3, 0, 3, 1, 0}, 5), in[0], 0)
	})
	return g.cases
}
