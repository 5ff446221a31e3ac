package nd

import "math"

// unaryDiff is the differentiable backward function of a unary op: x's
// gradient from the output gradient g, the input x, the output y and the
// op's scalar, made of recorded ops (so that GradWith's CreateGraph can
// differentiate it again).
type unaryDiff func(g, x, y *NDArray, s float64) *NDArray

// maskDiffOps are the unary ops whose derivative is piecewise constant:
// their differentiable backward multiplies g by the derivative their own
// backward gives, a constant of the pass (its own derivative is zero
// wherever it exists), so that the kinks keep their first-order
// conventions.
var maskDiffOps = map[string]bool{"Abs": true, "Relu": true, "Clip": true, "MaximumScalar": true, "MinimumScalar": true}

// unaryDiffs are the differentiable backward functions of the unary ops,
// by op name (filled in init: they call the ops that use them). Digamma has none (its derivative, Trigamma, is not
// differentiable here).
var unaryDiffs map[string]unaryDiff

func init() {
	unaryDiffs = map[string]unaryDiff{
		"Neg":        func(g, _, _ *NDArray, _ float64) *NDArray { return Neg(g) },
		"Exp":        func(g, _, y *NDArray, _ float64) *NDArray { return Mul(g, y) },
		"Log":        func(g, x, _ *NDArray, _ float64) *NDArray { return Div(g, x) },
		"Sqrt":       func(g, _, y *NDArray, _ float64) *NDArray { return Div(MulScalar(g, 0.5), y) },
		"Square":     func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, MulScalar(x, 2)) },
		"Tanh":       func(g, _, y *NDArray, _ float64) *NDArray { return Mul(g, RSubScalar(1, Square(y))) },
		"Sigmoid":    func(g, _, y *NDArray, _ float64) *NDArray { return Mul(g, Mul(y, RSubScalar(1, y))) },
		"Softrelu":   func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Sigmoid(x)) },
		"AddScalar":  func(g, _, _ *NDArray, _ float64) *NDArray { return g },
		"MulScalar":  func(g, _, _ *NDArray, s float64) *NDArray { return MulScalar(g, s) },
		"RSubScalar": func(g, _, _ *NDArray, _ float64) *NDArray { return Neg(g) },
		"RDivScalar": func(g, x, y *NDArray, _ float64) *NDArray { return Neg(Mul(g, Div(y, x))) },
		"PowScalar": func(g, x, _ *NDArray, p float64) *NDArray {
			return Mul(g, MulScalar(PowScalar(x, p-1), p))
		},
		"RPowScalar": func(g, _, y *NDArray, s float64) *NDArray { return MulScalar(Mul(g, y), math.Log(s)) },
		"Lgamma":     func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Digamma(x)) },
		"Erf": func(g, x, _ *NDArray, _ float64) *NDArray {
			return Mul(g, MulScalar(Exp(Neg(Square(x))), 2/math.Sqrt(math.Pi)))
		},
		"Log1p":      func(g, x, _ *NDArray, _ float64) *NDArray { return Div(g, AddScalar(x, 1)) },
		"Expm1":      func(g, _, y *NDArray, _ float64) *NDArray { return Mul(g, AddScalar(y, 1)) },
		"Sin":        func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Cos(x)) },
		"Cos":        func(g, x, _ *NDArray, _ float64) *NDArray { return Neg(Mul(g, Sin(x))) },
		"Rsqrt":      func(g, _, y *NDArray, _ float64) *NDArray { return Mul(g, MulScalar(PowScalar(y, 3), -0.5)) },
		"Reciprocal": func(g, _, y *NDArray, _ float64) *NDArray { return Neg(Mul(g, Square(y))) },
		"Tan":        func(g, _, y *NDArray, _ float64) *NDArray { return Mul(g, AddScalar(Square(y), 1)) },
		"Asin":       func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Rsqrt(RSubScalar(1, Square(x)))) },
		"Acos":       func(g, x, _ *NDArray, _ float64) *NDArray { return Neg(Mul(g, Rsqrt(RSubScalar(1, Square(x))))) },
		"Atan":       func(g, x, _ *NDArray, _ float64) *NDArray { return Div(g, AddScalar(Square(x), 1)) },
		"Sinh":       func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Cosh(x)) },
		"Cosh":       func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Sinh(x)) },
		"Asinh":      func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Rsqrt(AddScalar(Square(x), 1))) },
		"Acosh":      func(g, x, _ *NDArray, _ float64) *NDArray { return Mul(g, Rsqrt(AddScalar(Square(x), -1))) },
		"Atanh":      func(g, x, _ *NDArray, _ float64) *NDArray { return Div(g, RSubScalar(1, Square(x))) },
		"Log2":       func(g, x, _ *NDArray, _ float64) *NDArray { return Div(g, MulScalar(x, math.Ln2)) },
		"Log10":      func(g, x, _ *NDArray, _ float64) *NDArray { return Div(g, MulScalar(x, math.Ln10)) },
		"Exp2":       func(g, _, y *NDArray, _ float64) *NDArray { return MulScalar(Mul(g, y), math.Ln2) },
		"Erfinv": func(g, _, y *NDArray, _ float64) *NDArray {
			return Mul(g, MulScalar(Exp(Square(y)), math.Sqrt(math.Pi)/2))
		},
	}
}

// unaryDiffFor returns the differentiable backward function of the unary
// op named op, whose own backward is grad (nil when it has none).
func unaryDiffFor(op string, x, y *NDArray, s float64, grad func(g, x, y *NDArray) *NDArray) BackwardFunc {
	if maskDiffOps[op] {
		return func(g *NDArray, _ []bool) []*NDArray {
			return []*NDArray{Mul(g, grad(OnesLike(g), x, y))}
		}
	}
	d, ok := unaryDiffs[op]
	if !ok {
		return nil
	}
	return func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{d(g, x, y, s)} }
}

// geluDerivative returns GELU's derivative at x in recorded ops: Φ(x) +
// x·φ(x), or with tanhApprox the derivative of 0.5·x·(1 + tanh(u)), u =
// √(2/π)·(x + 0.044715·x³).
func geluDerivative(x *NDArray, tanhApprox bool) *NDArray {
	if tanhApprox {
		c := math.Sqrt(2 / math.Pi)
		t := Tanh(MulScalar(Add(x, MulScalar(PowScalar(x, 3), 0.044715)), c))
		du := MulScalar(AddScalar(MulScalar(Square(x), 3*0.044715), 1), c)
		return Add(MulScalar(AddScalar(t, 1), 0.5), Mul(MulScalar(x, 0.5), Mul(RSubScalar(1, Square(t)), du)))
	}
	cdf := MulScalar(AddScalar(Erf(MulScalar(x, 1/math.Sqrt2)), 1), 0.5)
	pdf := MulScalar(Exp(MulScalar(Square(x), -0.5)), 1/math.Sqrt(2*math.Pi))
	return Add(cdf, Mul(x, pdf))
}
