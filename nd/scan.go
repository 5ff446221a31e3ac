package nd

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// The running products, extremes and log-sum-exps (PyTorch's cumprod,
// cummax, cummin and logcumsumexp), computed as inclusive scans in log₂ n
// rounds of one elementwise op between the array and itself shifted
// (Hillis–Steele): every backend has them, and their gradients follow from
// the elementwise ops'. The rounds combine the elements in another order
// than a sequential loop, so results may differ from PyTorch's in their
// last bits.

// scanRounds returns the inclusive scan of x along ax under combine, an
// associative op whose identity is id; combine's first argument is the
// earlier part.
func scanRounds(x *NDArray, ax int, id float64, combine func(earlier, later *NDArray) *NDArray) *NDArray {
	n := x.shape[ax]
	y := x
	for d := 1; d < n; d *= 2 {
		shape := slices.Clone(x.shape)
		shape[ax] = d
		pad := x.Session().Full(x.st.dev, x.dtype, id, shape...)
		shifted := Concat([]*NDArray{pad, SliceAxis(y, 0, n-d, ax)}, ax)
		y = combine(shifted, y)
	}
	if y == x {
		return MulScalar(x, 1) // a copy, as a scan makes
	}
	return y
}

// Cumprod returns the running product of x along axis (PyTorch's
// cumprod). Its gradient is exact where elements are 0. Integer and Bool
// products are Int64, as PyTorch's, and wrap.
func Cumprod(x *NDArray, axis int) *NDArray {
	const op = "Cumprod"
	defer checkLive(op, x).done()
	if !x.dtype.IsFloat() && x.dtype != Int64 {
		x = x.AsType(Int64)
	}
	return scanRounds(x, normAxis(op, axis, x.NDim()), 1, Mul)
}

// Cummax returns the running maximum of x along axis and the Int64 index
// where it was reached (PyTorch's cummax: of equal maxima the latest; a NaN
// stays, with the index of the latest NaN). The gradient goes to those
// indices.
func Cummax(x *NDArray, axis int) (values, indices *NDArray) {
	return cumExtreme("Cummax", x, axis, Maximum, backend.GreaterEqual, true)
}

// Cummin returns the running minimum of x along axis and its index, as
// Cummax.
func Cummin(x *NDArray, axis int) (values, indices *NDArray) {
	return cumExtreme("Cummin", x, axis, Minimum, backend.LessEqual, false)
}

func cumExtreme(op string, x *NDArray, axis int, pick func(a, b *NDArray) *NDArray, reached backend.BinaryOp, isMax bool) (values, indices *NDArray) {
	defer checkLive(op, x).done()
	if x.dtype == Bool {
		fail(op, ErrDType, "is not defined on bool arrays; convert with AsType first")
	}
	ax := normAxis(op, axis, x.NDim())
	n := x.shape[ax]
	s := x.Session()
	if n == 0 {
		return MulScalar(x, 1), s.Zeros(x.st.dev, Int64, x.shape...)
	}
	xd := x.Detach()
	run := scanRounds(xd, ax, extremeIdentity(x.dtype, isMax), pick)
	// An element reaches the running extreme where it equals or passes it
	// (ties: the latest) or is NaN, as PyTorch's loop updates.
	hit := binaryInto(op, reached, xd, run, Bool)
	if x.dtype.IsFloat() {
		hit = LogicalOr(hit, NotEqual(xd, xd))
	}
	pos := make([]int, x.NDim())
	for i := range pos {
		pos[i] = 1
	}
	pos[ax] = n
	at := Reshape(s.Arange(x.st.dev, Int64, 0, float64(n), 1), pos...)
	cand := Where(hit, at, s.Full(x.st.dev, Int64, -1))
	indices = scanRounds(cand, ax, -1, Maximum)
	values = Gather(x, indices, ax)
	return values, indices
}

// extremeIdentity is the value a running maximum (isMax) or minimum of dt
// starts from: the lowest or highest value dt holds.
func extremeIdentity(dt DType, isMax bool) float64 {
	var lo, hi float64
	switch dt {
	case Int64:
		lo, hi = math.MinInt64, math.MaxInt64
	case Int32:
		lo, hi = math.MinInt32, math.MaxInt32
	case Uint8:
		lo, hi = 0, math.MaxUint8
	default:
		lo, hi = math.Inf(-1), math.Inf(1)
	}
	if isMax {
		return lo
	}
	return hi
}

// Logcumsumexp returns the running log Σ exp of x along axis (PyTorch's
// logcumsumexp), without overflow or underflow (each step adds two terms
// as max + log1p(exp(−|a−b|))). −Inf elements add nothing; a slice of them
// gives −Inf with gradient 0.
func Logcumsumexp(x *NDArray, axis int) *NDArray {
	const op = "Logcumsumexp"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	return scanRounds(x, normAxis(op, axis, x.NDim()), math.Inf(-1), logAddExp)
}

// logAddExp returns log(e^a + e^b), recorded with the gradients e^(a−out)
// and e^(b−out): 0 where out is −Inf, and where it is +Inf 1 for a +Inf
// term and 0 for the others.
func logAddExp(a, b *NDArray) *NDArray {
	const op = "LogAddExp"
	ad, bd := a.Detach(), b.Detach()
	m := Maximum(ad, bd)
	out := Add(m, Log1p(Exp(Neg(Abs(Sub(ad, bd))))))
	inf := NotEqual(Abs(m), m.Session().Full(m.st.dev, m.dtype, math.Inf(1)))
	out = Where(inf, out, m) // ±Inf extremes: a − b would be NaN
	// grads computes the gradients from ops on a, b and out: detached
	// for Backward, connected for GradWith's CreateGraph.
	grads := func(g, a, b, od *NDArray, need []bool, sum func(*NDArray, []int) *NDArray) []*NDArray {
		s := od.Session()
		inf := s.Full(od.st.dev, od.dtype, math.Inf(1))
		finite := NotEqual(Abs(od.Detach()), inf)
		zero, one := s.Zeros(od.st.dev, od.dtype, 1), s.Ones(od.st.dev, od.dtype, 1)
		share := func(v *NDArray) *NDArray {
			atInf := Where(LogicalAnd(Equal(od.Detach(), inf), Equal(v.Detach(), inf)), one, zero)
			return sum(Mul(g, Where(finite, Exp(Sub(v, od)), atInf)), v.shape)
		}
		var ga, gb *NDArray
		if need[0] {
			ga = share(a)
		}
		if need[1] {
			gb = share(b)
		}
		return []*NDArray{ga, gb}
	}
	RecordDiff(op, out, []*NDArray{a, b}, func(g *NDArray, need []bool) []*NDArray {
		return grads(g, ad, bd, out.Detach(), need, reduceGrad)
	}, func(g *NDArray, need []bool) []*NDArray { return grads(g, a, b, out, need, sumToRecorded) })
	return out
}
