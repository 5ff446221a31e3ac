package nd

import "math"

// Pdist returns the p-norm distances between every pair of x's rows
// (PyTorch's nn.functional.pdist; p = 2 is its default): x is a floating
// [N, M] matrix and the result the N(N−1)/2 distances of rows i < j, in
// row-major order of (i, j). p is any non-negative number or +Inf; p = 0
// counts the differing coordinates (NaN where a difference is NaN, as in
// PyTorch). The gradient is PyTorch's: 0 at a zero
// distance (and for p = 0), sign(d) for p = 1, and with p = +Inf the whole
// gradient, signed, to every coordinate that reaches the maximum. It holds
// the [N(N−1)/2, M] differences.
func Pdist(x *NDArray, p float64) *NDArray {
	const op = "Pdist"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if x.NDim() != 2 {
		fail(op, ErrShape, "x of shape %v: want a matrix [N, M]", x.shape)
	}
	if !(p >= 0) {
		fail(op, ErrArgument, "p = %g: want a non-negative number or +Inf", p)
	}
	n := x.shape[0]
	var first, second []int64
	for i := range n {
		for j := i + 1; j < n; j++ {
			first, second = append(first, int64(i)), append(second, int64(j))
		}
	}
	s := x.Session()
	pairs := len(first)
	// The index arrays stay alive: Take's backward reads them.
	fi := s.FromSlice(x.st.dev, nonNilInts(first), pairs)
	si := s.FromSlice(x.st.dev, nonNilInts(second), pairs)
	return rowNorms(Sub(Take(x, fi, 0), Take(x, si, 0)), p)
}

func nonNilInts(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

// rowNorms returns the p-norms of d's rows, recorded with PyTorch's
// backward formulas of pdist.
func rowNorms(d *NDArray, p float64) *NDArray {
	const op = "Pdist"
	dd := d.Detach()
	s := dd.Session()
	zero := Reshape(s.Zeros(dd.st.dev, dd.dtype, 1))
	ad := Abs(dd)
	var out *NDArray
	switch {
	case p == 0:
		// PyTorch sums min(⌈|d|⌉, 1): 1 for each differing coordinate,
		// and NaN for a NaN difference (NaN ≠ NaN picks those out).
		out = Sum(Where(NotEqual(dd, dd), dd, NotEqual(dd, zero).AsType(dd.dtype)), -1)
	case p == 1:
		out = Sum(ad, -1)
	case p == 2:
		out = Sqrt(Sum(Square(dd), -1))
	case math.IsInf(p, 1):
		if dd.shape[1] == 0 {
			out = Sum(ad, -1) // zeros
		} else {
			out = Max(ad, -1)
		}
	default:
		out = PowScalar(Sum(PowScalar(ad, p), -1), 1/p)
	}
	Record(op, out, []*NDArray{d}, func(g *NDArray, _ []bool) []*NDArray {
		gd := ExpandDims(g, -1)
		dist := ExpandDims(out.Detach(), -1)
		atZero := Equal(dist, zero)
		var gx *NDArray
		switch {
		case p == 0:
			gx = ZerosLike(dd)
		case p == 1:
			gx = Mul(Sign(dd), gd)
		case p == 2:
			gx = Where(atZero, zero, Div(Mul(gd, dd), dist))
		case math.IsInf(p, 1):
			gx = Mul(Mul(gd, Sign(dd)), Equal(ad, dist).AsType(dd.dtype))
		case p < 2:
			r := Div(Mul(Mul(Sign(dd), PowScalar(ad, p-1)), gd), PowScalar(dist, p-1))
			skip := atZero
			if p < 1 {
				skip = LogicalOr(skip, Equal(dd, zero))
			}
			gx = Where(skip, zero, r)
		default:
			r := Div(Mul(Mul(dd, PowScalar(ad, p-2)), gd), PowScalar(dist, p-1))
			gx = Where(atZero, zero, r)
		}
		return []*NDArray{gx}
	})
	return out
}
