package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// The trigonometric, hyperbolic and base-2/base-10 functions and erfinv,
// elementwise on floating-point arrays, with PyTorch's gradients (its
// derivatives.yaml formulas, so values at the edges of a domain — ±1 for
// Asin, 1 for Acosh — are the same infinities and NaNs). Under autocast
// Tan, Asin, Acos, Sinh, Cosh, Log2, Log10 and Erfinv run in float32, as
// in PyTorch's float32 list.

// Tan returns the tangent of x (radians).
func Tan(x *NDArray) *NDArray {
	return unaryOp("Tan", backend.Tan, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		t := unaryRaw("Tan", backend.Square, y, 0, 0) // 1 + tan²x
		unaryInPlace(t, backend.AddScalar, 1, 0)
		return mulReleasing(g, t)
	})
}

// Asin returns the arcsine of x, in [−π/2, π/2] (NaN outside [−1, 1]).
func Asin(x *NDArray) *NDArray {
	return unaryOp("Asin", backend.Asin, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return mulReleasing(g, oneMinusSquareRsqrt("Asin", x))
	})
}

// Acos returns the arccosine of x, in [0, π] (NaN outside [−1, 1]).
func Acos(x *NDArray) *NDArray {
	return unaryOp("Acos", backend.Acos, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		t := oneMinusSquareRsqrt("Acos", x)
		unaryInPlace(t, backend.Neg, 0, 0)
		return mulReleasing(g, t)
	})
}

// oneMinusSquareRsqrt returns 1/√(1 − x²).
func oneMinusSquareRsqrt(op string, x *NDArray) *NDArray {
	t := unaryRaw(op, backend.Square, x, 0, 0)
	unaryInPlace(t, backend.RSubScalar, 1, 0)
	unaryInPlace(t, backend.RSqrt, 0, 0)
	return t
}

// Atan returns the arctangent of x, in (−π/2, π/2).
func Atan(x *NDArray) *NDArray {
	return unaryOp("Atan", backend.Atan, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		t := unaryRaw("Atan", backend.Square, x, 0, 0) // 1/(1 + x²)
		unaryInPlace(t, backend.AddScalar, 1, 0)
		return divReleasing(g, t)
	})
}

// Sinh returns the hyperbolic sine of x.
func Sinh(x *NDArray) *NDArray {
	return unaryOp("Sinh", backend.Sinh, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return scaleBy(g, x, backend.Cosh, 0)
	})
}

// Cosh returns the hyperbolic cosine of x.
func Cosh(x *NDArray) *NDArray {
	return unaryOp("Cosh", backend.Cosh, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return scaleBy(g, x, backend.Sinh, 0)
	})
}

// Asinh returns the inverse hyperbolic sine of x.
func Asinh(x *NDArray) *NDArray {
	return unaryOp("Asinh", backend.Asinh, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		t := unaryRaw("Asinh", backend.Square, x, 0, 0) // 1/√(x² + 1)
		unaryInPlace(t, backend.AddScalar, 1, 0)
		unaryInPlace(t, backend.RSqrt, 0, 0)
		return mulReleasing(g, t)
	})
}

// Acosh returns the inverse hyperbolic cosine of x (NaN below 1).
func Acosh(x *NDArray) *NDArray {
	return unaryOp("Acosh", backend.Acosh, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		t := unaryRaw("Acosh", backend.Square, x, 0, 0) // 1/√(x² − 1)
		unaryInPlace(t, backend.AddScalar, -1, 0)
		unaryInPlace(t, backend.RSqrt, 0, 0)
		return mulReleasing(g, t)
	})
}

// Atanh returns the inverse hyperbolic tangent of x (±Inf at ±1, NaN
// beyond).
func Atanh(x *NDArray) *NDArray {
	return unaryOp("Atanh", backend.Atanh, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		t := unaryRaw("Atanh", backend.Square, x, 0, 0) // 1/(1 − x²)
		unaryInPlace(t, backend.RSubScalar, 1, 0)
		return divReleasing(g, t)
	})
}

// Log2 returns the base-2 logarithm of x.
func Log2(x *NDArray) *NDArray {
	return unaryOp("Log2", backend.Log2, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return divReleasing(g, unaryRaw("Log2", backend.MulScalar, x, math.Ln2, 0))
	})
}

// Log10 returns the base-10 logarithm of x.
func Log10(x *NDArray) *NDArray {
	return unaryOp("Log10", backend.Log10, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return divReleasing(g, unaryRaw("Log10", backend.MulScalar, x, math.Ln10, 0))
	})
}

// Exp2 returns 2**x.
func Exp2(x *NDArray) *NDArray {
	return unaryOp("Exp2", backend.Exp2, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		return scaleBy(g, y, backend.MulScalar, math.Ln2)
	})
}

// Erfinv returns the inverse error function of x, on (−1, 1) (±Inf at ±1,
// NaN beyond).
func Erfinv(x *NDArray) *NDArray {
	return unaryOp("Erfinv", backend.Erfinv, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		t := unaryRaw("Erfinv", backend.Square, y, 0, 0) // √π/2 · e^(y²)
		unaryInPlace(t, backend.Exp, 0, 0)
		unaryInPlace(t, backend.MulScalar, math.Sqrt(math.Pi)/2, 0)
		return mulReleasing(g, t)
	})
}

// Atan2 returns the angle in radians, in [−π, π], of the point (b, a):
// arctan(a/b) in the quadrant of the signs of a and b (PyTorch's
// atan2(input=a, other=b)), broadcasting. At a = b = 0 its gradient is
// NaN, as PyTorch's.
func Atan2(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Atan2", castWidest, a, b); again {
		out := Atan2(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Atan2", backend.Atan2, a, b, func(g, _ *NDArray, need []bool) (ga, gb *NDArray) {
		// ∂/∂a = b/(a² + b²), ∂/∂b = −a/(a² + b²)
		a2 := unaryRaw("Atan2", backend.Square, a, 0, 0)
		b2 := unaryRaw("Atan2", backend.Square, b, 0, 0)
		den := binaryRaw("Atan2", backend.Add, a2, b2)
		release(a2, b2)
		defer den.Release()
		if need[0] {
			ga = quotientOf(mulRaw(g, b), den)
		}
		if need[1] {
			gb = quotientOf(mulRaw(g, a), den)
			unaryInPlace(gb, backend.Neg, 0, 0)
		}
		return
	})
}

// Hypot returns √(a² + b²) without intermediate overflow or underflow,
// broadcasting. Its gradients are a/hypot and b/hypot (NaN at the origin,
// as PyTorch's).
func Hypot(a, b *NDArray) *NDArray {
	if a2, b2, made, again := autocast2("Hypot", castWidest, a, b); again {
		out := Hypot(a2, b2)
		castsDone(out, made)
		return out
	}
	return binaryOp("Hypot", backend.Hypot, a, b, func(g, out *NDArray, need []bool) (ga, gb *NDArray) {
		if need[0] {
			ga = quotientOf(mulRaw(g, a), out)
		}
		if need[1] {
			gb = quotientOf(mulRaw(g, b), out)
		}
		return
	})
}

// mulReleasing returns g·t and releases t.
func mulReleasing(g, t *NDArray) *NDArray {
	r := mulRaw(g, t)
	t.Release()
	return r
}

// divReleasing returns g/t and releases t.
func divReleasing(g, t *NDArray) *NDArray {
	r := binaryRaw("grad", bDiv, g, t)
	t.Release()
	return r
}

// quotientOf returns n/d and releases n.
func quotientOf(n, d *NDArray) *NDArray {
	r := binaryRaw("grad", bDiv, n, d)
	n.Release()
	return r
}
