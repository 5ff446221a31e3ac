package nd

import (
	"math"
)

// More reductions and distances, PyTorch's prod, any, all (AnyTrue,
// AllTrue), count_nonzero,
// median, quantile, normalize, cosine_similarity and cdist, composed from
// the differentiable ops (so every backend has them and their gradients
// are exact, zeros in a product included).

// Prod returns the product of x's elements over the given axes (all when
// none are given), removing them from the shape; over an empty axis it is
// 1. The factors are multiplied pairwise (log₂ n steps of Mul), so the
// result may differ from a sequential product in its last bits, and the
// gradient is each element's product of the others, exact where some are
// 0 (PyTorch's special case). Integer and Bool products are Int64, and
// wrap.
func Prod(x *NDArray, axes ...int) *NDArray { return prod(x, false, axes) }

// ProdKeepDims is Prod that keeps the reduced axes with size 1.
func ProdKeepDims(x *NDArray, axes ...int) *NDArray { return prod(x, true, axes) }

func prod(x *NDArray, keep bool, axes []int) *NDArray {
	const op = "Prod"
	defer checkLive(op, x).done()
	if !x.dtype.IsFloat() && x.dtype != Int64 {
		x = x.AsType(Int64) // PyTorch's: integer and Bool products are Int64
	}
	mask := axesMask(op, x.NDim(), axes)
	out := x
	for ax := len(mask) - 1; ax >= 0; ax-- {
		if mask[ax] {
			out = prodAxis(out, ax)
		}
	}
	if out == x {
		out = MulScalar(x, 1) // no axes of size > 0: a copy, as a reduction makes
	}
	if !keep {
		out = Reshape(out, droppedShape(x.shape, mask)...)
	}
	return out
}

// prodAxis multiplies x's slices along axis pairwise down to one, kept
// with size 1.
func prodAxis(x *NDArray, axis int) *NDArray {
	n := x.shape[axis]
	if n == 0 { // ones, recorded from x so that its (empty) gradient flows
		return AddScalar(MulScalar(SumKeepDims(x, axis), 0), 1)
	}
	for n > 1 {
		h := n / 2
		p := Mul(SliceAxis(x, 0, h, axis), SliceAxis(x, h, 2*h, axis))
		if n%2 == 1 {
			p = Concat([]*NDArray{p, SliceAxis(x, n-1, n, axis)}, axis)
		}
		x, n = p, p.shape[axis]
	}
	return x
}

// AnyTrue reports, over the given axes (all when none are given), whether
// any element of x is non-zero (true for Bool), as a Bool array without
// them (PyTorch's any; All is taken by slicing's Range).
func AnyTrue(x *NDArray, axes ...int) *NDArray { return anyAll("AnyTrue", x, false, false, axes) }

// AnyTrueKeepDims is AnyTrue that keeps the reduced axes with size 1.
func AnyTrueKeepDims(x *NDArray, axes ...int) *NDArray {
	return anyAll("AnyTrue", x, false, true, axes)
}

// AllTrue reports, over the given axes (all when none are given), whether
// every element of x is non-zero, as a Bool array without them (PyTorch's
// all); over an empty axis it is true.
func AllTrue(x *NDArray, axes ...int) *NDArray { return anyAll("AllTrue", x, true, false, axes) }

// AllTrueKeepDims is AllTrue that keeps the reduced axes with size 1.
func AllTrueKeepDims(x *NDArray, axes ...int) *NDArray {
	return anyAll("AllTrue", x, true, true, axes)
}

func anyAll(op string, x *NDArray, all, keep bool, axes []int) *NDArray {
	defer checkLive(op, x).done()
	zero := x.Session().Full(x.st.dev, x.dtype, 0)
	defer zero.Release()
	var hit *NDArray // the elements that decide: zeros for All, non-zeros for Any
	if all {
		hit = Equal(x, zero)
	} else {
		hit = NotEqual(x, zero)
	}
	defer hit.Release()
	var n *NDArray
	if keep {
		n = SumKeepDims(hit, axes...)
	} else {
		n = Sum(hit, axes...)
	}
	defer n.Release()
	none := n.Session().Full(n.st.dev, n.dtype, 0)
	defer none.Release()
	if all {
		return Equal(n, none)
	}
	return Greater(n, none)
}

// CountNonzero returns the number of non-zero elements of x over the
// given axes (all when none are given), as Int64 without them.
func CountNonzero(x *NDArray, axes ...int) *NDArray {
	const op = "CountNonzero"
	defer checkLive(op, x).done()
	zero := x.Session().Full(x.st.dev, x.dtype, 0)
	hit := NotEqual(x, zero)
	out := Sum(hit, axes...)
	release(zero, hit)
	return out
}

// Median returns the lower median of x along axis (the ⌊(n−1)/2⌋-th
// smallest, PyTorch's median with dim) and its index there, removing the
// axis. The gradient goes to that element. A slice holding a NaN gives NaN
// and the index of one, as in PyTorch.
func Median(x *NDArray, axis int) (values, indices *NDArray) {
	const op = "Median"
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	n := x.shape[ax]
	if n == 0 {
		fail(op, ErrShape, "median of an empty axis %d (shape %v)", axis, x.shape)
	}
	vals, idx := Sort(x, ax, false)
	k := (n - 1) / 2
	values = Squeeze(SliceAxis(vals, k, k+1, ax), ax)
	indices = Squeeze(SliceAxis(idx, k, k+1, ax), ax)
	if !x.dtype.IsFloat() {
		return values, indices
	}
	// NaN sorts last: a slice with one has it at the end.
	last := Squeeze(SliceAxis(vals, n-1, n, ax), ax)
	nan := NotEqual(last, last)
	values = Where(nan, last, values)
	indices = Where(nan, Squeeze(SliceAxis(idx, n-1, n, ax), ax), indices)
	return values, indices
}

// Quantile returns the q-th quantile (q in [0, 1]) of x along axis,
// removing it: PyTorch's quantile with linear interpolation between the
// two order statistics around position q·(n−1). The gradient is split
// between them by the interpolation weights. A slice holding a NaN gives
// NaN.
func Quantile(x *NDArray, q float64, axis int) *NDArray {
	const op = "Quantile"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if !(q >= 0 && q <= 1) {
		fail(op, ErrArgument, "q = %g outside [0, 1]", q)
	}
	ax := normAxis(op, axis, x.NDim())
	n := x.shape[ax]
	if n == 0 {
		fail(op, ErrShape, "quantile of an empty axis %d (shape %v)", axis, x.shape)
	}
	vals, _ := Sort(x, ax, false)
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	w := pos - float64(lo)
	a := Squeeze(SliceAxis(vals, lo, lo+1, ax), ax)
	if w == 0 || hi == lo {
		b := Squeeze(SliceAxis(vals, n-1, n, ax), ax)
		return Where(NotEqual(b, b), b, a) // NaN sorts last: a slice with one gives NaN
	}
	b := Squeeze(SliceAxis(vals, hi, hi+1, ax), ax)
	var out *NDArray
	if w < 0.5 { // PyTorch's lerp, which keeps infinite ends exact
		out = Add(a, MulScalar(Sub(b, a), w))
	} else {
		out = Sub(b, MulScalar(Sub(b, a), 1-w))
	}
	// NaN sorts last: a slice with one gives NaN, as in PyTorch.
	last := Squeeze(SliceAxis(vals, n-1, n, ax), ax)
	return Where(NotEqual(last, last), last, out)
}

// Normalize divides x by its p-norm (p 1 or 2) along axis, at least eps
// (PyTorch's normalize: x / max(‖x‖ₚ, eps)).
func Normalize(x *NDArray, p, axis int, eps float64) *NDArray {
	const op = "Normalize"
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	n := NormKeepDims(x, p, ax)
	return Div(x, MaximumScalar(n, eps))
}

// CosineSimilarity returns the cosine of the angle between a and b along
// axis, broadcasting them first and removing the axis: the dot product of
// a/max(‖a‖, eps) and b/max(‖b‖, eps), as PyTorch 1.13's
// cosine_similarity computes it.
func CosineSimilarity(a, b *NDArray, axis int, eps float64) *NDArray {
	const op = "CosineSimilarity"
	defer checkInputs(op, a, b).done()
	shape := broadcastShape(op, a.shape, b.shape)
	ax := normAxis(op, axis, len(shape))
	a, b = BroadcastTo(a, shape...), BroadcastTo(b, shape...)
	na := MaximumScalar(NormKeepDims(a, 2, ax), eps)
	nb := MaximumScalar(NormKeepDims(b, 2, ax), eps)
	return Sum(Mul(Div(a, na), Div(b, nb)), ax)
}

// Cdist returns the p-norm distances (p 1, 2 or +Inf) between the rows of
// a [..., P, M] and b [..., R, M], [..., P, R] (PyTorch's cdist, computed
// exactly from the differences, not by the matrix-product expansion; it
// holds a [..., P, R, M] array). A zero distance has gradient 0; with
// p = +Inf every coordinate that reaches the maximum gets the whole
// gradient, as in PyTorch.
func Cdist(a, b *NDArray, p float64) *NDArray {
	const op = "Cdist"
	defer checkInputs(op, a, b).done()
	if a.NDim() < 2 || b.NDim() < 2 || a.shape[a.NDim()-1] != b.shape[b.NDim()-1] {
		fail(op, ErrShape, "needs [..., P, M] and [..., R, M], got %v and %v", a.shape, b.shape)
	}
	d := Sub(ExpandDims(a, -2), ExpandDims(b, -3))
	switch p {
	case 1:
		return Norm(d, 1, -1)
	case 2:
		return Norm(d, 2, -1)
	case math.Inf(1):
		return maxAbsLast(d)
	}
	fail(op, ErrArgument, "p = %g: want 1, 2 or +Inf", p)
	return nil
}

// maxAbsLast is max |d| over the last axis (0 for an empty one), whose
// gradient goes whole, signed, to every element reaching the maximum
// (PyTorch's cdist with p = +Inf).
func maxAbsLast(d *NDArray) *NDArray {
	const op = "Cdist"
	if d.shape[d.NDim()-1] == 0 {
		return Sum(d, -1) // zeros, recorded from d
	}
	dd := d.Detach()
	ad := Abs(dd)
	out := Max(ad, -1)
	// The backward function's only recorded operand is g: it serves as
	// its own differentiable form.
	grad := func(g *NDArray, _ []bool) []*NDArray {
		at := Equal(ad, ExpandDims(out.Detach(), -1))
		zero := ad.Session().Zeros(ad.st.dev, ad.dtype, 1)
		return []*NDArray{Mul(ExpandDims(g, -1), Where(at, Sign(dd), zero))}
	}
	RecordDiff(op, out, []*NDArray{d}, grad, grad)
	return out
}
