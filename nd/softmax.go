package nd

import "github.com/goluon/goluon/nd/backend"

// softmaxRaw computes (log-)softmax along one axis, subtracting the
// maximum first so that large inputs do not overflow.
func softmaxRaw(op string, x *NDArray, mask []bool, log bool) *NDArray {
	m := reduceRaw(op, backend.Max, x, mask)
	sh := binaryRaw(op, bSub, x, m)
	e := unaryRaw(op, backend.Exp, sh, 0, 0)
	s := reduceRaw(op, backend.Sum, e, mask)
	defer release(m, sh, e, s)
	if log {
		ls := unaryRaw(op, backend.Log, s, 0, 0)
		defer ls.Release()
		return binaryRaw(op, bSub, sh, ls)
	}
	return binaryRaw(op, bDiv, e, s)
}

// Softmax returns exp(x) / Σ exp(x) along axis (use -1 for the last).
func Softmax(x *NDArray, axis int) *NDArray {
	return dispatch("Softmax", castFloat32, []*NDArray{x}, func(in []*NDArray) *NDArray { return softmaxOp(in[0], axis) })
}

func softmaxOp(x *NDArray, axis int) *NDArray {
	const op = "Softmax"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	mask := axesMask(op, x.NDim(), []int{axis})
	y := softmaxRaw(op, x, mask, false)
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		gy := mulRaw(g, y)
		s := reduceRaw(op, backend.Sum, gy, mask)
		d := binaryRaw(op, bSub, g, s)
		defer release(gy, s, d)
		return []*NDArray{mulRaw(y, d)}
	}, func(g *NDArray, _ []bool) []*NDArray { // y·(g − Σ g·y)
		return []*NDArray{Mul(y, Sub(g, SumKeepDims(Mul(g, y), axis)))}
	})
	return y
}

// LogSoftmax returns x - log Σ exp(x) along axis, computed stably.
func LogSoftmax(x *NDArray, axis int) *NDArray {
	return dispatch("LogSoftmax", castFloat32, []*NDArray{x}, func(in []*NDArray) *NDArray { return logSoftmaxOp(in[0], axis) })
}

func logSoftmaxOp(x *NDArray, axis int) *NDArray {
	const op = "LogSoftmax"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	mask := axesMask(op, x.NDim(), []int{axis})
	y := softmaxRaw(op, x, mask, true)
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		p := unaryRaw(op, backend.Exp, y, 0, 0)
		s := reduceRaw(op, backend.Sum, g, mask)
		ps := binaryRaw(op, bMul, p, s)
		defer release(p, s, ps)
		return []*NDArray{binaryRaw(op, bSub, g, ps)}
	}, func(g *NDArray, _ []bool) []*NDArray { // g − e^y·Σ g
		return []*NDArray{Sub(g, Mul(Exp(y), SumKeepDims(g, axis)))}
	})
	return y
}
