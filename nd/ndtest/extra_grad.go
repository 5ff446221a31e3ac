package ndtest

// The gradient cases for the differentiable ops of extra.go's families:
// Kron, Cross, Tensordot, BlockDiag, CartesianProd, Vander, Diff, Rot90,
// the trapezoidal rules, Cov, Corrcoef, Pdist and AffineGrid.

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradExtraCases checks the gradients of extra.go's ops, in float64.
func gradExtraCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	g.add("Kron", "matrices", g.two([]int{2, 3}, []int{3, 2}), func(in []*nd.NDArray) *nd.NDArray { return nd.Kron(in[0], in[1]) })
	g.add("Kron", "ranks", g.two([]int{2}, []int{2, 1, 3}), func(in []*nd.NDArray) *nd.NDArray { return nd.Kron(in[0], in[1]) })
	g.add("Cross", "last", g.two([]int{4, 3}, []int{4, 3}), func(in []*nd.NDArray) *nd.NDArray { return nd.Cross(in[0], in[1], -1) })
	g.add("Cross", "broadcast", g.two([]int{1, 3, 2}, []int{4, 3, 1}), func(in []*nd.NDArray) *nd.NDArray { return nd.Cross(in[0], in[1], 1) })
	g.add("Tensordot", "two", g.two([]int{2, 3, 4}, []int{4, 3, 5}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Tensordot(in[0], in[1], []int{1, 2}, []int{1, 0})
	})
	g.add("Tensordot", "size1", g.two([]int{2, 1}, []int{3, 4}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Tensordot(in[0], in[1], []int{-1}, []int{0})
	})
	blocks := func() []*nd.NDArray {
		return gradIn(gradSigned(dev, 81, 1, 1), gradSigned(dev, 82, 3), gradSigned(dev, 83, 2, 2))
	}
	g.add("BlockDiag", "mixed", blocks, func(in []*nd.NDArray) *nd.NDArray { return nd.BlockDiag(in...) })
	g.add("CartesianProd", "two", g.two([]int{2}, []int{3}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.CartesianProd(in[0], in[1])
	})
	g.add("Vander", "increasing", g.one(4), func(in []*nd.NDArray) *nd.NDArray { return nd.Vander(in[0], 5, true) })
	zeroed := func() []*nd.NDArray {
		v := gradSigned(dev, 84, 4).Float64s()
		v[2] = 0
		return gradIn(nd.FromSlice(dev, v, 4))
	}
	g.add("Vander", "zero", zeroed, func(in []*nd.NDArray) *nd.NDArray { return nd.Vander(in[0], -1, false) })
	g.add("Diff", "second", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Diff(in[0], 2, 1, nil, nil) })
	joined := func() []*nd.NDArray {
		return gradIn(gradSigned(dev, 85, 3, 4), gradSigned(dev, 86, 2, 4), gradSigned(dev, 87, 1, 4))
	}
	g.add("Diff", "prepend-append", joined, func(in []*nd.NDArray) *nd.NDArray { return nd.Diff(in[0], 3, 0, in[1], in[2]) })
	g.add("Rot90", "once", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Rot90(in[0], 1, [2]int{0, 2}) })
	g.add("Rot90", "back", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Rot90(in[0], -1, [2]int{-1, 1}) })
	g.add("Trapezoid", "dx", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Trapezoid(in[0], 0.5, 1) })
	g.add("TrapezoidX", "positions", g.two([]int{5, 2}, []int{5}), func(in []*nd.NDArray) *nd.NDArray { return nd.TrapezoidX(in[0], in[1], 0) })
	g.add("CumulativeTrapezoid", "dx", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.CumulativeTrapezoid(in[0], 2, -1) })
	g.add("CumulativeTrapezoidX", "broadcast", g.two([]int{2, 4, 3}, []int{4, 3}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.CumulativeTrapezoidX(in[0], in[1], 1)
	})
	g.add("Cov", "unbiased", g.one(3, 6), func(in []*nd.NDArray) *nd.NDArray { return nd.Cov(in[0], 1, nil, nil) })
	fw := g.lazy([]int{1, 2, 0, 3, 1, 1}, 6)
	weighted := func() []*nd.NDArray { return gradIn(gradSigned(dev, 88, 3, 6), gradPositive(dev, 89, 6)) }
	g.add("Cov", "weights", weighted, func(in []*nd.NDArray) *nd.NDArray { return nd.Cov(in[0], 1, fw(in), in[1]) })
	g.add("Cov", "aweights", weighted, func(in []*nd.NDArray) *nd.NDArray { return nd.Cov(in[0], 2, nil, in[1]) })
	g.add("Corrcoef", "rows", g.one(3, 6), func(in []*nd.NDArray) *nd.NDArray { return nd.Corrcoef(in[0]) })
	for _, p := range []float64{2, 1, 1.5, 3, math.Inf(1)} {
		g.add("Pdist", fmt.Sprint("p", p), g.one(4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Pdist(in[0], p) })
	}
	// Rows 0 and 2 coincide: their distance's gradient is 0, as is the
	// central difference across that kink.
	same := func() []*nd.NDArray {
		v := gradSigned(dev, 90, 4, 3).Float64s()
		copy(v[6:9], v[0:3])
		return gradIn(nd.FromSlice(dev, v, 4, 3))
	}
	g.add("Pdist", "zero-distance", same, func(in []*nd.NDArray) *nd.NDArray { return nd.Pdist(in[0], 2) })
	for _, align := range []bool{false, true} {
		name := map[bool]string{false: "edges", true: "corners"}[align]
		g.add("AffineGrid", "2d-"+name, g.one(2, 2, 3), func(in []*nd.NDArray) *nd.NDArray {
			return nd.AffineGrid(in[0], []int{2, 1, 3, 4}, align)
		})
		g.add("AffineGrid", "3d-"+name, g.one(1, 3, 4), func(in []*nd.NDArray) *nd.NDArray {
			return nd.AffineGrid(in[0], []int{1, 1, 2, 3, 2}, align)
		})
	}
	return g.cases
}
