package ndtest

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The cases for the ops of nd/index.go, nd/where.go, nd/slice.go,
// nd/sort.go and nd/math.go: gathers and scatters, masks, strided slices,
// scans, sorting, norms and the elementary functions.

// gradIndexCases checks the indexing ops' gradients; index arrays are
// Int64 and captured by the cases (they get no gradient).
func gradIndexCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	add := func(op, name string, in func() []*nd.NDArray, f func(in []*nd.NDArray) *nd.NDArray) {
		cases = append(cases, gradCase{op: op, name: name, in: in, f: f})
	}
	one := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradSigned(dev, 61, shape...)) }
	}
	two := func(a, b []int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradSigned(dev, 62, a...), gradSigned(dev, 63, b...)) }
	}
	ints := func(v []int, shape ...int) *nd.NDArray { return nd.FromSlice(dev, v, shape...) }

	// Repeated and out-of-range indices exercise the scatter-add backward.
	idx := ints([]int{2, 0, 2, 3, 5, -1}, 2, 3)
	add("Take", "axis0-clip", one(4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx, 0, nd.TakeClip) })
	add("Take", "axis1-wrap", one(2, 4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx, 1, nd.TakeWrap) })
	add("Take", "last-axis", one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx, -1, nd.TakeClip) })

	gidx := ints([]int{0, 2, 2, 1, 1, 1, 3, 0}, 2, 4)
	add("Gather", "axis1-repeats", one(2, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Gather(in[0], 1, gidx) })
	gidx0 := ints([]int{1, 0, 2, 2, 0, 1}, 2, 3)
	add("Gather", "axis0", one(3, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Gather(in[0], 0, gidx0) })
	add("ScatterAdd", "axis1", two([]int{2, 4}, []int{2, 4}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.ScatterAdd(in[0], 1, gidx, in[1])
	})
	iidx := ints([]int{3, 0, 3})
	add("IndexAdd", "axis1-repeats", two([]int{2, 4, 2}, []int{2, 3, 2}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.IndexAdd(in[0], 1, iidx, in[1])
	})

	cond := nd.FromSlice(dev, []bool{true, false, false, true, true, false, true, false}, 2, 1, 4)
	add("Where", "broadcast", two([]int{3, 4}, []int{2, 3, 1}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Where(cond, in[0], in[1])
	})
	add("MaskedFill", "rows", one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.MaskedFill(in[0], cond, -5) })

	add("Slice", "steps", one(6, 4, 5), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Slice(in[0], nd.SpanStep(1, 5, 2), nd.Every(-1), nd.From(-3))
	})
	add("Slice", "negative-step-span", one(7, 3), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Slice(in[0], nd.SpanStep(5, 0, -2), nd.Span(1, 3))
	})
	add("Flip", "two-axes", one(3, 2, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Flip(in[0], 0, 2) })
	add("SwapAxes", "0-2", one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.SwapAxes(in[0], 0, 2) })
	add("Tile", "more-reps", one(2, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Tile(in[0], 2, 1, 3) })
	add("Repeat", "axis1", one(2, 3, 2), func(in []*nd.NDArray) *nd.NDArray { return nd.Repeat(in[0], 3, 1) })

	for _, ax := range []int{0, 1, 2} {
		add("Cumsum", "axis"+string(rune('0'+ax)), one(3, 4, 2), func(in []*nd.NDArray) *nd.NDArray { return nd.Cumsum(in[0], ax) })
	}
	distinct := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradDistinct(dev, 64, shape...)) }
	}
	add("Sort", "axis1-desc", distinct(3, 5), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.Sort(in[0], 1, true); return v })
	add("Sort", "axis0-asc", distinct(4, 3), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.Sort(in[0], 0, false); return v })
	add("TopK", "largest", distinct(3, 6), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.TopK(in[0], 2, -1, true); return v })
	add("TopK", "smallest-axis0", distinct(5, 2), func(in []*nd.NDArray) *nd.NDArray { v, _ := nd.TopK(in[0], 3, 0, false); return v })

	nonzero := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradNonzero(dev, 65, shape...)) }
	}
	add("Norm", "L1-axis1", nonzero(3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Norm(in[0], 1, false, 1) })
	add("Norm", "L2-all", one(3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Norm(in[0], 2, false) })
	add("Norm", "L2-keep-axes02", one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Norm(in[0], 2, true, 0, 2) })
	add("Var", "ddof1-axis1", one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Var(in[0], 1, false, 1) })
	add("Var", "ddof0-all", one(2, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Var(in[0], 0, true) })
	add("Std", "ddof1-axis0", one(4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Std(in[0], 1, false, 0) })
	add("LogSumExp", "axis1", one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.LogSumExp(in[0], false, 1) })
	add("LogSumExp", "all-keep", one(2, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.LogSumExp(in[0], true) })

	positive := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradPositive(dev, 66, shape...)) }
	}
	for _, c := range []struct {
		op string
		in func() []*nd.NDArray
		f  func(*nd.NDArray) *nd.NDArray
	}{
		{"Erf", one(3, 4), nd.Erf},
		{"Log1p", positive(3, 4), nd.Log1p},
		{"Expm1", one(3, 4), nd.Expm1},
		{"Sin", one(3, 4), nd.Sin},
		{"Cos", one(3, 4), nd.Cos},
		{"Rsqrt", positive(3, 4), nd.Rsqrt},
		{"Reciprocal", nonzero(3, 4), nd.Reciprocal},
	} {
		add(c.op, "3x4", c.in, func(in []*nd.NDArray) *nd.NDArray { return c.f(in[0]) })
	}
	return cases
}
