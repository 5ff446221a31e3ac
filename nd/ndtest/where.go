package ndtest

// The cases for the ops of nd/where.go: Where and MaskedFill. Their
// forward values with integer operands are in the dtypes family
// (dtype.go).

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradWhereCases checks Where (with a broadcast Bool condition) and
// MaskedFill.
func gradWhereCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	cond := func(in []*nd.NDArray) *nd.NDArray {
		return sessionIn(in).FromSlice(dev, []bool{true, false, false, true, true, false, true, false}, 2, 1, 4)
	}
	g.add("Where", "broadcast", g.two([]int{3, 4}, []int{2, 3, 1}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Where(cond(in), in[0], in[1])
	})
	g.add("MaskedFill", "rows", g.one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.MaskedFill(in[0], cond(in), -5) })
	return g.cases
}
