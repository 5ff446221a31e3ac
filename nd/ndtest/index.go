package ndtest

import (
	"math"

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
	// Most of these ops use Int64 indices or Bool masks; a device that
	// cannot hold them skips the cases (loudly).
	ints := func() string {
		if !(confEnv{dev: dev}).dtypeSupported() {
			return "SKIPPED: " + dev.String() + " cannot hold integer or bool arrays yet"
		}
		return ""
	}
	add := func(op, name string, in func() []*nd.NDArray, f func(in []*nd.NDArray) *nd.NDArray) {
		cases = append(cases, gradCase{op: op, name: name, in: in, f: f, skip: ints})
	}
	one := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradSigned(dev, 61, shape...)) }
	}
	two := func(a, b []int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradSigned(dev, 62, a...), gradSigned(dev, 63, b...)) }
	}
	lazy := func(v []int, shape ...int) func() *nd.NDArray {
		return func() *nd.NDArray { return nd.FromSlice(dev, v, shape...) }
	}

	// Repeated and out-of-range indices exercise the scatter-add backward.
	idx := lazy([]int{2, 0, 2, 3, 5, -1}, 2, 3)
	add("Take", "axis0-clip", one(4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx(), 0, nd.TakeClip) })
	add("Take", "axis1-wrap", one(2, 4, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx(), 1, nd.TakeWrap) })
	add("Take", "last-axis", one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.Take(in[0], idx(), -1, nd.TakeClip) })

	gidx := lazy([]int{0, 2, 2, 1, 1, 1, 3, 0}, 2, 4)
	add("Gather", "axis1-repeats", one(2, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.Gather(in[0], 1, gidx()) })
	gidx0 := lazy([]int{1, 0, 2, 2, 0, 1}, 2, 3)
	add("Gather", "axis0", one(3, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.Gather(in[0], 0, gidx0()) })
	add("ScatterAdd", "axis1", two([]int{2, 4}, []int{2, 4}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.ScatterAdd(in[0], 1, gidx(), in[1])
	})
	iidx := lazy([]int{3, 0, 3})
	add("IndexAdd", "axis1-repeats", two([]int{2, 4, 2}, []int{2, 3, 2}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.IndexAdd(in[0], 1, iidx(), in[1])
	})

	cond := func() *nd.NDArray {
		return nd.FromSlice(dev, []bool{true, false, false, true, true, false, true, false}, 2, 1, 4)
	}
	add("Where", "broadcast", two([]int{3, 4}, []int{2, 3, 1}), func(in []*nd.NDArray) *nd.NDArray {
		return nd.Where(cond(), in[0], in[1])
	})
	add("MaskedFill", "rows", one(2, 3, 4), func(in []*nd.NDArray) *nd.NDArray { return nd.MaskedFill(in[0], cond(), -5) })

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

	for _, c := range []struct {
		name string
		mode nd.PadMode
	}{{"constant", nd.PadConstant}, {"edge", nd.PadEdge}, {"reflect", nd.PadReflect}} {
		add("Pad", c.name, one(3, 4), func(in []*nd.NDArray) *nd.NDArray {
			return nd.Pad(in[0], [][2]int{{1, 2}, {3, 1}}, c.mode, 0.5)
		})
	}

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
		cases = append(cases, gradCase{op: c.op, name: "3x4", in: c.in,
			f: func(in []*nd.NDArray) *nd.NDArray { return c.f(in[0]) }})
	}
	return cases
}

// confIndex checks the forward values of the shape-moving indexing ops
// against hand-computed results.
func confIndex(e confEnv) {
	if !e.dtypeSupported() {
		e.Skipf("SKIPPED: %v cannot hold integer index arrays yet", e.dev)
	}
	x := e.arr([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	e.run("Pad", func(e confEnv) {
		w := [][2]int{{0, 1}, {2, 2}}
		e.check(nd.Pad(x, w, nd.PadConstant, -1), []int{3, 7}, []float64{
			-1, -1, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1}, confTolExact)
		e.check(nd.Pad(x, w, nd.PadEdge, 0), []int{3, 7}, []float64{
			1, 1, 1, 2, 3, 3, 3, 4, 4, 4, 5, 6, 6, 6, 4, 4, 4, 5, 6, 6, 6}, confTolExact)
		e.check(nd.Pad(x, [][2]int{{1, 0}, {2, 1}}, nd.PadReflect, 0), []int{3, 6}, []float64{
			6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}, confTolExact)
	})
	e.run("Slice", func(e confEnv) {
		e.check(nd.Slice(x, nd.Every(-1), nd.SpanStep(2, -4, -2)), []int{2, 2}, []float64{6, 4, 3, 1}, confTolExact)
		e.check(nd.Slice(x, nd.From(1), nd.Span(-2, 10)), []int{1, 2}, []float64{5, 6}, confTolExact)
		e.check(nd.Slice(x, nd.Span(1, 1)), []int{0, 3}, []float64{}, confTolExact)
		e.check(nd.Flip(x), []int{2, 3}, []float64{6, 5, 4, 3, 2, 1}, confTolExact)
		e.check(nd.SwapAxes(x, 0, 1), []int{3, 2}, []float64{1, 4, 2, 5, 3, 6}, confTolExact)
		e.check(nd.Tile(x, 2, 1), []int{4, 3}, []float64{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, confTolExact)
		e.check(nd.Repeat(x, 2, 1), []int{2, 6}, []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}, confTolExact)
	})
	e.run("Gather", func(e confEnv) {
		idx := nd.FromSlice(e.dev, []int64{2, 2, 0, 1, 0, 1}, 2, 3)
		e.check(nd.Gather(x, 1, idx), []int{2, 3}, []float64{3, 3, 1, 5, 4, 5}, confTolExact)
		e.check(nd.ScatterAdd(x, 1, idx, x), []int{2, 3}, []float64{4, 2, 6, 9, 15, 6}, confTolExact)
		e.check(nd.Take(x, nd.FromSlice(e.dev, []int64{1, 1, 0}), 0, nd.TakeClip), []int{3, 3},
			[]float64{4, 5, 6, 4, 5, 6, 1, 2, 3}, confTolExact)
		e.check(nd.IndexAdd(x, 1, nd.FromSlice(e.dev, []int64{0, 0}), nd.Slice(x, nd.All(), nd.Span(0, 2))),
			[]int{2, 3}, []float64{4, 2, 3, 13, 5, 6}, confTolExact)
	})
	e.run("Scans", func(e confEnv) {
		e.check(nd.Cumsum(x, 1), []int{2, 3}, []float64{1, 3, 6, 4, 9, 15}, confTolDefault)
		v, i := nd.TopK(e.arr([]float64{3, 1, 4, 1, 5, 9, 2, 6}, 2, 4), 2, 1, true)
		e.check(v, []int{2, 2}, []float64{4, 3, 9, 6}, confTolExact)
		e.checkAs(i, nd.Int64, []int{2, 2}, []float64{2, 0, 1, 3}, confTolExact)
		e.check(nd.Norm(x, 2, false, 1), []int{2}, []float64{math.Sqrt(14), math.Sqrt(77)}, confTolDefault)
		e.check(nd.LogSumExp(e.arr([]float64{1000, 1000, math.Inf(-1), math.Inf(-1)}, 2, 2), false, 1), []int{2},
			[]float64{1000 + math.Ln2, math.Inf(-1)}, confTolDefault)
	})
}
