package ndtest

// The cases for the ops of nd/unary.go: the elementwise functions (Neg,
// Exp, Log, ..., Softrelu) and the ops with a scalar operand (AddScalar,
// ..., Clip, MaximumScalar, MinimumScalar).

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confUnaryCase is one row of the unary table: the op, its host reference,
// the input domain [lo, hi), extra inputs that must be covered (zeros,
// extremes) and the tolerance.
type confUnaryCase struct {
	name   string
	op     func(*nd.NDArray) *nd.NDArray
	ref    func(float64) float64
	lo, hi float64
	extra  []float64
	tol    confTols
}

// refSoftrelu is ln(1+e^x) written so that it neither overflows for large x
// nor loses the tiny values for very negative x.
func refSoftrelu(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

func refSign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// confUnaryCases is the unary table. The elementary functions (exp, log,
// tanh, pow, ...) keep the default tolerance: their arguments are kept
// small enough (|x| <= 5, results below ~150) that the relative error of a
// correctly rounded or 1-2 ulp device implementation stays far inside rtol.
var confUnaryCases = []confUnaryCase{
	{"Neg", nd.Neg, func(x float64) float64 { return -x }, -3, 3, []float64{0}, confTolExact},
	{"Exp", nd.Exp, math.Exp, -5, 5, []float64{0, -30}, confTolDefault},
	{"Log", nd.Log, math.Log, 0.01, 10, []float64{1, 1e-3, 1e3}, confTolDefault},
	{"Sqrt", nd.Sqrt, math.Sqrt, 0, 10, []float64{0, 1, 1e4}, confTolDefault},
	{"Tanh", nd.Tanh, math.Tanh, -4, 4, []float64{0, -30, 30, 1e-4}, confTolDefault},
	{"Sigmoid", nd.Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -8, 8, []float64{0, -50, 50}, confTolDefault},
	{"Relu", nd.Relu, func(x float64) float64 { return math.Max(x, 0) }, -3, 3, []float64{0}, confTolExact},
	{"Abs", nd.Abs, math.Abs, -3, 3, []float64{0}, confTolExact},
	{"Sign", nd.Sign, refSign, -3, 3, []float64{0}, confTolExact},
	{"Floor", nd.Floor, math.Floor, -3, 3, []float64{0, -1, 2, -0.5, 2.5}, confTolExact},
	{"Ceil", nd.Ceil, math.Ceil, -3, 3, []float64{0, -1, 2, -0.5, 2.5}, confTolExact},
	// Halves go to the even neighbour: 0.5 → 0, 1.5 → 2, 2.5 → 2, -2.5 → -2.
	{"Round", nd.Round, math.RoundToEven, -3, 3, []float64{0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e7 + 0.5}, confTolExact},
	{"Trunc", nd.Trunc, math.Trunc, -3, 3, []float64{0, -1.5, 1.5, -0.25}, confTolExact},
	{"Erf", nd.Erf, math.Erf, -3, 3, []float64{0, 5, -5}, confTolDefault},
	{"Log1p", nd.Log1p, math.Log1p, -0.9, 5, []float64{0, 1e-6, -1e-6}, confTolDefault},
	{"Expm1", nd.Expm1, math.Expm1, -3, 3, []float64{0, 1e-6, -1e-6}, confTolDefault},
	{"Sin", nd.Sin, math.Sin, -4, 4, []float64{0}, confTolDefault},
	{"Cos", nd.Cos, math.Cos, -4, 4, []float64{0}, confTolDefault},
	{"Tan", nd.Tan, math.Tan, -1.4, 1.4, []float64{0}, confTolDefault},
	{"Asin", nd.Asin, math.Asin, -1, 1, []float64{0, 1, -1, 1e-6}, confTolDefault},
	{"Acos", nd.Acos, math.Acos, -1, 1, []float64{0, 1, -1}, confTolDefault},
	{"Atan", nd.Atan, math.Atan, -5, 5, []float64{0, 1e6, -1e6}, confTolDefault},
	{"Sinh", nd.Sinh, math.Sinh, -4, 4, []float64{0, 1e-6}, confTolDefault},
	{"Cosh", nd.Cosh, math.Cosh, -4, 4, []float64{0}, confTolDefault},
	{"Asinh", nd.Asinh, math.Asinh, -5, 5, []float64{0, 1e-6, 1e6, -1e6}, confTolDefault},
	{"Acosh", nd.Acosh, math.Acosh, 1, 10, []float64{1, 1e6}, confTolDefault},
	{"Atanh", nd.Atanh, math.Atanh, -0.99, 0.99, []float64{0, 1e-6}, confTolDefault},
	{"Log2", nd.Log2, math.Log2, 0.01, 10, []float64{1, 2, 8, 0.5, 1024}, confTolDefault},
	{"Log10", nd.Log10, math.Log10, 0.01, 10, []float64{1, 10, 1000, 0.001}, confTolDefault},
	{"Exp2", nd.Exp2, math.Exp2, -5, 5, []float64{0, 1, 10, -3}, confTolDefault},
	{"Erfinv", nd.Erfinv, math.Erfinv, -0.99, 0.99, []float64{0, 0.5, -0.999, 1e-6}, confTolDefault},
	{"Lgamma", nd.Lgamma, func(x float64) float64 { v, _ := math.Lgamma(x); return v }, 0.5, 8, []float64{1, 2, -0.5, 30}, confTolDefault},
	{"Digamma", nd.Digamma, refDigamma, 0.5, 8, []float64{1, 2, -0.5, -2.5, 30}, confTolDefault},
	{"Trigamma", nd.Trigamma, refTrigamma, 0.5, 8, []float64{1, 2, -0.5, 30}, confTolDefault},
	{"Rsqrt", nd.Rsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }, 0.1, 10, []float64{1, 4}, confTolDefault},
	{"Reciprocal", nd.Reciprocal, func(x float64) float64 { return 1 / x }, 0.25, 4, []float64{-0.5, -2, 1}, confTolDefault},
	{"Square", nd.Square, func(x float64) float64 { return x * x }, -3, 3, []float64{0}, confTolDefault},
	// Large |x| must neither overflow (ln(1+e^1000)) nor underflow to a
	// wrong value: softrelu(1000) = 1000, softrelu(-1000) = 0.
	{"Softrelu", nd.Softrelu, refSoftrelu, -5, 5, []float64{0, 20, -20, 50, -50, 100, -100, 1000, -1000}, confTolDefault},
	{"AddScalar", func(x *nd.NDArray) *nd.NDArray { return nd.AddScalar(x, 0.75) }, func(x float64) float64 { return x + 0.75 }, -3, 3, nil, confTolDefault},
	{"SubScalar", func(x *nd.NDArray) *nd.NDArray { return nd.SubScalar(x, 1.25) }, func(x float64) float64 { return x - 1.25 }, -3, 3, nil, confTolDefault},
	{"MulScalar", func(x *nd.NDArray) *nd.NDArray { return nd.MulScalar(x, -2.5) }, func(x float64) float64 { return x * -2.5 }, -3, 3, []float64{0}, confTolDefault},
	{"DivScalar", func(x *nd.NDArray) *nd.NDArray { return nd.DivScalar(x, 3) }, func(x float64) float64 { return x / 3 }, -3, 3, []float64{0}, confTolDefault},
	{"RSubScalar", func(x *nd.NDArray) *nd.NDArray { return nd.RSubScalar(2, x) }, func(x float64) float64 { return 2 - x }, -3, 3, nil, confTolDefault},
	{"RDivScalar", func(x *nd.NDArray) *nd.NDArray { return nd.RDivScalar(2, x) }, func(x float64) float64 { return 2 / x }, 0.25, 3, []float64{-0.5, -2, -3}, confTolDefault},
	{"PowScalar", func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 2.5) }, func(x float64) float64 { return math.Pow(x, 2.5) }, 0, 3, []float64{0, 1}, confTolDefault},
	// Integer exponents must work for negative bases, as in every framework.
	{"PowScalarIntNegBase", func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 3) }, func(x float64) float64 { return math.Pow(x, 3) }, -3, 3, []float64{0, -1, -2}, confTolDefault},
	{"PowScalarNegExp", func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, -1.5) }, func(x float64) float64 { return math.Pow(x, -1.5) }, 0.25, 3, []float64{1}, confTolDefault},
	{"RPowScalar", func(x *nd.NDArray) *nd.NDArray { return nd.RPowScalar(2, x) }, func(x float64) float64 { return math.Pow(2, x) }, -4, 4, []float64{0, 1, -1}, confTolDefault},
	{"Clip", func(x *nd.NDArray) *nd.NDArray { return nd.Clip(x, -0.5, 0.75) }, func(x float64) float64 { return math.Min(math.Max(x, -0.5), 0.75) }, -2, 2, []float64{-0.5, 0.75}, confTolExact},
	{"MaximumScalar", func(x *nd.NDArray) *nd.NDArray { return nd.MaximumScalar(x, 0.25) }, func(x float64) float64 { return math.Max(x, 0.25) }, -2, 2, []float64{0.25}, confTolExact},
	{"MinimumScalar", func(x *nd.NDArray) *nd.NDArray { return nd.MinimumScalar(x, -0.25) }, func(x float64) float64 { return math.Min(x, -0.25) }, -2, 2, []float64{-0.25}, confTolExact},
}

// confUnary runs the unary table on a 3-D input (whose size is not a
// multiple of common vector widths) with the extra values appended.
func confUnary(e confEnv) {
	for i, c := range confUnaryCases {
		e.run(c.name, func(e confEnv) {
			v := append(confUniform(uint64(100+i), 3*5*7, c.lo, c.hi), c.extra...)
			v = e.round(v)
			shape := []int{len(v)}
			if len(c.extra) == 0 {
				shape = []int{3, 5, 7}
			}
			want := make([]float64, len(v))
			for j, x := range v {
				want[j] = c.ref(x)
			}
			e.check(c.op(e.arr(v, shape...)), shape, want, c.tol)
		})
	}
}

// gradUnaryCases checks every elementwise unary op and scalar op, with
// inputs inside the op's domain and away from its kinks.
func gradUnaryCases(dev ctx.Context) []gradCase {
	shape := []int{3, 5}
	sgn := func() []*nd.NDArray { return gradIn(Rand(dev, 11, -2, 2, shape...)) }
	pos := func() []*nd.NDArray { return gradIn(gradPositive(dev, 12, shape...)) }
	nz := func() []*nd.NDArray { return gradIn(gradNonzero(dev, 13, shape...)) }
	away := func(kinks ...float64) func() []*nd.NDArray {
		return func() []*nd.NDArray { return gradIn(AwayFrom(dev, 14, -2, 2, 0.1, kinks, shape...)) }
	}
	u := func(f func(x *nd.NDArray) *nd.NDArray) func(in []*nd.NDArray) *nd.NDArray {
		return func(in []*nd.NDArray) *nd.NDArray { return f(in[0]) }
	}
	cases := []gradCase{
		{op: "Neg", name: "2-D", f: u(nd.Neg), in: sgn},
		{op: "Exp", name: "2-D", f: u(nd.Exp), in: sgn},
		{op: "Log", name: "positive", f: u(nd.Log), in: pos},
		{op: "Sqrt", name: "positive", f: u(nd.Sqrt), in: pos},
		{op: "Square", name: "2-D", f: u(nd.Square), in: sgn},
		{op: "Abs", name: "away-from-0", f: u(nd.Abs), in: nz},
		{op: "Tanh", name: "2-D", f: u(nd.Tanh), in: sgn},
		{op: "Sigmoid", name: "2-D", f: u(nd.Sigmoid), in: func() []*nd.NDArray { return gradIn(Rand(dev, 15, -4, 4, shape...)) }},
		{op: "Relu", name: "away-from-0", f: u(nd.Relu), in: nz},
		{op: "Softrelu", name: "2-D", f: u(nd.Softrelu), in: func() []*nd.NDArray { return gradIn(Rand(dev, 16, -4, 4, shape...)) }},
		// Large inputs exercise the overflow-free formulation.
		{op: "Softrelu", name: "large", f: u(nd.Softrelu), in: func() []*nd.NDArray { return gradIn(Rand(dev, 17, -40, 40, shape...)) }},
		{op: "AddScalar", name: "2-D", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.AddScalar(x, 0.7) }), in: sgn},
		{op: "SubScalar", name: "2-D", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.SubScalar(x, 0.7) }), in: sgn},
		{op: "MulScalar", name: "2-D", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.MulScalar(x, -1.3) }), in: sgn},
		{op: "DivScalar", name: "2-D", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.DivScalar(x, 0.7) }), in: sgn},
		{op: "RSubScalar", name: "2-D", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.RSubScalar(0.7, x) }), in: sgn},
		{op: "RDivScalar", name: "positive", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.RDivScalar(1.5, x) }), in: pos},
		{op: "RDivScalar", name: "nonzero", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.RDivScalar(-2, x) }), in: nz},
		{op: "PowScalar", name: "integer", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 3) }), in: sgn},
		{op: "PowScalar", name: "non-integer", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 2.5) }), in: pos},
		{op: "PowScalar", name: "negative", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, -1.5) }), in: pos},
		{op: "PowScalar", name: "half", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.PowScalar(x, 0.5) }), in: pos},
		{op: "RPowScalar", name: "base-2.5", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.RPowScalar(2.5, x) }), in: sgn},
		{op: "RPowScalar", name: "base-0.5", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.RPowScalar(0.5, x) }), in: sgn},
		// Values on both sides of both bounds, none within 0.1 of them.
		{op: "Clip", name: "away-from-bounds", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.Clip(x, -0.5, 0.8) }), in: away(-0.5, 0.8)},
		{op: "MaximumScalar", name: "away-from-scalar", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.MaximumScalar(x, 0.3) }), in: away(0.3)},
		{op: "MinimumScalar", name: "away-from-scalar", f: u(func(x *nd.NDArray) *nd.NDArray { return nd.MinimumScalar(x, -0.3) }), in: away(-0.3)},
	}
	// The same ops on a 4-D input: elementwise ops must not depend on rank.
	for i, op := range []struct {
		name string
		f    func(x *nd.NDArray) *nd.NDArray
	}{{"Tanh", nd.Tanh}, {"Exp", nd.Exp}, {"Square", nd.Square}} {
		cases = append(cases, gradCase{
			op: op.name, name: "4-D", f: u(op.f),
			in: func() []*nd.NDArray { return gradIn(gradSigned(dev, 20+uint64(i), 2, 2, 3, 2)) },
		})
	}
	return cases
}

// refDigamma is ψ by the recurrence up to 20 and four terms of the
// asymptotic series (a reference written apart from the backends'; below
// 0 by reflection).
func refDigamma(x float64) float64 {
	if x < 0 {
		return refDigamma(1-x) - math.Pi/math.Tan(math.Pi*x)
	}
	s := 0.0
	for ; x < 20; x++ {
		s -= 1 / x
	}
	f := 1 / (x * x)
	return s + math.Log(x) - 1/(2*x) - f/12 + f*f/120 - f*f*f/252 + f*f*f*f/240
}

// refTrigamma is ψ′ likewise.
func refTrigamma(x float64) float64 {
	if x < 0 {
		s := math.Sin(math.Pi * x)
		return math.Pi*math.Pi/(s*s) - refTrigamma(1-x)
	}
	acc := 0.0
	for ; x < 20; x++ {
		acc += 1 / (x * x)
	}
	f := 1 / (x * x)
	return acc + 1/x + f/2 + f/x*(1.0/6-f/30+f*f/42-f*f*f/30)
}
