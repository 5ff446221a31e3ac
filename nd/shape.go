package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// Reshape returns a view of x with a new shape holding the same number of
// elements. One dimension may be -1 and is then inferred.
func Reshape(x *NDArray, shape ...int) *NDArray {
	const op = "Reshape"
	defer checkLive(op, x).done()
	shape = slices.Clone(shape)
	infer, known := -1, 1
	for i, s := range shape {
		switch {
		case s == -1 && infer < 0:
			infer = i
		case s < 0:
			fail(op, ErrShape, "invalid target shape %v", shape)
		default:
			known *= s
		}
	}
	if infer >= 0 {
		if known == 0 && x.Size() == 0 {
			fail(op, ErrShape, "cannot reshape %v into %v: the other dimensions hold no elements, so the -1 could be any size (give it explicitly)", x.shape, shape)
		}
		if known == 0 || x.Size()%known != 0 {
			fail(op, ErrShape, "cannot reshape %v into %v", x.shape, shape)
		}
		shape[infer] = x.Size() / known
	}
	if numel(shape) != x.Size() {
		fail(op, ErrShape, "cannot reshape %v (%d elements) into %v", x.shape, x.Size(), shape)
	}
	y := x.view(0, shape)
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{g.view(0, x.shape)}
	}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{Reshape(g, x.shape...)} })
	return y
}

// Flatten reshapes x to [N, rest], keeping the first axis.
func Flatten(x *NDArray) *NDArray {
	defer checkLive("Flatten", x).done()
	if x.NDim() == 0 {
		fail("Flatten", ErrShape, "cannot flatten a 0-d array")
	}
	rest := 1 // not -1, which a zero batch leaves ambiguous: [0, 3, 4, 4] gives [0, 48] as in PyTorch
	for _, d := range x.shape[1:] {
		rest *= d
	}
	return Reshape(x, x.shape[0], rest)
}

// ExpandDims inserts an axis of size 1 at position axis (which may be
// NDim, or negative counting from the end).
func ExpandDims(x *NDArray, axis int) *NDArray {
	defer checkLive("ExpandDims", x).done()
	ax := normAxis("ExpandDims", axis, x.NDim()+1)
	return Reshape(x, slices.Insert(x.Shape(), ax, 1)...)
}

// Squeeze removes the given axes of size 1 (all size-1 axes when none are
// given).
func Squeeze(x *NDArray, axes ...int) *NDArray {
	defer checkLive("Squeeze", x).done()
	drop := make([]bool, x.NDim())
	if len(axes) == 0 {
		for i, s := range x.shape {
			drop[i] = s == 1
		}
	}
	for _, a := range axes {
		ax := normAxis("Squeeze", a, x.NDim())
		if x.shape[ax] != 1 {
			fail("Squeeze", ErrShape, "axis %d of shape %v is not 1", a, x.shape)
		}
		drop[ax] = true
	}
	return Reshape(x, droppedShape(x.shape, drop)...)
}

// Transpose permutes the axes of x; with no axes it reverses them.
func Transpose(x *NDArray, axes ...int) *NDArray {
	const op = "Transpose"
	defer checkLive(op, x).done()
	nd := x.NDim()
	if len(axes) == 0 {
		for i := nd - 1; i >= 0; i-- {
			axes = append(axes, i)
		}
	}
	if len(axes) != nd {
		fail(op, ErrArgument, "%d axes for a %d-d array", len(axes), nd)
	}
	perm := make([]int, nd)
	seen := make([]bool, nd)
	for i, a := range axes {
		p := normAxis(op, a, nd)
		if seen[p] {
			fail(op, ErrArgument, "axes %v are not a permutation", axes)
		}
		seen[p], perm[i] = true, p
	}
	y := permuteRaw(x, perm)
	inv := make([]int, nd)
	for i, p := range perm {
		inv[p] = i
	}
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{permuteRaw(g, inv)}
	}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{Transpose(g, inv...)} })
	return y
}

func permuteRaw(x *NDArray, perm []int) *NDArray {
	shape := make([]int, len(perm))
	src := x.storageArg()
	own := backend.ContiguousStrides(x.shape)
	src.Strides = make([]int, len(perm))
	for i, p := range perm {
		shape[i], src.Strides[i] = x.shape[p], own[p]
	}
	out := newArray("Transpose", x.Session(), x.st.dev, x.dtype, shape)
	x.be().Copy(shape, out.storageArg(), src)
	return out
}

// region describes the part of a (contiguous) array of shape full that
// starts at index begin along axis, with the given sub-shape. When a or
// the region is empty its offset may lie past the end of a's buffer, so
// callers copy through copyRegion.
func region(a *NDArray, axis, begin int) backend.Arg {
	st := backend.ContiguousStrides(a.shape)
	arg := a.storageArg()
	arg.Off += begin * st[axis]
	arg.Strides = st
	return arg
}

// copyRegion copies src into dst over shape, skipping the copy when shape
// holds no elements (where a region's offset may lie outside its buffer,
// which a backend need not accept).
func copyRegion(be backend.Backend, shape []int, dst, src backend.Arg) {
	if numel(shape) > 0 {
		be.Copy(shape, dst, src)
	}
}

// SliceAxis returns the elements of x with begin <= index < end along
// axis. Negative begin and end count from the end. A slice along the
// first axis is a view; others are copies.
func SliceAxis(x *NDArray, begin, end, axis int) *NDArray {
	const op = "SliceAxis"
	defer checkLive(op, x).done()
	ax := normAxis(op, axis, x.NDim())
	n := x.shape[ax]
	if begin < 0 {
		begin += n
	}
	if end < 0 {
		end += n
	}
	if begin < 0 || end > n || begin > end {
		fail(op, ErrArgument, "range [%d, %d) out of bounds for axis %d of shape %v", begin, end, axis, x.shape)
	}
	shape := x.Shape()
	shape[ax] = end - begin
	var y *NDArray
	if ax == 0 || numel(x.shape[:ax]) == 1 {
		y = x.view(begin*backend.ContiguousStrides(x.shape)[ax], shape)
	} else {
		y = newArray(op, x.Session(), x.st.dev, x.dtype, shape)
		copyRegion(x.be(), shape, y.storageArg(), region(x, ax, begin))
	}
	back := func(g *NDArray) *NDArray {
		gx := ZerosLike(x)
		copyRegion(x.be(), g.shape, region(gx, ax, begin), g.storageArg())
		return gx
	}
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{back(g)}
	}, linearDiff(op, 0, 1, back, func(h *NDArray) *NDArray { return SliceAxis(h, begin, end, ax) }))
	return y
}

// Concat joins arrays along axis; all other dimensions must agree.
func Concat(arrs []*NDArray, axis int) *NDArray {
	const op = "Concat"
	if len(arrs) == 0 {
		fail(op, ErrArgument, "no arrays")
	}
	if autocasting.Load() > 0 {
		in := slices.Clone(arrs)
		if made := autocast(op, castWidest, in, 0); len(made) > 0 {
			out := Concat(in, axis)
			castsDone(out, made)
			return out
		}
	}
	defer checkInputs(op, arrs...).done()
	first := arrs[0]
	ax := normAxis(op, axis, first.NDim())
	shape := first.Shape()
	shape[ax] = 0
	for _, a := range arrs {
		if a.NDim() != first.NDim() {
			fail(op, ErrShape, "shapes %v and %v differ in rank", first.shape, a.shape)
		}
		for d := range a.shape {
			if d != ax && a.shape[d] != first.shape[d] {
				fail(op, ErrShape, "shapes %v and %v differ outside axis %d", first.shape, a.shape, axis)
			}
		}
		shape[ax] += a.shape[ax]
	}
	out := newArray(op, sessionOf(op, arrs...), first.st.dev, first.dtype, shape)
	begins := make([]int, len(arrs))
	at := 0
	for i, a := range arrs {
		begins[i] = at
		copyRegion(first.be(), a.shape, region(out, ax, at), a.storageArg())
		at += a.shape[ax]
	}
	RecordDiff(op, out, arrs, func(g *NDArray, need []bool) []*NDArray {
		grads := make([]*NDArray, len(arrs))
		for i, a := range arrs {
			if need[i] {
				grads[i] = newArray(op, g.Session(), g.st.dev, g.dtype, a.shape)
				copyRegion(g.be(), a.shape, grads[i].storageArg(), region(g, ax, begins[i]))
			}
		}
		return grads
	}, func(g *NDArray, need []bool) []*NDArray {
		grads := make([]*NDArray, len(arrs))
		for i, a := range arrs {
			if need[i] {
				grads[i] = SliceAxis(g, begins[i], begins[i]+a.shape[ax], ax)
			}
		}
		return grads
	})
	return out
}

// Split cuts x into n equal parts along axis.
func Split(x *NDArray, n, axis int) []*NDArray {
	defer checkLive("Split", x).done()
	ax := normAxis("Split", axis, x.NDim())
	if n <= 0 || x.shape[ax]%n != 0 {
		fail("Split", ErrShape, "axis %d of shape %v does not split into %d equal parts", axis, x.shape, n)
	}
	step := x.shape[ax] / n
	out := make([]*NDArray, n)
	for i := range out {
		out[i] = SliceAxis(x, i*step, (i+1)*step, ax)
	}
	return out
}

// Stack joins arrays of one shape along a new axis.
func Stack(arrs []*NDArray, axis int) *NDArray {
	if len(arrs) == 0 {
		fail("Stack", ErrArgument, "no arrays")
	}
	if autocasting.Load() > 0 {
		in := slices.Clone(arrs)
		if made := autocast("Stack", castWidest, in, 0); len(made) > 0 {
			out := Stack(in, axis)
			castsDone(out, made)
			return out
		}
	}
	defer checkInputs("Stack", arrs...).done()
	for _, a := range arrs[1:] {
		if !slices.Equal(a.shape, arrs[0].shape) {
			fail("Stack", ErrShape, "shapes %v and %v differ", arrs[0].shape, a.shape)
		}
	}
	if axis < -(arrs[0].NDim()+1) || axis > arrs[0].NDim() {
		fail("Stack", ErrArgument, "axis %d out of range for stacking %d-d arrays (want [%d, %d])", axis, arrs[0].NDim(), -(arrs[0].NDim() + 1), arrs[0].NDim())
	}
	arrs = sessionOf("Stack", arrs...).lift("Stack", arrs...)
	ex := make([]*NDArray, len(arrs))
	for i, a := range arrs {
		ex[i] = ExpandDims(a, axis)
	}
	return Concat(ex, axis)
}

// BroadcastTo repeats x along its size-1 (or missing leading) axes to shape.
func BroadcastTo(x *NDArray, shape ...int) *NDArray {
	const op = "BroadcastTo"
	defer checkLive(op, x).done()
	if !slices.Equal(broadcastShape(op, x.shape, shape), shape) {
		fail(op, ErrShape, "cannot broadcast %v to %v", x.shape, shape)
	}
	y := broadcastRaw(x, shape)
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{sumTo(g, x.shape)}
	}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{sumToRecorded(g, x.shape)} })
	return y
}
