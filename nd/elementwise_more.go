package nd

import "math"

// Lerp returns a + w·(b − a), broadcasting (PyTorch's lerp with a scalar
// weight: computed from the nearer end, b − (b − a)·(1 − w) for w ≥ ½, so
// w = 1 gives b exactly; half arrays in float32, rounded once). Gradients:
// 1 − w to a, w to b.
func Lerp(a, b *NDArray, w float64) *NDArray {
	if a != nil && b != nil && a.DType().IsHalf() && b.DType() == a.DType() {
		return Lerp(a.AsType(Float32), b.AsType(Float32), w).AsType(a.DType())
	}
	if w < 0.5 {
		return Add(a, MulScalar(Sub(b, a), w))
	}
	return Sub(b, MulScalar(Sub(b, a), 1-w))
}

// Logit returns log(x / (1 − x)), the inverse of Sigmoid (PyTorch's logit).
// With eps ≥ 0, x is first clamped to [eps, 1 − eps] and the gradient is 0
// outside that range; with a negative eps (PyTorch's None) nothing is
// clamped, x outside [0, 1] gives NaN, and so does its gradient.
func Logit(x *NDArray, eps float64) *NDArray {
	const op = "Logit"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	xd := x.Detach()
	c := xd
	if eps >= 0 {
		c = Clip(xd, eps, 1-eps)
	}
	out := Log(Div(c, RSubScalar(1, c)))
	grad := func(g, xd *NDArray) []*NDArray {
		s := xd.Session()
		d := Div(g, Mul(xd, RSubScalar(1, xd)))
		var lo, hi float64 = 0, 1
		fill := math.NaN()
		if eps >= 0 {
			lo, hi, fill = eps, 1-eps, 0
		}
		xc := xd.Detach()
		outside := LogicalOr(Less(xc, s.Full(xd.st.dev, xd.dtype, lo)), Greater(xc, s.Full(xd.st.dev, xd.dtype, hi)))
		return []*NDArray{Where(outside, s.Full(xd.st.dev, xd.dtype, fill), d)}
	}
	RecordDiff(op, out, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray { return grad(g, xd) },
		func(g *NDArray, _ []bool) []*NDArray { return grad(g, x) })
	return out
}

// Xlogy returns x·log(y), broadcasting, with 0 where x is 0 unless y is NaN
// (PyTorch's xlogy: the convention 0·log 0 = 0 of entropies and KL
// divergences). Gradients are PyTorch's: log y to x (0 where x is 0 and y
// is not positive), x/y to y.
func Xlogy(x, y *NDArray) *NDArray {
	const op = "Xlogy"
	defer checkInputs(op, x, y).done()
	checkFloat(op, x, y)
	xd, yd := x.Detach(), y.Detach()
	s := xd.Session()
	zero := s.Zeros(xd.st.dev, xd.dtype, 1)
	logy := Log(yd)
	prod := Mul(xd, logy)
	keep := LogicalOr(NotEqual(xd, zero), NotEqual(yd, yd)) // x ≠ 0, or y NaN
	out := Where(keep, prod, ZerosLike(prod))
	both := LogicalAnd(Equal(xd, zero), LessEqual(yd, zero))
	RecordDiff(op, out, []*NDArray{x, y}, func(g *NDArray, need []bool) []*NDArray {
		var gx, gy *NDArray
		if need[0] {
			gx = reduceGrad(Mul(g, Where(both, zero, logy)), x.shape)
		}
		if need[1] {
			gy = reduceGrad(Mul(g, Div(xd, yd)), y.shape)
		}
		return []*NDArray{gx, gy}
	}, func(g *NDArray, need []bool) []*NDArray {
		var gx, gy *NDArray
		if need[0] {
			gx = sumToRecorded(Mul(g, Where(both, zero, Log(y))), x.shape)
		}
		if need[1] {
			gy = sumToRecorded(Mul(g, Div(x, y)), y.shape)
		}
		return []*NDArray{gx, gy}
	})
	return out
}

// NanToNum replaces NaN with nan, +Inf with posInf and −Inf with negInf
// (PyTorch's nan_to_num; its defaults are 0 and the dtype's largest and
// lowest finite values, which NanToNumDefaults gives). The gradient passes
// where x is finite and is 0 where a value was replaced.
func NanToNum(x *NDArray, nan, posInf, negInf float64) *NDArray {
	const op = "NanToNum"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	s := x.Session()
	xd := x.Detach()
	inf := s.Full(x.st.dev, x.dtype, math.Inf(1))
	isNaN := NotEqual(xd, xd)
	isPos := Equal(xd, inf)
	isNeg := Equal(xd, Neg(inf))
	finite := LogicalNot(LogicalOr(isNaN, LogicalOr(isPos, isNeg)))
	out := Where(isNaN, s.Full(x.st.dev, x.dtype, nan), xd)
	out = Where(isPos, s.Full(x.st.dev, x.dtype, posInf), out)
	out = Where(isNeg, s.Full(x.st.dev, x.dtype, negInf), out)
	pass := func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{Where(finite, g, ZerosLike(g))} }
	RecordDiff(op, out, []*NDArray{x}, pass, pass)
	return out
}

// NanToNumDefaults returns PyTorch's replacements for dt: 0, and dt's
// largest and lowest finite values.
func NanToNumDefaults(dt DType) (nan, posInf, negInf float64) {
	big := math.MaxFloat64
	switch dt {
	case Float32:
		big = math.MaxFloat32
	case Float16:
		big = 65504
	case BFloat16:
		big = float64(math.Float32frombits(0x7f7f0000))
	}
	return 0, big, -big
}
