package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// normAxis maps a possibly negative axis to [0, ndim).
func normAxis(op string, axis, ndim int) int {
	if axis < -ndim || axis >= ndim {
		fail(op, ErrArgument, "axis %d out of range for %d dimensions", axis, ndim)
	}
	if axis < 0 {
		axis += ndim
	}
	return axis
}

// axesMask marks the given axes (all axes when none are given).
func axesMask(op string, ndim int, axes []int) []bool {
	m := make([]bool, ndim)
	if len(axes) == 0 {
		for i := range m {
			m[i] = true
		}
		return m
	}
	for _, ax := range axes {
		a := normAxis(op, ax, ndim)
		if m[a] {
			fail(op, ErrArgument, "axis %d given twice", ax)
		}
		m[a] = true
	}
	return m
}

// keptShape is shape with the marked axes set to 1 (keepdims form).
func keptShape(shape []int, axes []bool) []int {
	out := make([]int, len(shape))
	for i, s := range shape {
		if axes[i] {
			out[i] = 1
		} else {
			out[i] = s
		}
	}
	return out
}

func droppedShape(shape []int, axes []bool) []int {
	out := []int{}
	for i, s := range shape {
		if !axes[i] {
			out = append(out, s)
		}
	}
	return out
}

// reduceRaw reduces x over the marked axes, returning the keepdims shape.
func reduceRaw(op string, code backend.ReduceOp, x *NDArray, axes []bool) *NDArray {
	defer checkLive(op, x).done()
	if h, ok := x.st.be.(backend.HalfReducer); ok && x.dtype.IsHalf() && (code == backend.Sum || code == backend.Max || code == backend.Min) && h.ReduceHalf(x.dtype) {
		out := newArray(op, x.Session(), x.st.dev, x.dtype, keptShape(x.shape, axes)) // the backend's own half kernels (the same bits)
		if x.Size() == 0 {
			x.be().Fill(out.storageArg(), out.Size(), 0)
			return out
		}
		x.be().Reduce(code, x.shape, axes, out.storageArg(), x.storageArg())
		return out
	}
	if x.dtype.IsHalf() {
		w := widened(x)
		defer w.Release()
		return narrowed(reduceRaw(op, code, w, axes), x.dtype)
	}
	out := newArray(op, x.Session(), x.st.dev, x.dtype, keptShape(x.shape, axes))
	if x.Size() == 0 {
		x.be().Fill(out.arg(), out.Size(), 0)
		return out
	}
	x.be().Reduce(code, x.shape, axes, out.arg(), x.arg())
	return out
}

// reduceOp reduces, records, and reshapes to the keepdims or dropped form.
// grad gets keepdims views of the output gradient and, for Max and Min,
// of the output itself (nil for Sum, which lets callers release the output
// of an inner Sum, as Mean does).
func reduceOp(op string, code backend.ReduceOp, x *NDArray, keep bool, axes []int, grad func(g, y *NDArray, mask []bool) *NDArray) *NDArray {
	defer checkLive(op, x).done()
	mask := axesMask(op, x.NDim(), axes)
	if code == backend.Max || code == backend.Min {
		for i, m := range mask {
			if m && x.shape[i] == 0 {
				fail(op, ErrShape, "cannot reduce an empty axis %d of shape %v", i, x.shape)
			}
		}
	}
	r := reduceRaw(op, code, x, mask)
	kshape := r.shape
	shape := kshape
	if !keep {
		shape = droppedShape(x.shape, mask)
	}
	y := r.view(0, shape)
	r.Release() // y now holds the storage
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		gk := g.view(0, kshape)
		defer gk.Release()
		var yk *NDArray
		if code != backend.Sum {
			yk = y.view(0, kshape)
			defer yk.Release()
		}
		return []*NDArray{grad(gk, yk, mask)}
	}, func(g *NDArray, _ []bool) []*NDArray {
		b := BroadcastTo(Reshape(g, kshape...), x.shape...)
		if code == backend.Sum {
			return []*NDArray{b}
		}
		// Max and Min: g shared among the elements that attain the
		// extreme, a constant of the pass.
		yk := y.view(0, kshape)
		defer yk.Release()
		return []*NDArray{Mul(b, grad(OnesLike(yk), yk, mask))}
	})
	return y
}

// broadcastRaw materialises a keepdims array at a full shape.
func broadcastRaw(a *NDArray, shape []int) *NDArray {
	out := newArray("BroadcastTo", a.Session(), a.st.dev, a.dtype, shape)
	if out.Size() > 0 { // the gradient of a reduction of an empty array
		a.be().Copy(shape, out.storageArg(), bcastStorage(a, shape))
	}
	return out
}

// Sum adds the elements over the given axes (all when none are given),
// removing them from the shape. The sum of an integer or Bool array is
// Int64 (Bool counts the true elements).
func Sum(x *NDArray, axes ...int) *NDArray { return sum("Sum", x, false, axes) }

// SumKeepDims is Sum that keeps the reduced axes with size 1.
func SumKeepDims(x *NDArray, axes ...int) *NDArray { return sum("SumKeepDims", x, true, axes) }

func sum(op string, x *NDArray, keep bool, axes []int) *NDArray {
	defer checkLive(op, x).done()
	if x2, made := autocast1(op, castFloat32, x); len(made) > 0 {
		out := sum(op, x2, keep, axes)
		castsDone(out, made)
		return out
	}
	if !x.dtype.IsFloat() && x.dtype != Int64 {
		// Integer and Bool sums are Int64, as in PyTorch.
		t := x.AsType(Int64)
		defer t.Release()
		x = t
	}
	return reduceOp(op, backend.Sum, x, keep, axes, func(g, _ *NDArray, _ []bool) *NDArray {
		return broadcastRaw(g, x.shape)
	})
}

// Mean averages the elements over the given axes (all when none are given).
// The mean of no elements (an empty reduced axis) is NaN, as in PyTorch
// and NumPy.
func Mean(x *NDArray, axes ...int) *NDArray { return mean("Mean", x, false, axes) }

// MeanKeepDims is Mean that keeps the reduced axes with size 1.
func MeanKeepDims(x *NDArray, axes ...int) *NDArray { return mean("MeanKeepDims", x, true, axes) }

func mean(op string, x *NDArray, keep bool, axes []int) *NDArray {
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if x2, made := autocast1(op, castFloat32, x); len(made) > 0 {
		out := mean(op, x2, keep, axes)
		castsDone(out, made)
		return out
	}
	if x.dtype.IsHalf() { // one rounding, of the mean
		return viaFloat32(x.dtype, func(w []*NDArray) *NDArray { return mean(op, w[0], keep, axes) }, x)
	}
	n := 1 // elements per result: the product of the reduced axes' sizes
	for d, m := range axesMask(op, x.NDim(), axes) {
		if m {
			n *= x.shape[d]
		}
	}
	s := sum(op, x, keep, axes)
	scale := math.NaN() // 0/0: the mean of no elements, as in PyTorch
	if n > 0 {
		scale = 1 / float64(n)
	}
	out := MulScalar(s, scale)
	s.Release()
	return out
}

// Max returns the maximum over the given axes (all when none are given).
// Where several elements share the maximum, the gradient is split evenly.
func Max(x *NDArray, axes ...int) *NDArray { return extreme("Max", backend.Max, x, false, axes) }

// MaxKeepDims is Max that keeps the reduced axes with size 1.
func MaxKeepDims(x *NDArray, axes ...int) *NDArray {
	return extreme("MaxKeepDims", backend.Max, x, true, axes)
}

// Min returns the minimum over the given axes (all when none are given).
func Min(x *NDArray, axes ...int) *NDArray { return extreme("Min", backend.Min, x, false, axes) }

// MinKeepDims is Min that keeps the reduced axes with size 1.
func MinKeepDims(x *NDArray, axes ...int) *NDArray {
	return extreme("MinKeepDims", backend.Min, x, true, axes)
}

func extreme(op string, code backend.ReduceOp, x *NDArray, keep bool, axes []int) *NDArray {
	return reduceOp(op, code, x, keep, axes, func(g, y *NDArray, mask []bool) *NDArray {
		hit := binaryRaw(op, backend.Equal, x, y) // 1 where x attains the extreme
		cnt := reduceRaw(op, backend.Sum, hit, mask)
		share := binaryRaw(op, bDiv, g, cnt)
		out := mulRaw(hit, share)
		release(hit, cnt, share)
		return out
	})
}

// ArgMax returns the index of the first maximum along axis as an Int64
// array with that axis removed (a NaN counts as the maximum, as in
// PyTorch). It is not differentiable.
func ArgMax(x *NDArray, axis int) *NDArray { return argExtreme("ArgMax", backend.ArgMax, x, axis) }

// ArgMin returns the index of the first minimum along axis as an Int64
// array with that axis removed (a NaN counts as the minimum). It is not
// differentiable.
func ArgMin(x *NDArray, axis int) *NDArray { return argExtreme("ArgMin", backend.ArgMin, x, axis) }

func argExtreme(op string, code backend.ReduceOp, x *NDArray, axis int) *NDArray {
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	if x.shape[ax] == 0 {
		fail(op, ErrShape, "empty axis %d of shape %v", axis, x.shape)
	}
	mask := axesMask(op, x.NDim(), []int{ax})
	if x.dtype.IsHalf() {
		w := widened(x)
		defer w.Release()
		return argExtreme(op, code, w, axis)
	}
	out := newArray(op, x.Session(), x.st.dev, Int64, droppedShape(x.shape, mask))
	if out.Size() > 0 {
		x.be().Reduce(code, x.shape, mask, out.arg(), x.arg())
	}
	return out
}
