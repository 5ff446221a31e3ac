package nd

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// float32Unary lists the unary ops of autocast's float32 class.
var float32Unary = []backend.UnaryOp{backend.Exp, backend.Log, backend.Log1p, backend.Expm1,
	backend.RSqrt, backend.Reciprocal, backend.Softrelu, backend.PowScalar, backend.RPowScalar, backend.RDivScalar,
	backend.Tan, backend.Asin, backend.Acos, backend.Sinh, backend.Cosh, backend.Log2, backend.Log10, backend.Erfinv,
	backend.Lgamma, backend.Digamma}

// unaryRaw computes code(a) into a new array without recording.
func unaryRaw(op string, code backend.UnaryOp, a *NDArray, p1, p2 float64) *NDArray {
	defer checkLive(op, a).done()
	checkUnaryDType(op, code, a.dtype, p1, p2)
	if a.dtype.IsHalf() && !nativeHalfElem(a) {
		w := widened(a)
		defer w.Release()
		return narrowed(unaryRaw(op, code, w, p1, p2), a.dtype)
	}
	out := newArray(op, a.Session(), a.st.dev, a.dtype, a.shape)
	if a.dtype.IsHalf() { // the backend's own half kernels (the same bits)
		a.be().Unary(code, out.storageArg(), a.storageArg(), a.Size(), p1, p2)
		return out
	}
	a.be().Unary(code, out.arg(), a.arg(), a.Size(), p1, p2)
	return out
}

func unaryInPlace(a *NDArray, code backend.UnaryOp, p1, p2 float64) {
	if inPlaceHalf(a, nil, func(w *NDArray, _ []*NDArray) { unaryInPlace(w, code, p1, p2) }) {
		return
	}
	a.be().Unary(code, a.arg(), a.arg(), a.Size(), p1, p2)
}

// unaryOp computes and records a differentiable unary op; grad maps the
// output gradient g (and the input x and output y) to x's gradient.
func unaryOp(op string, code backend.UnaryOp, x *NDArray, p1, p2 float64, grad func(g, x, y *NDArray) *NDArray) *NDArray {
	var made []*NDArray
	if autocasting.Load() > 0 && x != nil && slices.Contains(float32Unary, code) {
		x, made = autocast1(op, castFloat32, x)
	}
	y := unaryRaw(op, code, x, p1, p2)
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{grad(g, x, y)}
	}, unaryDiffFor(op, x, y, p1, grad))
	castsDone(y, made)
	return y
}

// scaleBy returns g * code(v; p1), used by grads of the form g·f(x).
func scaleBy(g, v *NDArray, code backend.UnaryOp, p1 float64) *NDArray {
	t := unaryRaw("grad", code, v, p1, 0)
	r := mulRaw(g, t)
	t.Release()
	return r
}

// Neg returns -x.
func Neg(x *NDArray) *NDArray {
	return unaryOp("Neg", backend.Neg, x, 0, 0, func(g, _, _ *NDArray) *NDArray {
		return unaryRaw("Neg", backend.Neg, g, 0, 0)
	})
}

// Exp returns e**x. On the CPU a float32 result is within one float32 ulp
// of the correctly rounded one (the vectorised exp the softmax uses);
// float64 is math.Exp's.
func Exp(x *NDArray) *NDArray {
	return unaryOp("Exp", backend.Exp, x, 0, 0, func(g, _, y *NDArray) *NDArray { return mulRaw(g, y) })
}

// Log returns the natural logarithm of x.
func Log(x *NDArray) *NDArray {
	return unaryOp("Log", backend.Log, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return binaryRaw("Log", bDiv, g, x)
	})
}

// Sqrt returns the square root of x.
func Sqrt(x *NDArray) *NDArray {
	return unaryOp("Sqrt", backend.Sqrt, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		r := binaryRaw("Sqrt", bDiv, g, y)
		unaryInPlace(r, backend.MulScalar, 0.5, 0)
		return r
	})
}

// Square returns x².
func Square(x *NDArray) *NDArray {
	return unaryOp("Square", backend.Square, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return scaleBy(g, x, backend.MulScalar, 2)
	})
}

// Abs returns |x|. Its gradient at 0 is 0.
func Abs(x *NDArray) *NDArray {
	return unaryOp("Abs", backend.Abs, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return scaleBy(g, x, backend.Sign, 0)
	})
}

// Sign returns -1, 0 or 1 by the sign of x. It is not differentiable.
func Sign(x *NDArray) *NDArray { return unaryRaw("Sign", backend.Sign, x, 0, 0) }

// Tanh returns the hyperbolic tangent of x.
func Tanh(x *NDArray) *NDArray {
	return unaryOp("Tanh", backend.Tanh, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		return binaryRaw("Tanh", backend.TanhGrad, y, g)
	})
}

// Sigmoid returns 1/(1+e**-x).
func Sigmoid(x *NDArray) *NDArray {
	return unaryOp("Sigmoid", backend.Sigmoid, x, 0, 0, func(g, _, y *NDArray) *NDArray {
		return binaryRaw("Sigmoid", backend.SigmoidGrad, y, g)
	})
}

// Relu returns max(x, 0). Its gradient at 0 is 0.
func Relu(x *NDArray) *NDArray {
	return unaryOp("Relu", backend.Relu, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return binaryRaw("Relu", backend.ReluGrad, x, g)
	})
}

// Softrelu returns ln(1+e**x) (softplus), computed without overflow.
func Softrelu(x *NDArray) *NDArray {
	return unaryOp("Softrelu", backend.Softrelu, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return binaryRaw("Softrelu", backend.SoftreluGrad, x, g)
	})
}

// AddScalar returns x + s.
func AddScalar(x *NDArray, s float64) *NDArray {
	return unaryOp("AddScalar", backend.AddScalar, x, s, 0, func(g, _, _ *NDArray) *NDArray {
		return g.view(0, g.shape)
	})
}

// SubScalar returns x - s.
func SubScalar(x *NDArray, s float64) *NDArray { return AddScalar(x, -s) }

// MulScalar returns x * s.
func MulScalar(x *NDArray, s float64) *NDArray {
	return unaryOp("MulScalar", backend.MulScalar, x, s, 0, func(g, _, _ *NDArray) *NDArray {
		return unaryRaw("MulScalar", backend.MulScalar, g, s, 0)
	})
}

// DivScalar returns x / s: Div by s held in x's dtype, so a float32 x is
// divided by float32(s), correctly rounded as PyTorch's x / s (not
// multiplied by 1/s), and a half-precision one in float32, rounded once.
// On integer arrays s must be a whole number in the dtype's range and the
// quotient truncates toward zero, as Div's does. s must not be 0.
func DivScalar(x *NDArray, s float64) *NDArray {
	const op = "DivScalar"
	defer checkLive(op, x).done()
	if s == 0 {
		fail(op, ErrArgument, "division by zero")
	}
	switch {
	case x.dtype == Bool:
		fail(op, ErrDType, "is not defined on bool arrays; convert with AsType first")
	case x.dtype.IsHalf():
		return viaFloat32(x.dtype, func(w []*NDArray) *NDArray { return DivScalar(w[0], s) }, x)
	case !x.dtype.IsFloat():
		checkIntScalar(op, x.dtype, s)
	}
	b := x.Session().Full(x.st.dev, x.dtype, s) // 0-d: broadcasts to x's shape
	y := binaryOp(op, bDiv, x, b, func(g, _ *NDArray, need []bool) (ga, gb *NDArray) {
		if need[0] {
			ga = binaryRaw(op, bDiv, g, b)
		}
		return ga, nil
	})
	if !y.requiresGrad() { // nothing recorded holds b
		b.Release()
	}
	return y
}

// RSubScalar returns s - x.
func RSubScalar(s float64, x *NDArray) *NDArray {
	return unaryOp("RSubScalar", backend.RSubScalar, x, s, 0, func(g, _, _ *NDArray) *NDArray {
		return unaryRaw("RSubScalar", backend.Neg, g, 0, 0)
	})
}

// RDivScalar returns s / x.
func RDivScalar(s float64, x *NDArray) *NDArray {
	return unaryOp("RDivScalar", backend.RDivScalar, x, s, 0, func(g, x, y *NDArray) *NDArray {
		t := binaryRaw("RDivScalar", bDiv, y, x) // s/x² = y/x
		r := mulRaw(g, t)
		t.Release()
		unaryInPlace(r, backend.Neg, 0, 0)
		return r
	})
}

// PowScalar returns x ** p.
func PowScalar(x *NDArray, p float64) *NDArray {
	return unaryOp("PowScalar", backend.PowScalar, x, p, 0, func(g, x, _ *NDArray) *NDArray {
		r := scaleBy(g, x, backend.PowScalar, p-1)
		unaryInPlace(r, backend.MulScalar, p, 0)
		return r
	})
}

// RPowScalar returns s ** x.
func RPowScalar(s float64, x *NDArray) *NDArray {
	return unaryOp("RPowScalar", backend.RPowScalar, x, s, 0, func(g, _, y *NDArray) *NDArray {
		r := mulRaw(g, y)
		unaryInPlace(r, backend.MulScalar, math.Log(s), 0)
		return r
	})
}

// Clip limits x to [lo, hi]. The gradient passes where lo <= x <= hi.
func Clip(x *NDArray, lo, hi float64) *NDArray {
	if lo > hi {
		fail("Clip", ErrArgument, "lo %g > hi %g", lo, hi)
	}
	return unaryOp("Clip", backend.Clip, x, lo, hi, func(g, x, y *NDArray) *NDArray {
		m := binaryRaw("Clip", backend.Equal, x, y)
		r := mulRaw(g, m)
		m.Release()
		return r
	})
}

// MaximumScalar returns max(x, s); where x == s the gradient passes.
func MaximumScalar(x *NDArray, s float64) *NDArray {
	return unaryOp("MaximumScalar", backend.MaxScalar, x, s, 0, func(g, x, y *NDArray) *NDArray {
		m := binaryRaw("MaximumScalar", backend.Equal, x, y)
		r := mulRaw(g, m)
		m.Release()
		return r
	})
}

// MinimumScalar returns min(x, s); where x == s the gradient passes.
func MinimumScalar(x *NDArray, s float64) *NDArray {
	return unaryOp("MinimumScalar", backend.MinScalar, x, s, 0, func(g, x, y *NDArray) *NDArray {
		m := binaryRaw("MinimumScalar", backend.Equal, x, y)
		r := mulRaw(g, m)
		m.Release()
		return r
	})
}
