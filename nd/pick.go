package nd

import "slices"

// pickDims splits x's shape around axis and checks idx's shape, and that
// the axis has an element to pick when idx asks for one.
func pickDims(op string, x, idx *NDArray, axis int) (ax, outer, n, inner int) {
	defer checkLive(op, x, idx).done()
	checkContexts(op, x, idx)
	checkFloat(op, x)
	checkIndex(op, idx)
	ax = normAxis(op, axis, x.NDim())
	want := droppedShape(x.shape, axesMask(op, x.NDim(), []int{ax}))
	if !slices.Equal(idx.shape, want) {
		fail(op, ErrShape, "index shape %v does not match data shape %v without axis %d (want %v)", idx.shape, x.shape, axis, want)
	}
	if x.shape[ax] == 0 && idx.Size() > 0 {
		fail(op, ErrShape, "cannot pick from an empty axis %d of shape %v", axis, x.shape)
	}
	return ax, numel(x.shape[:ax]), x.shape[ax], numel(x.shape[ax+1:])
}

// Pick gathers one element of x along axis for every position of idx:
// out[i..., j...] = x[i..., idx[i..., j...], j...]. idx has x's shape
// without that axis and an integer dtype (or, as before integer arrays
// existed, a floating one holding whole numbers); indices outside [0, n)
// are clipped, as in MXNet's pick with mode "clip". An empty axis has
// nothing to clip to: picking from it is an error unless idx is empty.
// The gradient flows to x only.
func Pick(x, idx *NDArray, axis int) *NDArray {
	return dispatchIx("Pick", castNeutral, []*NDArray{x, idx}, 0b10, func(in []*NDArray) *NDArray { return pickOp(in[0], in[1], axis) })
}

func pickOp(x, idx *NDArray, axis int) *NDArray {
	const op = "Pick"
	_, outer, n, inner := pickDims(op, x, idx, axis)
	out := newArray(op, sessionOf(op, x, idx), x.st.dev, x.dtype, idx.shape)
	if out.Size() > 0 { // an empty result: no kernel, whatever the backend
		x.be().Pick(outer, n, inner, out.arg(), x.arg(), idx.arg())
	}
	back := func(g *NDArray) *NDArray {
		gx := ZerosLike(x)
		if g.Size() > 0 {
			x.be().PickBackward(outer, n, inner, gx.arg(), g.arg(), idx.arg())
		}
		return gx
	}
	RecordDiff(op, out, []*NDArray{x, idx}, func(g *NDArray, need []bool) []*NDArray {
		if !need[0] {
			return nil
		}
		return []*NDArray{back(g), nil}
	}, linearDiff(op, 0, 2, back, func(h *NDArray) *NDArray { return Pick(h, idx, axis) }))
	return out
}

// OneHot returns an array of shape idx.Shape()+[depth] with on at each
// index and off elsewhere. Indices outside [0, depth), and float indices
// that are not whole numbers, give an all-off row. The result has idx's
// dtype when idx is floating (as before integer arrays existed) and
// Float32 when idx is an integer array; OneHotAs chooses.
func OneHot(idx *NDArray, depth int, on, off float64) *NDArray {
	defer checkLive("OneHot", idx).done()
	dt := idx.dtype
	if !dt.IsFloat() {
		dt = Float32
	}
	return oneHot("OneHot", idx, depth, on, off, dt)
}

// OneHotAs is OneHot with a result of dtype dt.
func OneHotAs(idx *NDArray, depth int, on, off float64, dt DType) *NDArray {
	return oneHot("OneHotAs", idx, depth, on, off, dt)
}

func oneHot(op string, idx *NDArray, depth int, on, off float64, dt DType) *NDArray {
	defer checkLive(op, idx).done()
	checkIndex(op, idx)
	if depth <= 0 {
		fail(op, ErrArgument, "depth %d must be positive", depth)
	}
	if !dt.Valid() {
		fail(op, ErrDType, "unknown dtype %v", dt)
	}
	if dt.IsHalf() {
		return narrowed(oneHot(op, idx, depth, on, off, Float32), dt)
	}
	if idx.dtype.IsHalf() {
		w := widened(idx)
		defer w.Release()
		return oneHot(op, w, depth, on, off, dt)
	}
	out := newArray(op, idx.Session(), idx.st.dev, dt, append(idx.Shape(), depth))
	idx.be().OneHot(idx.Size(), depth, out.arg(), idx.arg(), on, off)
	return out
}

// checkIndex fails unless idx can hold indices: an integer dtype, or a
// floating one for callers from before integer arrays.
func checkIndex(op string, idx *NDArray) {
	if idx.dtype == Bool {
		fail(op, ErrDType, "indices must be an integer array (Int64 or Int32), got bool (shape %v)", idx.shape)
	}
}
