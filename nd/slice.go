package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// Range selects indices along one axis for Slice, as Python's
// begin:end:step does. Build one with All, Span, SpanStep, From or Every;
// the zero value is All.
type Range struct {
	begin, end, step          int
	hasBegin, hasEnd, hasStep bool
}

// All selects a whole axis (Python's ":").
func All() Range { return Range{} }

// Span selects begin <= i < end (Python's "begin:end"); negative values
// count from the end.
func Span(begin, end int) Range { return Range{begin: begin, end: end, hasBegin: true, hasEnd: true} }

// SpanStep selects begin, begin+step, ... up to but excluding end (Python's
// "begin:end:step"); step may be negative (then begin > end).
func SpanStep(begin, end, step int) Range {
	return Range{begin: begin, end: end, step: step, hasBegin: true, hasEnd: true, hasStep: true}
}

// From selects begin to the end of the axis (Python's "begin:").
func From(begin int) Range { return Range{begin: begin, hasBegin: true} }

// Every selects every step-th index of the whole axis (Python's "::step");
// Every(-1) reverses the axis.
func Every(step int) Range { return Range{step: step, hasStep: true} }

// resolve turns r into a start index, a step and a count for an axis of
// size n, clamping as Python's slice.indices does.
func (r Range) resolve(op string, axis, n int) (start, step, count int) {
	step = r.step
	if !r.hasStep {
		step = 1
	}
	if step == 0 {
		fail(op, ErrArgument, "step 0 on axis %d", axis)
	}
	norm := func(v, lo, hi int) int {
		if v < 0 {
			v += n
		}
		return min(max(v, lo), hi)
	}
	if step > 0 {
		start, end := 0, n
		if r.hasBegin {
			start = norm(r.begin, 0, n)
		}
		if r.hasEnd {
			end = norm(r.end, 0, n)
		}
		return start, step, max(0, (end-start+step-1)/step)
	}
	start, end := n-1, -1
	if r.hasBegin {
		start = norm(r.begin, -1, n-1)
	}
	if r.hasEnd {
		end = r.end
		if end < 0 {
			end += n
		}
		end = min(max(end, -1), n-1)
	}
	return start, step, max(0, (start-end-step-1)/(-step))
}

// Slice selects a range of indices on each axis: ranges[d] applies to axis
// d, and axes without a range are taken whole (Python's x[r0, r1, ...]).
// Steps may be negative, which reverses. The result is a new array (a
// view when only the first axis is sliced with step 1); the gradient is
// scattered back to the selected positions.
func Slice(x *NDArray, ranges ...Range) *NDArray {
	const op = "Slice"
	defer checkLive(op, x).done()
	if len(ranges) > x.NDim() {
		fail(op, ErrArgument, "%d ranges for a %d-d array of shape %v", len(ranges), x.NDim(), x.shape)
	}
	out, src, dstView := sliceRaw(op, x, ranges)
	back := func(g *NDArray) *NDArray {
		gx := ZerosLike(x)
		if g.Size() > 0 {
			dst := gx.storageArg()
			dst.Off += src.Off - x.off
			dst.Strides = src.Strides
			x.be().Copy(dstView, dst, g.storageArg())
		}
		return gx
	}
	RecordDiff(op, out, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{back(g)}
	}, linearDiff(op, 0, 1, back, func(h *NDArray) *NDArray { return Slice(h, ranges...) }))
	return out
}

// sliceRaw computes Slice without recording; it also returns the strided
// view of x that was copied and its shape (the output's).
func sliceRaw(op string, x *NDArray, ranges []Range) (*NDArray, backend.Arg, []int) {
	own := backend.ContiguousStrides(x.shape)
	shape := slices.Clone(x.shape)
	st := slices.Clone(own)
	off := 0
	for d, r := range ranges {
		start, step, count := r.resolve(op, d, x.shape[d])
		shape[d] = count
		st[d] = own[d] * step
		if count > 0 {
			off += start * own[d]
		}
	}
	src := x.storageArg()
	src.Off += off
	src.Strides = st
	out := newArray(op, x.Session(), x.st.dev, x.dtype, shape)
	if out.Size() > 0 {
		x.be().Copy(shape, out.storageArg(), src)
	}
	return out, src, shape
}

// flipRaw reverses x along axis without recording.
func flipRaw(x *NDArray, axis int) *NDArray {
	ranges := make([]Range, x.NDim())
	ranges[axis] = Every(-1)
	out, _, _ := sliceRaw("Flip", x, ranges)
	return out
}

// Flip reverses x along the given axes (all when none are given), as
// NumPy's flip and PyTorch's flip.
func Flip(x *NDArray, axes ...int) *NDArray {
	const op = "Flip"
	defer checkLive(op, x).done()
	mask := axesMask(op, x.NDim(), axes)
	ranges := make([]Range, x.NDim())
	for d, m := range mask {
		if m {
			ranges[d] = Every(-1)
		}
	}
	return Slice(x, ranges...)
}

// SwapAxes exchanges two axes of x (MXNet's swapaxes, PyTorch's
// transpose(a, b)).
func SwapAxes(x *NDArray, a, b int) *NDArray {
	const op = "SwapAxes"
	defer checkLive(op, x).done()
	a, b = normAxis(op, a, x.NDim()), normAxis(op, b, x.NDim())
	perm := make([]int, x.NDim())
	for i := range perm {
		perm[i] = i
	}
	perm[a], perm[b] = b, a
	return Transpose(x, perm...)
}

// Tile repeats x reps[d] times along each axis (NumPy's tile): reps shorter
// than x's dimensions are padded with leading 1s, longer ones add leading
// axes. The gradient sums over the copies.
func Tile(x *NDArray, reps ...int) *NDArray {
	const op = "Tile"
	defer checkLive(op, x).done()
	nd := max(len(reps), x.NDim())
	shape := slices.Concat(make([]int, nd-x.NDim()), x.shape)
	r := slices.Concat(make([]int, nd-len(reps)), reps)
	for d := range shape {
		if d < nd-x.NDim() {
			shape[d] = 1
		}
		if d < nd-len(reps) {
			r[d] = 1
		}
		if r[d] < 0 {
			fail(op, ErrArgument, "negative repetition %d in %v", r[d], reps)
		}
	}
	// [s0, s1] -> [1, s0, 1, s1] -> broadcast [r0, s0, r1, s1] -> [r0*s0, r1*s1].
	var inter, wide, final []int
	for d := range shape {
		inter = append(inter, 1, shape[d])
		wide = append(wide, r[d], shape[d])
		final = append(final, r[d]*shape[d])
	}
	v := Reshape(x, inter...)
	b := BroadcastTo(v, wide...)
	return Reshape(b, final...)
}

// Repeat repeats each element of x n times along axis (MXNet's repeat,
// PyTorch's repeat_interleave): [a b] becomes [a a b b] for n = 2. The
// gradient sums over the copies.
func Repeat(x *NDArray, n, axis int) *NDArray {
	const op = "Repeat"
	defer checkLive(op, x).done()
	if n < 0 {
		fail(op, ErrArgument, "negative repeat count %d", n)
	}
	ax := normAxis(op, axis, x.NDim())
	inter := slices.Insert(slices.Clone(x.shape), ax+1, 1)
	wide := slices.Clone(inter)
	wide[ax+1] = n
	final := slices.Clone(x.shape)
	final[ax] *= n
	v := Reshape(x, inter...)
	b := BroadcastTo(v, wide...)
	return Reshape(b, final...)
}
