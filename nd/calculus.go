package nd

import "slices"

// Differences, rotations and integrals along an axis: PyTorch's diff,
// rot90, trapezoid and cumulative_trapezoid, composed from slices,
// elementwise ops, Flip and Cumsum, so they run where their inputs live
// and are differentiable.

// Diff returns the n-th forward difference of x along axis dim (PyTorch's
// diff): out[i] = x[i+1] − x[i], applied n times, each shortening the axis
// by one (to 0 at most). prepend and append, when not nil, are joined to x
// along dim first; they share x's dtype, context and number of axes, and
// its sizes on the other axes. Bool arrays differ by exclusive or, as in
// PyTorch. n = 0 returns a copy of x alone, as PyTorch's returns x; a
// negative n is an error (PyTorch 1.13 returns x unchanged). The
// difference is differentiable in x, prepend and append.
func Diff(x *NDArray, n, dim int, prepend, append *NDArray) *NDArray {
	const op = "Diff"
	parts := []*NDArray{x}
	if prepend != nil {
		parts = slices.Insert(parts, 0, prepend)
	}
	if append != nil {
		parts = slices.Concat(parts, []*NDArray{append})
	}
	defer checkInputs(op, parts...).done()
	if x.NDim() == 0 {
		fail(op, ErrShape, "needs an array with an axis, got a scalar")
	}
	if n < 0 {
		fail(op, ErrArgument, "negative order %d", n)
	}
	ax := normAxis(op, dim, x.NDim())
	for _, p := range parts {
		if p.NDim() != x.NDim() {
			fail(op, ErrShape, "prepend or append of shape %v for x of shape %v: want as many axes", p.shape, x.shape)
		}
		for d := range p.shape {
			if d != ax && p.shape[d] != x.shape[d] {
				fail(op, ErrShape, "prepend or append of shape %v for x of shape %v: want the same sizes outside axis %d", p.shape, x.shape, dim)
			}
		}
	}
	if n == 0 {
		return Concat([]*NDArray{x}, ax) // a copy
	}
	y := x
	if len(parts) > 1 {
		y = Concat(parts, ax)
	}
	for range n {
		l := y.shape[ax]
		if l == 0 {
			break
		}
		hi, lo := SliceAxis(y, 1, l, ax), SliceAxis(y, 0, l-1, ax)
		if y.dtype == Bool {
			y = LogicalXor(hi, lo)
		} else {
			y = Sub(hi, lo)
		}
	}
	return y
}

// Rot90 rotates x by k quarter turns in the plane of axes dims (PyTorch's
// rot90): from the first axis towards the second for k > 0, the other way
// for k < 0; k = 0 gives a copy. The axes are distinct (negative ones count
// from the end). The gradient is the output gradient rotated back.
func Rot90(x *NDArray, k int, dims [2]int) *NDArray {
	const op = "Rot90"
	defer checkLive(op, x).done()
	if x.NDim() < 2 {
		fail(op, ErrShape, "needs at least two axes, got shape %v", x.shape)
	}
	d0, d1 := normAxis(op, dims[0], x.NDim()), normAxis(op, dims[1], x.NDim())
	if d0 == d1 {
		fail(op, ErrArgument, "axes %v name one axis twice", dims)
	}
	switch ((k % 4) + 4) % 4 {
	case 1:
		return SwapAxes(Flip(x, d1), d0, d1)
	case 2:
		return Flip(x, d0, d1)
	case 3:
		return SwapAxes(Flip(x, d0), d0, d1)
	}
	return Concat([]*NDArray{x}, 0) // a copy
}

// Trapezoid integrates y along axis dim by the trapezoidal rule with
// samples dx apart (PyTorch's trapezoid with dx), removing the axis:
// (Σ y − (y₀ + yₙ₋₁)/2)·dx, as PyTorch computes it. An empty axis gives
// zeros. y is floating; the integral is differentiable in it.
func Trapezoid(y *NDArray, dx float64, dim int) *NDArray {
	const op = "Trapezoid"
	defer checkLive(op, y).done()
	ax := trapezoidAxis(op, y, dim)
	n := y.shape[ax]
	if n == 0 {
		return Sum(y, ax) // zeros
	}
	ends := Add(Squeeze(SliceAxis(y, 0, 1, ax), ax), Squeeze(SliceAxis(y, n-1, n, ax), ax))
	return MulScalar(Sub(Sum(y, ax), MulScalar(ends, 0.5)), dx)
}

// TrapezoidX integrates y along axis dim by the trapezoidal rule at the
// sample positions x (PyTorch's trapezoid with x): Σ (x[i+1] − x[i])·
// (y[i+1] + y[i])/2. x is a vector of y.shape[dim] positions, or an array
// whose differences along dim broadcast against y's (with fewer axes than
// y it gets leading axes of size 1), as in PyTorch. An empty axis gives
// zeros. x and y are floating arrays of one dtype; the integral is
// differentiable in both.
func TrapezoidX(y, x *NDArray, dim int) *NDArray {
	const op = "TrapezoidX"
	defer checkInputs(op, y, x).done()
	ax := trapezoidAxis(op, y, dim)
	n := y.shape[ax]
	if n == 0 {
		return Sum(y, ax) // zeros
	}
	dx := sampleSteps(op, y, x, ax)
	dy := Add(SliceAxis(y, 1, n, ax), SliceAxis(y, 0, n-1, ax))
	broadcastShape(op, dx.shape, dy.shape)
	return DivScalar(Sum(Mul(dx, dy), ax), 2)
}

// CumulativeTrapezoid returns the running trapezoidal integral of y along
// axis dim with samples dx apart (PyTorch's cumulative_trapezoid with dx):
// the axis shrinks by one (to 0 at most), element i integrating up to
// sample i+1. y is floating; it is differentiable in y.
func CumulativeTrapezoid(y *NDArray, dx float64, dim int) *NDArray {
	const op = "CumulativeTrapezoid"
	defer checkLive(op, y).done()
	ax := trapezoidAxis(op, y, dim)
	n := y.shape[ax]
	m := max(n-1, 0)
	terms := MulScalar(Add(SliceAxis(y, 0, m, ax), SliceAxis(y, min(1, n), n, ax)), dx/2)
	if m == 0 {
		return terms
	}
	return Cumsum(terms, ax)
}

// CumulativeTrapezoidX returns the running trapezoidal integral of y along
// axis dim at the sample positions x (PyTorch's cumulative_trapezoid with
// x; x as in TrapezoidX). x and y are floating arrays of one dtype; it is
// differentiable in both.
func CumulativeTrapezoidX(y, x *NDArray, dim int) *NDArray {
	const op = "CumulativeTrapezoidX"
	defer checkInputs(op, y, x).done()
	ax := trapezoidAxis(op, y, dim)
	n := y.shape[ax]
	m := max(n-1, 0)
	dx := sampleSteps(op, y, x, ax)
	sum := Add(SliceAxis(y, 0, m, ax), SliceAxis(y, min(1, n), n, ax))
	broadcastShape(op, dx.shape, sum.shape)
	terms := DivScalar(Mul(dx, sum), 2)
	if m == 0 || terms.shape[ax] == 0 {
		return terms
	}
	return Cumsum(terms, ax)
}

// trapezoidAxis checks y for the trapezoidal rules and normalises dim.
func trapezoidAxis(op string, y *NDArray, dim int) int {
	checkFloat(op, y)
	if y.NDim() == 0 {
		fail(op, ErrShape, "needs an array with an axis, got a scalar")
	}
	return normAxis(op, dim, y.NDim())
}

// sampleSteps returns the differences of the sample positions x along
// axis ax of y, shaped as PyTorch's trapezoid shapes them: a vector of
// y.shape[ax] positions lies along ax; an array of fewer axes than y gets
// leading axes of size 1.
func sampleSteps(op string, y, x *NDArray, ax int) *NDArray {
	var xv *NDArray
	switch {
	case x.NDim() == 1:
		if x.shape[0] != y.shape[ax] {
			fail(op, ErrShape, "x of shape %v for y of shape %v: want one position per sample (%d)", x.shape, y.shape, y.shape[ax])
		}
		shape := make([]int, y.NDim())
		for i := range shape {
			shape[i] = 1
		}
		shape[ax] = x.shape[0]
		xv = Reshape(x, shape...)
	case x.NDim() < y.NDim():
		xv = Reshape(x, leadingOnes(x.shape, y.NDim())...)
	default:
		xv = x
	}
	l := xv.shape[ax]
	return Sub(SliceAxis(xv, min(1, l), l, ax), SliceAxis(xv, 0, max(l-1, 0), ax))
}
