package nd

import "math"

// Histc counts x's elements in bins equal-width bins spanning [lo, hi]
// (PyTorch's histc): an element v falls in bin ⌊(v − lo)/(hi − lo)·bins⌋,
// computed in x's dtype as PyTorch 1.13 computes it, hi itself in the last
// bin; elements outside [lo, hi] are not counted, nor are NaNs (PyTorch
// 1.13's CPU kernel counts them in bin 0; its CUDA kernel and later
// versions skip them). With lo = hi
// the range is x's minimum and maximum (read back to the host), and when
// those are equal too (or x is empty) it widens to [lo − 1, hi + 1]; a
// range still empty in float64 (1e20 ± 1) is an error, and one empty
// only once rounded to x's dtype counts the values on its edge in bin 0,
// as PyTorch's do. The
// counts are a floating vector of x's dtype, with no gradient. The bin
// positions are computed where x lives; half arrays count in float32.
func Histc(x *NDArray, bins int, lo, hi float64) *NDArray {
	const op = "Histc"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if bins <= 0 {
		fail(op, ErrArgument, "%d bins: want at least one", bins)
	}
	xd := x.Detach()
	if x.dtype.IsHalf() {
		w := xd.AsType(Float32)
		c := Histc(w, bins, lo, hi)
		out := c.AsType(x.dtype)
		release(w, c)
		return out
	}
	s := x.Session()
	if lo == hi && x.Size() > 0 {
		lo, hi = Min(xd).Scalar(), Max(xd).Scalar()
		if CountNonzero(NotEqual(xd, xd)).Int64s()[0] > 0 {
			lo, hi = math.NaN(), math.NaN() // as PyTorch's minimum and maximum of a NaN
		}
	}
	if lo == hi {
		lo, hi = lo-1, hi+1
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		fail(op, ErrArgument, "range [%g, %g] is not finite", lo, hi)
	}
	if !(lo < hi) { // 1e20 ± 1 is 1e20: still empty after widening
		fail(op, ErrArgument, "range [%g, %g]: max must be larger than min", lo, hi)
	}
	// The edges in x's dtype, and their distance, as PyTorch's kernel
	// holds them.
	left, right := roundedTo(x.dtype, lo), roundedTo(x.dtype, hi)
	width := roundedTo(x.dtype, right-left)
	inside := LogicalAnd(GreaterEqual(xd, scalarLike(xd, left)), LessEqual(xd, scalarLike(xd, right)))
	var pos *NDArray
	if width == 0 {
		// The range is empty in x's dtype ([1, 1+1e-12] in float32): the
		// values on its edge go to bin 0, as PyTorch's kernel puts them.
		pos = ZerosLike(xd)
	} else {
		pos = MulScalar(DivScalar(SubScalar(xd, left), width), float64(bins))
		pos = Where(inside, pos, ZerosLike(pos))
	}
	idx := Clip(pos, 0, float64(bins-1)).AsType(Int64)
	ones := inside.AsType(x.dtype)
	n := x.Size()
	out := IndexAdd(s.Zeros(x.st.dev, x.dtype, bins), Reshape(idx, n), Reshape(ones, n), 0)
	release(inside, pos, idx, ones)
	return out
}
