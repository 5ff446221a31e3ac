package nd

import (
	"math"
	"slices"

	"github.com/goluon/goluon/ctx"
)

// Matrix-shaped creation and rearrangement: PyTorch's eye, linspace,
// tril, triu, diagonal, diag_embed, outer, roll and meshgrid. The
// rearrangements are built from differentiable ops (MaskedFill, Take,
// Concat, BroadcastTo), so they have gradients and run on every backend.

// Eye returns an n×m array of dtype dt with ones on the k-th diagonal
// (k > 0 above the main one, k < 0 below) and zeros elsewhere (PyTorch's
// eye, NumPy's eye with k).
func Eye(dev ctx.Context, dt DType, n, m, k int) *NDArray { return creator().Eye(dev, dt, n, m, k) }

// Eye is the package-level Eye making an array of s.
func (s *Session) Eye(dev ctx.Context, dt DType, n, m, k int) *NDArray {
	if n < 0 || m < 0 {
		fail("Eye", ErrShape, "negative size %d×%d", n, m)
	}
	if n > 0 && m > (1<<31)/n {
		fail("Eye", ErrShape, "size %d×%d has more than 2^31 elements", n, m)
	}
	v := make([]float64, n*m)
	for i := range n {
		if j := i + k; j >= 0 && j < m {
			v[i*m+j] = 1
		}
	}
	return s.fromFloat64s("Eye", dev, dt, v, n, m)
}

// Linspace returns num values of dtype dt evenly spaced from start to stop,
// both included (PyTorch's linspace: each value is computed in float64
// from the nearer end, so the last is stop exactly).
func Linspace(dev ctx.Context, dt DType, start, stop float64, num int) *NDArray {
	return creator().Linspace(dev, dt, start, stop, num)
}

// Linspace is the package-level Linspace making an array of s.
func (s *Session) Linspace(dev ctx.Context, dt DType, start, stop float64, num int) *NDArray {
	if num < 0 || num > 1<<31 {
		fail("Linspace", ErrArgument, "count %d outside [0, 2^31]", num)
	}
	if math.IsNaN(start) || math.IsNaN(stop) || math.IsInf(start, 0) || math.IsInf(stop, 0) {
		fail("Linspace", ErrArgument, "endpoints %g and %g are not finite", start, stop)
	}
	v := make([]float64, num)
	if num == 1 {
		v[0] = start
	}
	if num > 1 {
		step := (stop - start) / float64(num-1)
		half := num / 2
		for i := range v {
			if i < half {
				v[i] = start + step*float64(i)
			} else {
				v[i] = stop - step*float64(num-1-i)
			}
		}
	}
	return s.fromFloat64s("Linspace", dev, dt, v, num)
}

// fromFloat64s uploads v as an array of dt, converted as AsType converts.
func (s *Session) fromFloat64s(op string, dev ctx.Context, dt DType, v []float64, shape ...int) *NDArray {
	if !dt.Valid() {
		fail(op, ErrDType, "unknown dtype %v", dt)
	}
	a := s.FromSlice(dev, v, shape...)
	if dt == Float64 {
		return a
	}
	out := a.AsType(dt)
	a.Release()
	return out
}

// Tril returns x with the elements above the k-th diagonal of its last two
// axes zeroed (PyTorch's tril: k = 0 keeps the main diagonal, k > 0 more,
// k < 0 less). Leading axes are a batch. The gradient is the output
// gradient, zeroed alike.
func Tril(x *NDArray, k int) *NDArray { return triangle("Tril", x, k, true) }

// Triu returns x with the elements below the k-th diagonal of its last two
// axes zeroed (PyTorch's triu); see Tril.
func Triu(x *NDArray, k int) *NDArray { return triangle("Triu", x, k, false) }

func triangle(op string, x *NDArray, k int, lower bool) *NDArray {
	defer checkLive(op, x).done()
	nd := x.NDim()
	if nd < 2 {
		fail(op, ErrShape, "needs at least two axes, got shape %v", x.shape)
	}
	r, c := x.shape[nd-2], x.shape[nd-1]
	drop := make([]bool, r*c) // the zeroed side of the diagonal
	for i := range r {
		for j := range c {
			if lower {
				drop[i*c+j] = j-i > k
			} else {
				drop[i*c+j] = j-i < k
			}
		}
	}
	mask := x.Session().FromSlice(x.st.dev, drop, r, c) // the backward pass reads it
	return MaskedFill(x, mask, 0)
}

// Diagonal returns the offset-th diagonal of the last two axes of x
// (PyTorch's diagonal(x, offset, -2, -1)): shape [..., d], d the
// diagonal's length (0 when it lies outside). The gradient goes back to
// the diagonal's elements.
func Diagonal(x *NDArray, offset int) *NDArray {
	const op = "Diagonal"
	defer checkLive(op, x).done()
	nd := x.NDim()
	if nd < 2 {
		fail(op, ErrShape, "needs at least two axes, got shape %v", x.shape)
	}
	r, c := x.shape[nd-2], x.shape[nd-1]
	var idx []int64
	for i := range r {
		if j := i + offset; j >= 0 && j < c {
			idx = append(idx, int64(i*c+j))
		}
	}
	if idx == nil {
		idx = []int64{}
	}
	flat := append(append([]int{}, x.shape[:nd-2]...), r*c)
	xf := Reshape(x, flat...)
	ix := x.Session().FromSlice(x.st.dev, idx, len(idx)) // the backward pass reads it
	return Take(xf, ix, nd-2)
}

// DiagEmbed returns arrays whose offset-th diagonal of the last two axes
// holds v's last axis, zeros elsewhere (PyTorch's diag_embed): v of shape
// [..., n] gives [..., n+|offset|, n+|offset|]. The gradient is the
// output gradient's diagonal.
func DiagEmbed(v *NDArray, offset int) *NDArray {
	const op = "DiagEmbed"
	defer checkLive(op, v).done()
	nd := v.NDim()
	if nd < 1 {
		fail(op, ErrShape, "needs at least one axis, got a scalar")
	}
	n := v.shape[nd-1]
	size := n + abs(offset)
	idx := make([]int64, n) // where each value lands in its flattened matrix
	for i := range idx {
		row, col := i, i+offset
		if offset < 0 {
			row, col = i-offset, i
		}
		idx[i] = int64(row*size + col)
	}
	s := v.Session()
	ix := s.FromSlice(v.st.dev, idx, n) // the backward pass reads it
	lead := v.shape[:nd-1]
	zeros := s.Zeros(v.st.dev, v.dtype, append(append([]int{}, lead...), size*size)...)
	out := IndexAdd(zeros, ix, v, nd-1)
	return Reshape(out, append(append([]int{}, lead...), size, size)...)
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

// Outer returns the outer product of the vectors a [n] and b [m], [n, m]
// (PyTorch's outer).
func Outer(a, b *NDArray) *NDArray {
	const op = "Outer"
	defer checkInputs(op, a, b).done()
	if a.NDim() != 1 || b.NDim() != 1 {
		fail(op, ErrShape, "needs two vectors, got shapes %v and %v", a.shape, b.shape)
	}
	return Mul(Reshape(a, a.shape[0], 1), Reshape(b, 1, b.shape[0]))
}

// Roll shifts x by shift positions along axis, the elements that leave at
// one end coming back at the other (PyTorch's roll with one dim; a
// negative shift rolls the other way).
func Roll(x *NDArray, shift, axis int) *NDArray {
	const op = "Roll"
	defer checkLive(op, x).done()
	axis = normAxis(op, axis, x.NDim())
	n := x.shape[axis]
	if n == 0 {
		return Concat([]*NDArray{x}, axis)
	}
	s := ((shift % n) + n) % n
	if s == 0 {
		return Concat([]*NDArray{x}, axis) // a copy, as PyTorch's
	}
	return Concat([]*NDArray{SliceAxis(x, n-s, n, axis), SliceAxis(x, 0, n-s, axis)}, axis)
}

// Meshgrid returns coordinate arrays for the vectors xs (scalars count as
// vectors of one; PyTorch's meshgrid): with indexing "ij" the i-th output varies along axis i, of
// shape [len(xs[0]), len(xs[1]), ...]; with "xy" (NumPy's default) the
// first two axes are swapped, as for image coordinates. Each output
// broadcasts its vector, and its gradient sums back into it.
func Meshgrid(indexing string, xs ...*NDArray) []*NDArray {
	const op = "Meshgrid"
	if indexing != "ij" && indexing != "xy" {
		fail(op, ErrArgument, "indexing %q: want \"ij\" or \"xy\"", indexing)
	}
	if len(xs) == 0 {
		fail(op, ErrArgument, "no vectors")
	}
	shape := make([]int, len(xs))
	xs = slices.Clone(xs)
	for i, x := range xs {
		defer checkLive(op, x).done()
		switch x.NDim() {
		case 0:
			xs[i] = Reshape(x, 1) // a scalar is a vector of one, as in PyTorch
		case 1:
		default:
			fail(op, ErrShape, "input %d has shape %v, want a vector", i, x.shape)
		}
		shape[i] = xs[i].shape[0]
	}
	pos := func(i int) int { return i } // the axis input i varies along
	if indexing == "xy" && len(xs) > 1 {
		shape[0], shape[1] = shape[1], shape[0]
		pos = func(i int) int {
			switch i {
			case 0:
				return 1
			case 1:
				return 0
			}
			return i
		}
	}
	out := make([]*NDArray, len(xs))
	for i, x := range xs {
		view := make([]int, len(xs))
		for j := range view {
			view[j] = 1
		}
		view[pos(i)] = x.shape[0]
		out[i] = BroadcastTo(Reshape(x, view...), shape...)
	}
	return out
}
