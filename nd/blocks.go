package nd

// Arrays assembled from others: PyTorch's block_diag, cartesian_prod and
// vander, built from Concat, Meshgrid, Stack and Cumprod, so they run
// where their inputs live and are differentiable.

// BlockDiag returns the block-diagonal matrix of arrays (PyTorch's
// block_diag): each of them a matrix, a vector (one row) or a scalar (1×1),
// placed corner to corner along the diagonal, zeros elsewhere. The result
// is [Σ rows, Σ columns]. The arrays share a dtype and a context; the
// gradient of each is its block of the output gradient.
func BlockDiag(arrays ...*NDArray) *NDArray {
	const op = "BlockDiag"
	if len(arrays) == 0 {
		fail(op, ErrArgument, "no arrays")
	}
	defer checkInputs(op, arrays...).done()
	blocks := make([]*NDArray, len(arrays))
	cols := 0
	for i, a := range arrays {
		switch a.NDim() {
		case 0:
			blocks[i] = Reshape(a, 1, 1)
		case 1:
			blocks[i] = Reshape(a, 1, a.shape[0])
		case 2:
			blocks[i] = a
		default:
			fail(op, ErrShape, "array %d has shape %v: want at most two axes", i, a.shape)
		}
		cols += blocks[i].shape[1]
	}
	s := sessionOf(op, arrays...)
	first := arrays[0]
	rows := make([]*NDArray, 0, len(blocks))
	at := 0
	for _, b := range blocks {
		r, c := b.shape[0], b.shape[1]
		parts := make([]*NDArray, 0, 3)
		if at > 0 {
			parts = append(parts, s.Zeros(first.st.dev, first.dtype, r, at))
		}
		parts = append(parts, b)
		if after := cols - at - c; after > 0 {
			parts = append(parts, s.Zeros(first.st.dev, first.dtype, r, after))
		}
		rows = append(rows, Concat(parts, 1))
		at += c
	}
	return Concat(rows, 0)
}

// CartesianProd returns the Cartesian product of the vectors arrays
// (PyTorch's cartesian_prod): a [Π lengths, len(arrays)] array whose rows
// are every combination, the last vector varying fastest. One vector is
// returned as a copy of itself (a vector, as in PyTorch). The vectors share
// a dtype and a context; the gradient sums back into each.
func CartesianProd(arrays ...*NDArray) *NDArray {
	const op = "CartesianProd"
	if len(arrays) == 0 {
		fail(op, ErrArgument, "no arrays")
	}
	defer checkInputs(op, arrays...).done()
	for i, a := range arrays {
		if a.NDim() != 1 {
			fail(op, ErrShape, "array %d has shape %v: want a vector", i, a.shape)
		}
	}
	if len(arrays) == 1 {
		return Concat(arrays, 0) // a copy
	}
	grids := Meshgrid("ij", arrays...)
	for i, g := range grids {
		grids[i] = Reshape(g, g.Size())
	}
	return Stack(grids, 1)
}

// Vander returns the Vandermonde matrix of the vector x (PyTorch's vander):
// [len(x), n], column j holding x^(n−1−j), or with increasing x^j. n < 0
// means len(x) (PyTorch's N=None). The powers are running products
// (Cumprod), so the gradient is exact where x is 0. Integer and Bool
// vectors give Int64 powers, as PyTorch's, and wrap. With n ≤ 1 the result
// does not depend on x and records no gradient, as in PyTorch.
func Vander(x *NDArray, n int, increasing bool) *NDArray {
	const op = "Vander"
	defer checkLive(op, x).done()
	if x.NDim() != 1 {
		fail(op, ErrShape, "x of shape %v: want a vector", x.shape)
	}
	if !x.dtype.IsFloat() && x.dtype != Int64 {
		x = x.AsType(Int64)
	}
	m := x.shape[0]
	if n < 0 {
		n = m
	}
	s := x.Session()
	ones := s.Ones(x.st.dev, x.dtype, m, min(n, 1))
	out := ones
	if n > 1 {
		pow := Cumprod(BroadcastTo(Reshape(x, m, 1), m, n-1), 1)
		out = Concat([]*NDArray{ones, pow}, 1)
	}
	if !increasing {
		return Flip(out, 1)
	}
	return out
}
