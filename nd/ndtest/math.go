package ndtest

// The cases for the ops of nd/math.go: LogSumExp and the elementary
// functions Erf, Log1p, Expm1, Sin, Cos, Rsqrt and Reciprocal, and those of
// nd/trig.go (trigonometric, hyperbolic, base-2/10, Erfinv).

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradMathCases checks LogSumExp (skipped, like the index ops, on a device
// without integer arrays) and every elementary function inside its domain.
func gradMathCases(dev ctx.Context) []gradCase {
	g := &gradBuilder{dev: dev}
	g.add("LogSumExp", "axis1", g.one(3, 5), func(in []*nd.NDArray) *nd.NDArray { return nd.LogSumExp(in[0], 1) })
	g.add("LogSumExp", "all-keep", g.one(2, 3), func(in []*nd.NDArray) *nd.NDArray { return nd.LogSumExpKeepDims(in[0]) })

	nonzero := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradNonzero(dev, 65, shape...)) }
	}
	// (−0.9, 0.9) and (1.1, 3): inside the domains, away from their edges.
	unit := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(Rand(dev, 67, -0.9, 0.9, shape...)) }
	}
	aboveOne := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(Rand(dev, 68, 1.1, 3, shape...)) }
	}
	positive := func(shape ...int) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(gradPositive(dev, 66, shape...)) }
	}
	for _, c := range []struct {
		op string
		in func() []*nd.NDArray
		f  func(*nd.NDArray) *nd.NDArray
	}{
		{"Erf", g.one(3, 4), nd.Erf},
		{"Log1p", positive(3, 4), nd.Log1p},
		{"Expm1", g.one(3, 4), nd.Expm1},
		{"Sin", g.one(3, 4), nd.Sin},
		{"Cos", g.one(3, 4), nd.Cos},
		{"Rsqrt", positive(3, 4), nd.Rsqrt},
		{"Tan", g.one(3, 4), nd.Tan},
		{"Asin", unit(3, 4), nd.Asin},
		{"Acos", unit(3, 4), nd.Acos},
		{"Atan", g.one(3, 4), nd.Atan},
		{"Sinh", g.one(3, 4), nd.Sinh},
		{"Cosh", g.one(3, 4), nd.Cosh},
		{"Asinh", g.one(3, 4), nd.Asinh},
		{"Acosh", aboveOne(3, 4), nd.Acosh},
		{"Atanh", unit(3, 4), nd.Atanh},
		{"Log2", positive(3, 4), nd.Log2},
		{"Log10", positive(3, 4), nd.Log10},
		{"Exp2", g.one(3, 4), nd.Exp2},
		{"Erfinv", unit(3, 4), nd.Erfinv},
		{"Lgamma", positive(3, 4), nd.Lgamma},
		{"Digamma", positive(3, 4), nd.Digamma},
		{"Reciprocal", nonzero(3, 4), nd.Reciprocal},
	} {
		g.cases = append(g.cases, gradCase{op: c.op, name: "3x4", in: c.in,
			f: func(in []*nd.NDArray) *nd.NDArray { return c.f(in[0]) }})
	}
	return g.cases
}

// confLogSumExp is part of the Scans sub-test of the index family
// (index.go): LogSumExp on values where a formula without the maximum
// subtracted overflows, and on a row of -Inf.
func confLogSumExp(e confEnv) {
	e.check(nd.LogSumExp(e.arr([]float64{1000, 1000, math.Inf(-1), math.Inf(-1)}, 2, 2), 1), []int{2},
		[]float64{1000 + math.Ln2, math.Inf(-1)}, confTolDefault)
	e.check(nd.LogSumExpKeepDims(e.arr([]float64{0, 0, 0, 0}, 2, 2), 0), []int{1, 2},
		[]float64{math.Ln2, math.Ln2}, confTolDefault)
}
