package ndtest

// The cases for the op of nd/einsum.go: Einsum.

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confEinsum checks Einsum's forms on small operands whose results are
// worked out by hand: a matrix product, a transpose, a diagonal, a sum,
// an outer product, "..." broadcasting and three operands.
func confEinsum(e confEnv) {
	a := e.arr([]float64{1, 2, 3, 4, 5, 6}, 2, 3) // [[1 2 3] [4 5 6]]
	b := e.arr([]float64{1, 0, 0, 1, 1, 1}, 3, 2) // [[1 0] [0 1] [1 1]]
	sq := e.arr([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
	e.run("Product", func(e confEnv) {
		e.check(nd.Einsum("ij,jk->ik", a, b), []int{2, 2}, []float64{4, 5, 10, 11}, confTolDefault)
		e.check(nd.Einsum("ij,kj", a, a), []int{2, 2}, []float64{14, 32, 32, 77}, confTolDefault)
	})
	e.run("Transpose", func(e confEnv) {
		e.check(nd.Einsum("ij->ji", a), []int{3, 2}, []float64{1, 4, 2, 5, 3, 6}, confTolExact)
	})
	e.run("Diagonal", func(e confEnv) {
		e.check(nd.Einsum("ii->i", sq), []int{3}, []float64{1, 5, 9}, confTolExact)
		e.check(nd.Einsum("ii", sq), []int{}, []float64{15}, confTolDefault)
	})
	e.run("Sums", func(e confEnv) {
		e.check(nd.Einsum("ij->", a), []int{}, []float64{21}, confTolDefault)
		e.check(nd.Einsum("ij->j", a), []int{3}, []float64{5, 7, 9}, confTolDefault)
	})
	e.run("Outer", func(e confEnv) {
		u, v := e.arr([]float64{1, 2}, 2), e.arr([]float64{3, 4, 5}, 3)
		e.check(nd.Einsum("i,j->ij", u, v), []int{2, 3}, []float64{3, 4, 5, 6, 8, 10}, confTolDefault)
	})
	e.run("Ellipsis", func(e confEnv) {
		// Rows of a times [1 1 1]: 6 and 15, broadcast over a leading 2.
		x := e.arr([]float64{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 2, 2, 3)
		ones := e.arr([]float64{1, 1, 1}, 3)
		e.check(nd.Einsum("...i,i->...", x, ones), []int{2, 2}, []float64{6, 15, 6, 15}, confTolDefault)
	})
	e.run("Three", func(e confEnv) {
		// (a·b)·[1 1]ᵀ = row sums of [[4 5] [10 11]].
		ones := e.arr([]float64{1, 1}, 2)
		e.check(nd.Einsum("ij,jk,k->i", a, b, ones), []int{2}, []float64{9, 21}, confTolDefault)
	})
}

// gradEinsumCases checks Einsum's gradient through a product, a diagonal
// and a three-operand contraction.
func gradEinsumCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	g.add("Einsum", "batched", g.two([]int{2, 2, 3}, []int{2, 3, 4}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Einsum("bij,bjk->bik", in[0], in[1])
	})
	g.add("Einsum", "diagonal", g.one(3, 3, 2), func(in []*nd.NDArray) *nd.NDArray { return nd.Einsum("iij->ij", in[0]) })
	three := func() []*nd.NDArray {
		return gradIn(gradSigned(g.dev, 62, 2, 3), gradSigned(g.dev, 63, 3, 4), gradSigned(g.dev, 64, 4))
	}
	g.add("Einsum", "three", three, func(in []*nd.NDArray) *nd.NDArray {
		return nd.Einsum("ij,jk,k->i", in[0], in[1], in[2])
	})
	return g.cases
}
