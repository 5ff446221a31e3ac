package ndtest

// The cases for the ops of nd/matrix.go, nd/search.go, nd/reduce_more.go
// and nd/scan.go: Eye, Linspace, Tril, Triu, Diagonal, DiagEmbed,
// Outer, Roll, Meshgrid, Searchsorted, Bucketize, Nonzero, Bincount,
// Unique, Prod, AnyTrue, AllTrue, CountNonzero, Median, Quantile,
// Normalize, CosineSimilarity, Cdist, Cumprod, Cummax, Cummin,
// Logcumsumexp, Unfold, Fold, AdaptiveMaxPool2D, Lerp, Logit, Xlogy and
// NanToNum, on small inputs whose results are worked out by hand.

import (
	"math"

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
	e.run("Reductions", func(e confEnv) {
		p := e.arr([]float64{1, 2, 3, 0.5, 0, 4}, 2, 3)
		e.check(nd.Prod(p, 1), []int{2}, []float64{6, 0}, confTolDefault)
		e.check(nd.ProdKeepDims(p, 0), []int{1, 3}, []float64{0.5, 0, 12}, confTolDefault)
		e.check(nd.Quantile(p, 0.25, 1), []int{2}, []float64{1.5, 0.25}, confTolDefault)
		e.check(nd.Normalize(e.arr([]float64{3, 4, 0, 0}, 2, 2), 2, 1, 1e-6), []int{2, 2}, []float64{0.6, 0.8, 0, 0}, confTolDefault)
		e.check(nd.CosineSimilarity(e.arr([]float64{1, 0, 1, 1}, 2, 2), e.arr([]float64{1, 0}, 1, 2), 1, 1e-8), []int{2},
			[]float64{1, 1 / math.Sqrt2}, confTolDefault)
		a, b := e.arr([]float64{0, 0, 3, 4}, 2, 2), e.arr([]float64{0, 0}, 1, 2)
		e.check(nd.Cdist(a, b, 2), []int{2, 1}, []float64{0, 5}, confTolDefault)
		e.check(nd.Cdist(a, b, 1), []int{2, 1}, []float64{0, 7}, confTolDefault)
		e.check(nd.Cdist(a, b, math.Inf(1)), []int{2, 1}, []float64{0, 4}, confTolDefault)
	})
	e.run("Elementwise", func(e confEnv) {
		a, b := e.arr([]float64{0, 1, 2, 4}, 4), e.arr([]float64{4, 3, 2, 0}, 4)
		e.check(nd.Lerp(a, b, 0.25), []int{4}, []float64{1, 1.5, 2, 3}, confTolDefault)
		e.check(nd.Logit(e.arr([]float64{0.5, 0.75, 0.25}, 3), -1), []int{3}, []float64{0, math.Log(3), -math.Log(3)}, confTolDefault)
		e.check(nd.Xlogy(e.arr([]float64{0, 2, 3}, 3), e.arr([]float64{0, 1, 4}, 3)), []int{3}, []float64{0, 0, 3 * math.Log(4)}, confTolDefault)
		e.check(nd.NanToNum(e.arr([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 2}, 4), 0, 7, -7), []int{4}, []float64{0, 7, -7, 2}, confTolExact)
	})
	e.run("Blocks", func(e confEnv) {
		// A 1×2×3 image in 2×2 blocks: two positions, each block channel
		// then kernel-row major.
		x := e.arr([]float64{1, 2, 3, 4, 5, 6}, 1, 1, 2, 3)
		o := nd.UnfoldOpts{Kernel: [2]int{2, 2}}
		u := nd.Unfold(x, o)
		e.check(u, []int{1, 4, 2}, []float64{1, 2, 2, 3, 4, 5, 5, 6}, confTolExact)
		// Folding back sums the overlaps: the middle column twice. Fold is
		// a transposed convolution, whose algorithms on a GPU (cuDNN's FFT
		// ones) round even sums of one-hot products.
		e.check(nd.Fold(u, 2, 3, o), []int{1, 1, 2, 3}, []float64{1, 4, 3, 4, 10, 6}, confTolDefault)
		e.check(nd.AdaptiveMaxPool2D(e.arr([]float64{1, 5, 2, 4, 3, 0}, 1, 1, 2, 3), 1, 2), []int{1, 1, 1, 2}, []float64{5, 5}, confTolExact)
	})
	if !e.dtypeSupported() {
		e.Skipf("SKIPPED: %v cannot allocate integer arrays yet (the searches return them)", e.dev)
	}
	e.run("Logical", func(e confEnv) {
		x := e.arr([]float64{0, 1, 0, 0, 2, 3}, 2, 3)
		bools := func(got *nd.NDArray, shape []int, want ...int64) {
			e.ints(got.AsType(nd.Int64), nd.Int64, shape, want...)
		}
		bools(nd.AnyTrue(x, 1), []int{2}, 1, 1)
		bools(nd.AllTrue(x, 1), []int{2}, 0, 0)
		bools(nd.AnyTrueKeepDims(x, 0), []int{1, 3}, 0, 1, 1)
		bools(nd.AllTrueKeepDims(x, 0), []int{1, 3}, 0, 1, 0)
		e.ints(nd.CountNonzero(x), nd.Int64, []int{}, 3)
	})
	e.run("Scans", func(e confEnv) {
		x := e.arr([]float64{2, -1, 3, 0, 1, 4}, 2, 3)
		e.check(nd.Cumprod(x, 1), []int{2, 3}, []float64{2, -2, -6, 0, 0, 0}, confTolDefault)
		v, ix := nd.Cummax(x, 1)
		e.check(v, []int{2, 3}, []float64{2, 2, 3, 0, 1, 4}, confTolExact)
		e.ints(ix, nd.Int64, []int{2, 3}, 0, 0, 2, 0, 1, 2)
		v, ix = nd.Cummin(x, 0)
		e.check(v, []int{2, 3}, []float64{2, -1, 3, 0, -1, 3}, confTolExact)
		e.ints(ix, nd.Int64, []int{2, 3}, 0, 0, 0, 1, 0, 0)
		l := nd.Logcumsumexp(e.arr([]float64{0, 0, math.Log(2)}, 3), 0)
		e.check(l, []int{3}, []float64{0, math.Log(2), math.Log(4)}, confTolDefault)
	})
	e.run("Median", func(e confEnv) {
		v, ix := nd.Median(e.arr([]float64{3, 1, 2, 4, 9, 5, 7, 6}, 2, 4), 1)
		e.check(v, []int{2}, []float64{2, 6}, confTolExact)
		e.ints(ix, nd.Int64, []int{2}, 2, 3)
	})
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
	g.add("Prod", "axis1", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Prod(in[0], 1) })
	withZero := func() []*nd.NDArray {
		x := gradSigned(dev, 70, 2, 4)
		v := x.Float64s()
		v[1], v[5], v[6] = 0, 0, 0 // one zero in row 0, two in row 1
		return gradIn(nd.FromSlice(dev, v, 2, 4))
	}
	g.add("Prod", "zeros", withZero, func(in []*nd.NDArray) *nd.NDArray { return nd.ProdKeepDims(in[0], 1) })
	g.add("Median", "axis1", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.Median(in[0], 1); return v })
	g.add("Quantile", "axis0", g.one(5, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Quantile(in[0], 0.3, 0) })
	g.add("Normalize", "l2", g.one(3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Normalize(in[0], 2, 1, 1e-12) })
	g.add("CosineSimilarity", "rows", g.two([]int{3, 4}, []int{1, 4}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.CosineSimilarity(in[0], in[1], 1, 1e-8)
	})
	g.add("Cdist", "l2", g.two([]int{2, 3, 4}, []int{2, 2, 4}), func(in []*nd.NDArray) *nd.NDArray { return nd.Cdist(in[0], in[1], 2) })
	g.add("Cdist", "l1", g.two([]int{3, 4}, []int{2, 4}), func(in []*nd.NDArray) *nd.NDArray { return nd.Cdist(in[0], in[1], 1) })
	g.add("Cumprod", "zeros", withZero, func(in []*nd.NDArray) *nd.NDArray { return nd.Cumprod(in[0], 1) })
	g.add("Cummax", "axis1", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.Cummax(in[0], 1); return v })
	g.add("Cummin", "axis0", g.one(5, 3), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.Cummin(in[0], 0); return v })
	g.add("Logcumsumexp", "axis1", g.one(3, 6), func(in []*nd.NDArray) *nd.NDArray { return nd.Logcumsumexp(in[0], 1) })
	g.add("Unfold", "strided", g.one(2, 2, 5, 4), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Unfold(in[0], nd.UnfoldOpts{Kernel: [2]int{2, 3}, Stride: [2]int{2, 1}, Pad: [2]int{1, 0}})
	})
	g.add("Fold", "overlapping", g.one(1, 8, 6), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Fold(in[0], 4, 4, nd.UnfoldOpts{Kernel: [2]int{2, 2}, Stride: [2]int{1, 2}})
	})
	g.add("AdaptiveMaxPool2D", "uneven", g.one(1, 2, 5, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.AdaptiveMaxPool2D(in[0], 3, 3) })
	g.add("Lerp", "broadcast", g.two([]int{2, 3}, []int{3}), func(in []*nd.NDArray) *nd.NDArray { return nd.Lerp(in[0], in[1], 0.3) })
	g.add("Logit", "eps", unitGrad(dev), func(in []*nd.NDArray) *nd.NDArray { return nd.Logit(in[0], 0.01) })
	g.add("Xlogy", "positive", func() []*nd.NDArray { return gradIn(gradSigned(dev, 71, 3, 4), gradPositive(dev, 72, 4)) },
		func(in []*nd.NDArray) *nd.NDArray { return nd.Xlogy(in[0], in[1]) })
	g.add("NanToNum", "finite", g.one(3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.NanToNum(in[0], 0, 1, -1) })
	weights := func() []*nd.NDArray { return gradIn(gradSigned(dev, 69, 5)) }
	g.add("Bincount", "weights", weights, func(in []*nd.NDArray) *nd.NDArray {
		return nd.Bincount(nd.FromSlice(in[0].Context(), []int64{3, 0, 3, 1, 0}, 5), in[0], 0)
	})
	return g.cases
}

// unitGrad is one input uniform in (0.05, 0.95): inside Logit's domain.
func unitGrad(dev ctx.Context) func() []*nd.NDArray {
	return func() []*nd.NDArray { return gradIn(Rand(dev, 73, 0.05, 0.95, 3, 4)) }
}
