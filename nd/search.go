package nd

import (
	"cmp"
	"math"
	"slices"
)

// Searching and counting: PyTorch's searchsorted, bucketize, nonzero,
// bincount and unique. Searchsorted and Bucketize compare on the device;
// Nonzero, Bincount and Unique read their input back to the host (their
// result's size depends on its values), as PyTorch's synchronise.

// Searchsorted returns, for each of values, the index at which it would be
// inserted into sorted to keep it sorted (PyTorch's searchsorted): the
// number of sorted's elements below it, or with right not above it (a NaN
// value is above every element). sorted
// is a vector, or an array whose leading axes match values' (one sorted
// row per row of values). The result is Int64, of values' shape. Each
// value is compared with every element of its row (n·m work and a Bool
// array of that size, no binary search): meant for bucket boundaries, not
// for long tables.
func Searchsorted(sorted, values *NDArray, right bool) *NDArray {
	const op = "Searchsorted"
	defer checkInputs(op, sorted, values).done()
	if sorted.NDim() == 0 {
		fail(op, ErrShape, "sorted must have an axis, got a scalar")
	}
	if sorted.dtype != values.dtype {
		fail(op, ErrDType, "sorted is %v and values %v", sorted.dtype, values.dtype)
	}
	n := sorted.shape[sorted.NDim()-1]
	var rows *NDArray // sorted, shaped to broadcast against values' last axis
	if sorted.NDim() == 1 {
		shape := make([]int, values.NDim()+1)
		for i := range shape {
			shape[i] = 1
		}
		shape[len(shape)-1] = n
		rows = Reshape(sorted, shape...)
	} else {
		lead := sorted.shape[:sorted.NDim()-1]
		if values.NDim() != sorted.NDim() || !slices.Equal(values.shape[:values.NDim()-1], lead) {
			fail(op, ErrShape, "sorted of shape %v needs values of shape %v[..., m], got %v", sorted.shape, lead, values.shape)
		}
		rows = ExpandDims(sorted, -2)
	}
	v := ExpandDims(values, -1)
	// Counted as not-above rather than below, as PyTorch's binary search
	// compares: a NaN value goes after every element.
	var above *NDArray
	if right {
		above = Greater(rows, v)
	} else {
		above = GreaterEqual(rows, v)
	}
	below := LogicalNot(above)
	out := Sum(below, -1)
	release(rows, v, above, below)
	return out
}

// Bucketize returns the index of the bucket each of values falls in, for
// the sorted vector of boundaries (PyTorch's bucketize): i with
// boundaries[i−1] < v ≤ boundaries[i], or with right boundaries[i−1] ≤ v <
// boundaries[i]. It is Searchsorted(boundaries, values, right).
func Bucketize(values, boundaries *NDArray, right bool) *NDArray {
	if boundaries != nil && boundaries.NDim() != 1 {
		fail("Bucketize", ErrShape, "boundaries of shape %v: want a vector", boundaries.shape)
	}
	return Searchsorted(boundaries, values, right)
}

// Nonzero returns the indices of x's non-zero elements (true for Bool, NaN
// counts) as an Int64 array [count, ndim], in row-major order (PyTorch's
// nonzero).
func Nonzero(x *NDArray) *NDArray {
	const op = "Nonzero"
	defer checkLive(op, x).done()
	nz := x.Bools()
	nd := x.NDim()
	var idx []int64
	coord := make([]int, nd)
	for _, b := range nz {
		if b {
			for _, c := range coord {
				idx = append(idx, int64(c))
			}
		}
		for a := nd - 1; a >= 0; a-- { // the next element's coordinates
			if coord[a]++; coord[a] < x.shape[a] || a == 0 {
				break
			}
			coord[a] = 0
		}
	}
	if idx == nil {
		idx = []int64{}
	}
	count := 0
	if nd > 0 {
		count = len(idx) / nd
	} else if len(nz) == 1 && nz[0] {
		count = 1
	}
	return x.Session().FromSlice(x.st.dev, idx, count, nd)
}

// Bincount counts the occurrences of each value of the non-negative
// integer vector x (PyTorch's bincount): out[v] is how many elements equal
// v, Int64, of length max(x)+1 or minLength if longer. With weights (a
// floating vector of x's length) out[v] sums their weights instead, in
// their dtype, with a gradient for the weights. A negative value is an
// error.
func Bincount(x, weights *NDArray, minLength int) *NDArray {
	const op = "Bincount"
	defer checkLive(op, x).done()
	if x.NDim() != 1 || !x.dtype.IsInt() {
		fail(op, ErrArgument, "needs an integer vector, got %v of shape %v", x.dtype, x.shape)
	}
	if minLength < 0 {
		fail(op, ErrArgument, "negative minLength %d", minLength)
	}
	vals := x.Int64s()
	n := int64(minLength)
	for _, v := range vals {
		if v < 0 {
			fail(op, ErrArgument, "negative value %d", v)
		}
		if v >= math.MaxInt32 {
			fail(op, ErrArgument, "value %d: more than 2^31 bins", v)
		}
		n = max(n, v+1)
	}
	if n > math.MaxInt32 {
		fail(op, ErrArgument, "minLength %d: more than 2^31 bins", n)
	}
	s := x.Session()
	if weights == nil {
		counts := make([]int64, n)
		for _, v := range vals {
			counts[v]++
		}
		return s.FromSlice(x.st.dev, counts, int(n))
	}
	defer checkLive(op, weights).done()
	if !weights.dtype.IsFloat() || !slices.Equal(weights.shape, x.shape) {
		fail(op, ErrArgument, "weights of %v %v: want a floating vector of shape %v", weights.dtype, weights.shape, x.shape)
	}
	return IndexAdd(s.Zeros(x.st.dev, weights.dtype, int(n)), x, weights, 0)
}

// Unique returns the distinct values of x in ascending order (flattened;
// PyTorch's unique with sorted, return_inverse and return_counts): values
// in x's dtype, inverse (Int64, x's shape) the index in values of each
// element, and counts (Int64) how often each value occurs. NaNs are each
// their own value, after the others, as in PyTorch.
func Unique(x *NDArray) (values, inverse, counts *NDArray) {
	const op = "Unique"
	defer checkLive(op, x).done()
	s, dev := x.Session(), x.st.dev
	n := x.Size()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	var same func(i, j int) bool // elements i and j are one value
	var pick func(ix []int) *NDArray
	switch {
	case x.dtype == Bool:
		v := x.Bools()
		slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(b2i(v[i]), b2i(v[j])) })
		same = func(i, j int) bool { return v[i] == v[j] }
		pick = func(ix []int) *NDArray {
			out := make([]bool, len(ix))
			for k, i := range ix {
				out[k] = v[i]
			}
			return s.FromSlice(dev, out, len(out))
		}
	case x.dtype.IsInt():
		v := x.Int64s()
		slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(v[i], v[j]) })
		same = func(i, j int) bool { return v[i] == v[j] }
		pick = func(ix []int) *NDArray {
			out := make([]int64, len(ix))
			for k, i := range ix {
				out[k] = v[i]
			}
			a := s.FromSlice(dev, out, len(out))
			if x.dtype == Int64 {
				return a
			}
			defer a.Release()
			return a.AsType(x.dtype)
		}
	default:
		v := x.Float64s()
		slices.SortStableFunc(order, func(i, j int) int {
			a, b := v[i], v[j]
			switch {
			case math.IsNaN(a) || math.IsNaN(b):
				return cmp.Compare(b2i(math.IsNaN(a)), b2i(math.IsNaN(b)))
			}
			return cmp.Compare(a, b)
		})
		same = func(i, j int) bool { return v[i] == v[j] } // false for NaNs
		pick = func(ix []int) *NDArray {
			out := make([]float64, len(ix))
			for k, i := range ix {
				out[k] = v[i]
			}
			return s.fromFloat64s(op, dev, x.dtype, out, len(out))
		}
	}
	var first []int // the first element of each distinct value, in order
	inv := make([]int64, n)
	var cnt []int64
	for k, i := range order {
		if k == 0 || !same(order[k-1], i) {
			first = append(first, i)
			cnt = append(cnt, 0)
		}
		inv[i] = int64(len(first) - 1)
		cnt[len(cnt)-1]++
	}
	if cnt == nil {
		cnt = []int64{}
	}
	inverse = s.FromSlice(dev, inv, n)
	if x.NDim() != 1 {
		inverse = Reshape(inverse, x.shape...)
	}
	return pick(first), inverse, s.FromSlice(dev, cnt, len(cnt))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
