package nd

import "slices"

// Products of arrays beyond MatMul and Einsum: PyTorch's kron,
// linalg.cross and tensordot, composed from broadcasting Mul, slices and
// MatMul, so every backend has them and their gradients follow from those
// ops'.

// Kron returns the Kronecker product of a and b (PyTorch's kron): the
// array of a's shape times b's, axis by axis, whose block at index i of
// a is a[i]·b. The operand of fewer axes gets leading axes of size 1
// first; two scalars give their product. a and b share a dtype;
// the product is differentiable in both.
func Kron(a, b *NDArray) *NDArray {
	const op = "Kron"
	defer checkInputs(op, a, b).done()
	n := max(a.NDim(), b.NDim())
	as, bs := leadingOnes(a.shape, n), leadingOnes(b.shape, n)
	ia, ib := make([]int, 2*n), make([]int, 2*n)
	out := make([]int, n)
	for i := range n {
		ia[2*i], ia[2*i+1] = as[i], 1
		ib[2*i], ib[2*i+1] = 1, bs[i]
		out[i] = as[i] * bs[i]
	}
	return Reshape(Mul(Reshape(a, ia...), Reshape(b, ib...)), out...)
}

// leadingOnes returns shape with axes of size 1 put in front to make n
// axes.
func leadingOnes(shape []int, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	copy(out[n-len(shape):], shape)
	return out
}

// Cross returns the cross product of the 3-vectors of a and b along axis
// dim (PyTorch's linalg.cross; −1 is the last axis): a and b have the same
// number of axes, size 3 along dim, and broadcast along the others. The
// result has the broadcast shape; it is differentiable in both.
func Cross(a, b *NDArray, dim int) *NDArray {
	const op = "Cross"
	defer checkInputs(op, a, b).done()
	if a.NDim() != b.NDim() {
		fail(op, ErrShape, "inputs of shapes %v and %v: want the same number of axes", a.shape, b.shape)
	}
	if a.NDim() == 0 {
		fail(op, ErrShape, "needs arrays with an axis, got scalars")
	}
	ax := normAxis(op, dim, a.NDim())
	if a.shape[ax] != 3 || b.shape[ax] != 3 {
		fail(op, ErrShape, "axis %d of shapes %v and %v: want size 3 in both", dim, a.shape, b.shape)
	}
	broadcastShape(op, a.shape, b.shape)
	c := func(x *NDArray, i int) *NDArray { return SliceAxis(x, i, i+1, ax) }
	x := Sub(Mul(c(a, 1), c(b, 2)), Mul(c(a, 2), c(b, 1)))
	y := Sub(Mul(c(a, 2), c(b, 0)), Mul(c(a, 0), c(b, 2)))
	z := Sub(Mul(c(a, 0), c(b, 1)), Mul(c(a, 1), c(b, 0)))
	return Concat([]*NDArray{x, y, z}, ax)
}

// Tensordot contracts axes dimsA of a with axes dimsB of b, pairwise
// (PyTorch's tensordot with dims as two lists; negative axes count from
// the end): the result's axes are a's others, then b's others, in order.
// Paired axes have one size, or one of them size 1, which is summed over
// first, as PyTorch's does. With no axes it is the outer product. a and b
// are floating arrays of one dtype; it is differentiable in both.
func Tensordot(a, b *NDArray, dimsA, dimsB []int) *NDArray {
	const op = "Tensordot"
	defer checkInputs(op, a, b).done()
	checkFloat(op, a)
	if len(dimsA) != len(dimsB) {
		fail(op, ErrArgument, "%d axes of a and %d of b: want as many", len(dimsA), len(dimsB))
	}
	ca, cb := contractAxes(op, "a", dimsA, a.NDim()), contractAxes(op, "b", dimsB, b.NDim())
	k := 1
	for i := range ca {
		sa, sb := a.shape[ca[i]], b.shape[cb[i]]
		switch {
		case sb == 1:
			a = SumKeepDims(a, ca[i])
		case sa == 1:
			b = SumKeepDims(b, cb[i])
		case sa != sb:
			fail(op, ErrShape, "axis %d of a %v has size %d, axis %d of b %v size %d", ca[i], a.shape, sa, cb[i], b.shape, sb)
		default:
			k *= sa
		}
	}
	freeA, freeB := otherAxes(ca, a.NDim()), otherAxes(cb, b.NDim())
	var outShape []int
	m, n := 1, 1
	for _, ax := range freeA {
		outShape = append(outShape, a.shape[ax])
		m *= a.shape[ax]
	}
	for _, ax := range freeB {
		outShape = append(outShape, b.shape[ax])
		n *= b.shape[ax]
	}
	am := Reshape(Transpose(a, append(slices.Clone(freeA), ca...)...), m, k)
	bm := Reshape(Transpose(b, append(slices.Clone(cb), freeB...)...), k, n)
	return Reshape(MatMul(am, bm), outShape...)
}

// contractAxes normalises the axes of operand name, which must be
// distinct.
func contractAxes(op, name string, dims []int, ndim int) []int {
	out := make([]int, len(dims))
	seen := make([]bool, ndim)
	for i, d := range dims {
		if d < -ndim || d >= ndim {
			fail(op, ErrArgument, "axis %d of %s out of range for %d dimensions", d, name, ndim)
		}
		out[i] = normAxis(op, d, ndim)
		if seen[out[i]] {
			fail(op, ErrArgument, "axis %d of %s given twice", d, name)
		}
		seen[out[i]] = true
	}
	return out
}

// otherAxes lists the axes below ndim that are not in axes, in order.
func otherAxes(axes []int, ndim int) []int {
	var out []int
	for ax := range ndim {
		if !slices.Contains(axes, ax) {
			out = append(out, ax)
		}
	}
	return out
}
