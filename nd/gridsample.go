package nd

// GridSampleOpts configures GridSample. The zero value is PyTorch's
// default: bilinear sampling, zeros outside the input, corners not
// aligned.
type GridSampleOpts struct {
	// Nearest samples the nearest pixel (halves to even) instead of
	// interpolating bilinearly.
	Nearest bool
	// Padding is what a sample outside the input reads: GridZeros (the
	// zero value), GridBorder (the nearest edge pixel) or GridReflection
	// (the input mirrored at its edges).
	Padding GridPadding
	// AlignCorners maps −1 and 1 to the corner pixels' centres instead of
	// their outer edges.
	AlignCorners bool
}

// GridPadding says what GridSample reads outside the input.
type GridPadding uint8

// The padding modes of GridSample, as PyTorch's padding_mode names them.
const (
	GridZeros GridPadding = iota
	GridBorder
	GridReflection
)

// GridSample samples x [N, C, H, W] at the positions grid [N, Ho, Wo, 2]
// gives, (x, y) normalised to [−1, 1] over the width and height, and
// returns [N, C, Ho, Wo] (PyTorch's grid_sample, the spatial transformer's
// sampler; ONNX's GridSample). It is differentiable in x and in grid, as
// PyTorch's is, built from Gather and elementwise ops. With border or
// reflection padding a position exactly on the clipping bound (an edge
// pixel's centre, or one that reflects onto it) passes no gradient to the
// grid, as in PyTorch, which counts the bounds as outside.
func GridSample(x, grid *NDArray, o GridSampleOpts) *NDArray {
	const op = "GridSample"
	if x == nil || grid == nil {
		fail(op, ErrArgument, "nil input or grid")
	}
	defer checkInputs(op, x, grid).done()
	if x.NDim() != 4 || grid.NDim() != 4 || grid.shape[3] != 2 || grid.shape[0] != x.shape[0] {
		fail(op, ErrShape, "input %v and grid %v: want [N, C, H, W] and [N, Ho, Wo, 2]", x.shape, grid.shape)
	}
	if !x.dtype.IsFloat() {
		fail(op, ErrDType, "grid sampling needs floating-point arrays, got %v", x.dtype)
	}
	if o.Padding > GridReflection {
		fail(op, ErrArgument, "unknown padding %d", o.Padding)
	}
	if x.dtype.IsHalf() {
		return GridSample(x.AsType(Float32), grid.AsType(Float32), o).AsType(x.dtype)
	}
	n, c, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	ho, wo := grid.shape[1], grid.shape[2]
	if h == 0 || w == 0 {
		fail(op, ErrShape, "cannot sample an empty image of shape %v", x.shape)
	}
	flat := Reshape(grid, n, ho*wo, 2)
	ix := gridCoord(Reshape(SliceAxis(flat, 0, 1, 2), n, 1, ho*wo), w, o)
	iy := gridCoord(Reshape(SliceAxis(flat, 1, 2, 2), n, 1, ho*wo), h, o)
	xs := Reshape(x, n, c, h*w)
	// tap gathers x at integer positions (px, py) [N, 1, P], with weight
	// wgt, reading zero where they fall outside.
	tap := func(px, py, wgt *NDArray) *NDArray {
		inside := LogicalAnd(LogicalAnd(GreaterEqual(px, scalarLike(px, 0)), LessEqual(px, scalarLike(px, float64(w-1)))),
			LogicalAnd(GreaterEqual(py, scalarLike(py, 0)), LessEqual(py, scalarLike(py, float64(h-1)))))
		cx, cy := Clip(px, 0, float64(w-1)), Clip(py, 0, float64(h-1))
		idx := Add(Mul(cy, scalarLike(cy, float64(w))), cx).AsType(Int64)
		v := Gather(xs, BroadcastTo(idx, n, c, ho*wo), 2)
		return Mul(v, Where(inside, wgt, ZerosLike(wgt)))
	}
	var y *NDArray
	if o.Nearest {
		y = tap(Round(ix).Detach(), Round(iy).Detach(), OnesLike(ix))
	} else {
		x0, y0 := Floor(ix).Detach(), Floor(iy).Detach()
		x1, y1 := AddScalar(x0, 1), AddScalar(y0, 1)
		wx1, wy1 := Sub(ix, x0), Sub(iy, y0)
		wx0, wy0 := RSubScalar(1, wx1), RSubScalar(1, wy1)
		y = Add(Add(tap(x0, y0, Mul(wx0, wy0)), tap(x1, y0, Mul(wx1, wy0))),
			Add(tap(x0, y1, Mul(wx0, wy1)), tap(x1, y1, Mul(wx1, wy1))))
	}
	return Reshape(y, n, c, ho, wo)
}

// scalarLike is a 0-d array of value v with a's dtype and context, in a's
// session: it broadcasts to any shape.
func scalarLike(a *NDArray, v float64) *NDArray {
	return Reshape(a.Session().Full(a.st.dev, a.dtype, v, 1))
}

// gridCoord turns normalised coordinates g into pixel positions along an
// axis of size n, applying the padding's clamping or reflection as
// PyTorch's grid_sampler_compute_source_index does.
func gridCoord(g *NDArray, n int, o GridSampleOpts) *NDArray {
	var p *NDArray
	if o.AlignCorners {
		p = MulScalar(AddScalar(g, 1), float64(n-1)/2)
	} else {
		p = MulScalar(SubScalar(MulScalar(AddScalar(g, 1), float64(n)), 1), 0.5)
	}
	switch o.Padding {
	case GridBorder:
		p = clipCoord(p, float64(n-1))
	case GridReflection:
		if o.AlignCorners {
			p = reflectCoord(p, 0, float64(2*(n-1)))
		} else {
			p = reflectCoord(p, -1, float64(2*n-1))
		}
		p = clipCoord(p, float64(n-1))
	}
	return p
}

// clipCoord clips p to [0, hi] with PyTorch's clip_coordinates_set_grad
// gradient: 1 strictly inside (0, hi) and 0 elsewhere, the bounds
// included ("it is important for the gradient calculation that borders
// are considered out of bounds"), where Clip's gradient would pass. A
// position exactly on an edge pixel's centre, as the identity affine grid
// with aligned corners gives, so passes no gradient to the grid.
func clipCoord(p *NDArray, hi float64) *NDArray {
	inside := LogicalAnd(Greater(p, scalarLike(p, 0)), Less(p, scalarLike(p, hi)))
	return Where(inside, p, Clip(p, 0, hi).Detach())
}

// reflectCoord mirrors p into [twiceLow/2, twiceHigh/2] as PyTorch's
// reflect_coordinates does.
func reflectCoord(p *NDArray, twiceLow, twiceHigh float64) *NDArray {
	if twiceLow == twiceHigh {
		return ZerosLike(p)
	}
	lo, span := twiceLow/2, (twiceHigh-twiceLow)/2
	d := Abs(SubScalar(p, lo))
	extra := Fmod(d, scalarLike(d, span))
	flips := Floor(DivScalar(d, span)).Detach()
	even := Equal(Fmod(flips, scalarLike(flips, 2)), scalarLike(flips, 0))
	return Where(even, AddScalar(extra, lo), AddScalar(RSubScalar(span, extra), lo))
}
