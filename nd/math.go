package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// Erf returns the error function of x.
func Erf(x *NDArray) *NDArray {
	return unaryOp("Erf", backend.Erf, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		// d erf(x)/dx = 2/√π · e^(−x²)
		sq := unaryRaw("Erf", backend.Square, x, 0, 0)
		unaryInPlace(sq, backend.MulScalar, -1, 0)
		unaryInPlace(sq, backend.Exp, 0, 0)
		unaryInPlace(sq, backend.MulScalar, 2/math.Sqrt(math.Pi), 0)
		r := mulRaw(g, sq)
		sq.Release()
		return r
	})
}

// Log1p returns ln(1+x), accurate for x near 0.
func Log1p(x *NDArray) *NDArray {
	return unaryOp("Log1p", backend.Log1p, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		d := unaryRaw("Log1p", backend.AddScalar, x, 1, 0)
		r := binaryRaw("Log1p", bDiv, g, d)
		d.Release()
		return r
	})
}

// Expm1 returns e**x − 1, accurate for x near 0.
func Expm1(x *NDArray) *NDArray {
	return unaryOp("Expm1", backend.Expm1, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		return scaleBy(g, y, backend.AddScalar, 1)
	})
}

// Sin returns the sine of x (radians).
func Sin(x *NDArray) *NDArray {
	return unaryOp("Sin", backend.Sin, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return scaleBy(g, x, backend.Cos, 0)
	})
}

// Cos returns the cosine of x (radians).
func Cos(x *NDArray) *NDArray {
	return unaryOp("Cos", backend.Cos, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		r := scaleBy(g, x, backend.Sin, 0)
		unaryInPlace(r, backend.Neg, 0, 0)
		return r
	})
}

// Rsqrt returns 1/√x.
func Rsqrt(x *NDArray) *NDArray {
	return unaryOp("Rsqrt", backend.RSqrt, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		// d x^(−1/2)/dx = −½ y³
		r := scaleBy(g, y, backend.PowScalar, 3)
		unaryInPlace(r, backend.MulScalar, -0.5, 0)
		return r
	})
}

// Reciprocal returns 1/x.
func Reciprocal(x *NDArray) *NDArray {
	return unaryOp("Reciprocal", backend.Reciprocal, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		r := scaleBy(g, y, backend.Square, 0)
		unaryInPlace(r, backend.Neg, 0, 0)
		return r
	})
}

// LogSumExp returns log Σ exp(x) over the given axes (all when none are
// given), computed stably by shifting by the maximum, and removes them from
// the shape. Its gradient is softmax(x) over those axes. Over an empty
// axis the result is −∞ (the log of an empty sum), as in PyTorch.
func LogSumExp(x *NDArray, axes ...int) *NDArray { return logSumExp(x, false, axes) }

// LogSumExpKeepDims is LogSumExp that keeps the reduced axes with size 1.
func LogSumExpKeepDims(x *NDArray, axes ...int) *NDArray { return logSumExp(x, true, axes) }

func logSumExp(x *NDArray, keep bool, axes []int) *NDArray {
	return dispatch("LogSumExp", castFloat32, []*NDArray{x}, func(in []*NDArray) *NDArray { return logSumExpOp(in[0], keep, axes...) })
}

func logSumExpOp(x *NDArray, keep bool, axes ...int) *NDArray {
	const op = "LogSumExp"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	mask := axesMask(op, x.NDim(), axes)
	for i, m := range mask {
		if m && x.shape[i] == 0 {
			// A sum of no terms is 0 and its log −∞, as in PyTorch; x is
			// empty, and so is its gradient.
			shape := droppedShape(x.shape, mask)
			if keep {
				shape = keptShape(x.shape, mask)
			}
			y := x.Session().Full(x.st.dev, x.dtype, math.Inf(-1), shape...)
			zero := func(*NDArray, []bool) []*NDArray { return []*NDArray{ZerosLike(x)} }
			RecordDiff(op, y, []*NDArray{x}, zero, zero)
			return y
		}
	}
	d := x.Detach()
	m := MaxKeepDims(d, axes...)
	d.Release()
	// Shift by the maximum where it is finite, by 0 where a slice is all
	// −∞ (or holds +∞), which would otherwise give ∞ − ∞.
	abs := unaryRaw(op, backend.Abs, m, 0, 0)
	inf := x.Session().Full(x.st.dev, x.dtype, math.Inf(1), 1)
	finite := binaryInto(op, backend.Less, abs, inf, Bool)
	zero := x.Session().Full(x.st.dev, x.dtype, 0, 1)
	safe := whereRaw(op, finite, m, zero)
	release(abs, inf, finite, zero, m)
	e := Exp(Sub(x, safe))
	s := SumKeepDims(e, axes...)
	out := Add(Log(s), safe)
	if !keep {
		out = Reshape(out, droppedShape(x.shape, mask)...)
	}
	return out
}
