package ndtest

// The cases for the ops of nd/products.go, nd/blocks.go, nd/calculus.go,
// nd/cov.go, nd/histc.go, nd/pdist.go, nd/gcd.go and nd/affinegrid.go:
// Kron, Cross, Tensordot, BlockDiag, CartesianProd, Vander, Diff, Rot90,
// Trapezoid, TrapezoidX, CumulativeTrapezoid, CumulativeTrapezoidX, Cov,
// Corrcoef, Histc, Pdist, Gcd, Lcm and AffineGrid, on small inputs whose
// results are worked out by hand (exact in every dtype where the check is
// exact). Their gradient cases are in extra_grad.go.

import (
	"math"

	"github.com/goluon/goluon/nd"
)

func confExtra(e confEnv) {
	m := e.arr([]float64{1, 2, 3, 4, 5, 6}, 2, 3) // [[1 2 3] [4 5 6]]
	e.run("Kron", func(e confEnv) {
		// [1 2] ⊗ [[1 −1] [2 0]]: the vector gets a leading axis of 1.
		got := nd.Kron(e.arr([]float64{1, 2}, 2), e.arr([]float64{1, -1, 2, 0}, 2, 2))
		e.check(got, []int{2, 4}, []float64{1, -1, 2, -2, 2, 0, 4, 0}, confTolExact)
	})
	e.run("Cross", func(e confEnv) {
		// e₁×e₂ = e₃ and e₂×e₂ = 0, the second operand broadcast.
		a, b := e.arr([]float64{1, 0, 0, 0, 1, 0}, 2, 3), e.arr([]float64{0, 1, 0}, 1, 3)
		e.check(nd.Cross(a, b, -1), []int{2, 3}, []float64{0, 0, 1, 0, 0, 0}, confTolExact)
		// Along axis 0: [1 2 3]×[4 5 6] = [−3 6 −3].
		c, d := e.arr([]float64{1, 2, 3}, 3, 1), e.arr([]float64{4, 5, 6}, 3, 1)
		e.check(nd.Cross(c, d, 0), []int{3, 1}, []float64{-3, 6, -3}, confTolDefault)
	})
	e.run("Tensordot", func(e confEnv) {
		b := e.arr([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
		e.check(nd.Tensordot(m, b, []int{1}, []int{0}), []int{2, 2}, []float64{22, 28, 49, 64}, confTolDefault)
		// Σᵢⱼ m[i][j]·b[j][i] = 22 + 64.
		e.check(nd.Tensordot(m, b, []int{0, 1}, []int{1, 0}), []int{}, []float64{86}, confTolDefault)
		e.check(nd.Tensordot(e.arr([]float64{1, 2}, 2), e.arr([]float64{3, 4}, 2), nil, nil), []int{2, 2}, []float64{3, 4, 6, 8}, confTolDefault)
	})
	e.run("BlockDiag", func(e confEnv) {
		got := nd.BlockDiag(e.arr([]float64{1}, 1, 1), e.arr([]float64{2, 3}, 2), e.arr([]float64{4, 5}, 2, 1))
		e.check(got, []int{4, 4}, []float64{1, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 4, 0, 0, 0, 5}, confTolExact)
	})
	e.run("CartesianProd", func(e confEnv) {
		got := nd.CartesianProd(e.arr([]float64{1, 2}, 2), e.arr([]float64{3, 4, 5}, 3))
		e.check(got, []int{6, 2}, []float64{1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5}, confTolExact)
	})
	e.run("Vander", func(e confEnv) {
		x := e.arr([]float64{1, 2, -1}, 3)
		e.check(nd.Vander(x, -1, false), []int{3, 3}, []float64{1, 1, 1, 4, 2, 1, 1, -1, 1}, confTolExact)
		e.check(nd.Vander(x, 4, true), []int{3, 4}, []float64{1, 1, 1, 1, 1, 2, 4, 8, 1, -1, 1, -1}, confTolExact)
	})
	e.run("Diff", func(e confEnv) {
		sq := e.arr([]float64{1, 4, 9, 16}, 4)
		e.check(nd.Diff(sq, 2, 0, nil, nil), []int{2}, []float64{2, 2}, confTolExact)
		e.check(nd.Diff(sq, 1, -1, e.arr([]float64{0}, 1), e.arr([]float64{25}, 1)), []int{5}, []float64{1, 3, 5, 7, 9}, confTolExact)
		e.check(nd.Diff(m, 1, 0, nil, nil), []int{1, 3}, []float64{3, 3, 3}, confTolExact)
	})
	e.run("Rot90", func(e confEnv) {
		e.check(nd.Rot90(m, 1, [2]int{0, 1}), []int{3, 2}, []float64{3, 6, 2, 5, 1, 4}, confTolExact)
		e.check(nd.Rot90(m, -1, [2]int{0, 1}), []int{3, 2}, []float64{4, 1, 5, 2, 6, 3}, confTolExact)
		e.check(nd.Rot90(m, 6, [2]int{1, 0}), []int{2, 3}, []float64{6, 5, 4, 3, 2, 1}, confTolExact)
	})
	e.run("Trapezoid", func(e confEnv) {
		y, x := e.arr([]float64{1, 2, 3, 4}, 4), e.arr([]float64{0, 1, 3, 6}, 4)
		// (1+2+3+4 − (1+4)/2)·0.5; and the steps 1, 2, 3 times the mean heights.
		e.check(nd.Trapezoid(y, 0.5, 0), []int{}, []float64{3.75}, confTolDefault)
		e.check(nd.TrapezoidX(y, x, -1), []int{}, []float64{17}, confTolDefault)
		e.check(nd.CumulativeTrapezoid(y, 1, 0), []int{3}, []float64{1.5, 4, 7.5}, confTolDefault)
		e.check(nd.CumulativeTrapezoidX(y, x, 0), []int{3}, []float64{1.5, 6.5, 17}, confTolDefault)
		e.check(nd.Trapezoid(m, 1, 1), []int{2}, []float64{4, 10}, confTolDefault)
	})
	e.run("Cov", func(e confEnv) {
		// Centred rows [−1 0 1] and [0 −1 1].
		x := e.arr([]float64{0, 1, 2, 2, 1, 3}, 2, 3)
		e.check(nd.Cov(x, 1, nil, nil), []int{2, 2}, []float64{1, 0.5, 0.5, 1}, confTolDefault)
		e.check(nd.Cov(x, 0, nil, nil), []int{2, 2}, []float64{2.0 / 3, 1.0 / 3, 1.0 / 3, 2.0 / 3}, confTolDefault)
		e.check(nd.Corrcoef(x), []int{2, 2}, []float64{1, 0.5, 0.5, 1}, confTolDefault)
		// Weights [1 2 1]: means 1 and 1.75, normalised by 4 − 6/4.
		aw := e.arr([]float64{1, 2, 1}, 3)
		e.check(nd.Cov(x, 1, nil, aw), []int{2, 2}, []float64{0.8, 0.4, 0.4, 1.1}, confTolDefault)
		e.check(nd.Cov(e.arr([]float64{1, 2, 4}, 3), 1, nil, nil), []int{}, []float64{7.0 / 3}, confTolDefault)
	})
	e.run("AffineGrid", func(e confEnv) {
		id := e.arr([]float64{1, 0, 0, 0, 1, 0}, 1, 2, 3)
		e.check(nd.AffineGrid(id, []int{1, 1, 2, 2}, true), []int{1, 2, 2, 2}, []float64{-1, -1, 1, -1, -1, 1, 1, 1}, confTolDefault)
		e.check(nd.AffineGrid(id, []int{1, 1, 2, 2}, false), []int{1, 2, 2, 2}, []float64{-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5}, confTolDefault)
		// A shift by (0.5, 0, −1) in 3-D: x from the width of 2, y and z 0.
		shift := e.arr([]float64{1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, -1}, 1, 3, 4)
		e.check(nd.AffineGrid(shift, []int{1, 1, 1, 1, 2}, true), []int{1, 1, 1, 2, 3}, []float64{-0.5, 0, -1, 1.5, 0, -1}, confTolDefault)
	})
	if !e.dtypeSupported() {
		e.Skipf("SKIPPED: %v cannot allocate integer arrays yet (Histc, Pdist, Gcd, Lcm and weighted Cov use them)", e.dev)
	}
	e.run("Histc", func(e confEnv) {
		x := e.arr([]float64{0, 1, 2, 2, 3, -1, 4}, 7)
		e.check(nd.Histc(x, 3, 0, 3), []int{3}, []float64{1, 1, 3}, confTolExact)
		// The range of x itself, [−1, 4], in five bins of 1.
		e.check(nd.Histc(x, 5, 0, 0), []int{5}, []float64{1, 1, 1, 2, 2}, confTolExact)
	})
	e.run("Pdist", func(e confEnv) {
		x := e.arr([]float64{0, 0, 3, 4, 0, 0}, 3, 2)
		e.check(nd.Pdist(x, 2), []int{3}, []float64{5, 0, 5}, confTolDefault)
		e.check(nd.Pdist(x, 1), []int{3}, []float64{7, 0, 7}, confTolDefault)
		e.check(nd.Pdist(x, 0), []int{3}, []float64{2, 0, 2}, confTolDefault)
		e.check(nd.Pdist(x, math.Inf(1)), []int{3}, []float64{4, 0, 4}, confTolExact)
	})
	e.run("CovFweights", func(e confEnv) {
		// Frequencies [1 2 1] weigh as aweights [1 2 1] do, normalised by 4 − 1.
		x := e.arr([]float64{0, 1, 2, 2, 1, 3}, 2, 3)
		fw := nd.FromSlice(e.dev, []int64{1, 2, 1}, 3)
		e.check(nd.Cov(x, 1, fw, nil), []int{2, 2}, []float64{2.0 / 3, 1.0 / 3, 1.0 / 3, 2.75 / 3}, confTolDefault)
	})
	e.run("GcdLcm", func(e confEnv) {
		a := nd.FromSlice(e.dev, []int64{0, 6, -4, 7, 48}, 5)
		b := nd.FromSlice(e.dev, []int64{0, -4, 6, 0, 180}, 5)
		e.ints(nd.Gcd(a, b), nd.Int64, []int{5}, 0, 2, 2, 7, 12)
		e.ints(nd.Lcm(a, b), nd.Int64, []int{5}, 0, 12, 12, 0, 720)
		c := nd.FromSlice(e.dev, []int32{4, 6}, 2, 1)
		d := nd.FromSlice(e.dev, []int32{6, 9}, 2)
		e.ints(nd.Gcd(c, d), nd.Int32, []int{2, 2}, 2, 1, 6, 3)
	})
}
