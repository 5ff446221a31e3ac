package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// whereRaw computes cond ? a : b with broadcasting, without recording.
func whereRaw(op string, cond, a, b *NDArray) *NDArray {
	defer checkLive(op, cond, a, b).done()
	checkContexts(op, cond, a, b)
	defer checkInputs(op, a, b).done()
	if cond.dtype != Bool {
		fail(op, ErrDType, "condition must be a bool array, got %v (shape %v); compare, or convert with AsType(Bool)", cond.dtype, cond.shape)
	}
	shape := broadcastShape(op, broadcastShape(op, cond.shape, a.shape), b.shape)
	out := newArray(op, sessionOf(op, cond, a, b), a.st.dev, a.dtype, shape)
	if out.Size() == 0 {
		return out
	}
	runIndexed("Where", out, []*NDArray{cond, a, b}, func(k backend.IndexKernels, out *NDArray, in []*NDArray) {
		k.Where(shape, out.arg(), bcastArg(in[0], shape), bcastArg(in[1], shape), bcastArg(in[2], shape))
	})
	return out
}

// Where returns a where cond is true and b elsewhere, broadcasting all
// three (NumPy's where, PyTorch's torch.where). cond is a Bool array; a
// and b share a dtype. The gradient goes to a where cond holds and to b
// elsewhere.
func Where(cond, a, b *NDArray) *NDArray {
	return dispatchIx("Where", castWidest, []*NDArray{cond, a, b}, 0b001, func(in []*NDArray) *NDArray { return whereOp(in[0], in[1], in[2]) })
}

func whereOp(cond, a, b *NDArray) *NDArray {
	const op = "Where"
	out := whereRaw(op, cond, a, b)
	RecordDiff(op, out, []*NDArray{cond, a, b}, func(g *NDArray, need []bool) []*NDArray {
		var ga, gb *NDArray
		zero := g.Session().Full(g.st.dev, g.dtype, 0, 1)
		defer zero.Release()
		if need[1] {
			ga = reduceGrad(whereRaw(op, cond, g, zero), a.shape)
		}
		if need[2] {
			gb = reduceGrad(whereRaw(op, cond, zero, g), b.shape)
		}
		return []*NDArray{nil, ga, gb}
	}, func(g *NDArray, need []bool) []*NDArray {
		var ga, gb *NDArray
		zero := g.Session().Full(g.st.dev, g.dtype, 0, 1)
		if need[1] {
			ga = sumToRecorded(Where(cond, g, zero), a.shape)
		}
		if need[2] {
			gb = sumToRecorded(Where(cond, zero, g), b.shape)
		}
		return []*NDArray{nil, ga, gb}
	})
	return out
}

// MaskedFill returns x with value wherever mask (Bool, broadcast to x's
// shape) is true (PyTorch's masked_fill, the attention-mask op). The
// gradient passes to x where mask is false.
func MaskedFill(x, mask *NDArray, value float64) *NDArray {
	return dispatchIx("MaskedFill", castNeutral, []*NDArray{x, mask}, 0b10, func(in []*NDArray) *NDArray { return maskedFillOp(in[0], in[1], value) })
}

func maskedFillOp(x, mask *NDArray, value float64) *NDArray {
	const op = "MaskedFill"
	defer checkLive(op, x, mask).done()
	checkContexts(op, x, mask)
	if mask.dtype != Bool {
		fail(op, ErrDType, "mask must be a bool array, got %v (shape %v)", mask.dtype, mask.shape)
	}
	if !slices.Equal(broadcastShape(op, mask.shape, x.shape), x.shape) {
		fail(op, ErrShape, "mask of shape %v does not broadcast to x's shape %v", mask.shape, x.shape)
	}
	v := x.Session().Full(x.st.dev, x.dtype, value) // 0-d: broadcasts to x without adding an axis
	defer v.Release()
	return Where(mask, v, x)
}
