package nd

// AffineGrid returns the sampling grid of the affine maps theta for
// GridSample (PyTorch's nn.functional.affine_grid, the spatial
// transformer's grid generator). For 2-D, size is [N, C, H, W], theta
// [N, 2, 3], and the grid [N, H, W, 2]: theta applied to each output
// pixel's normalised (x, y, 1). For 3-D, size is [N, C, D, H, W], theta
// [N, 3, 4] and the grid [N, D, H, W, 3] of (x, y, z). The normalised
// coordinates run from −1 to 1 over the pixels' centres with alignCorners,
// and over their outer edges without (an axis of one pixel has
// coordinate 0). theta is floating (half arrays compute in float32); the
// grid is differentiable in theta. It is one matrix product of theta with
// the base grid, which is made on the host.
func AffineGrid(theta *NDArray, size []int, alignCorners bool) *NDArray {
	const op = "AffineGrid"
	defer checkLive(op, theta).done()
	checkFloat(op, theta)
	k := len(size) - 2 // spatial axes
	if k != 2 && k != 3 {
		fail(op, ErrArgument, "size %v: want [N, C, H, W] or [N, C, D, H, W]", size)
	}
	if theta.NDim() != 3 || theta.shape[0] != size[0] || theta.shape[1] != k || theta.shape[2] != k+1 {
		fail(op, ErrShape, "theta of shape %v for size %v: want [%d, %d, %d]", theta.shape, size, size[0], k, k+1)
	}
	for _, s := range size {
		if s <= 0 {
			fail(op, ErrArgument, "size %v: want positive sizes", size)
		}
	}
	if theta.dtype.IsHalf() {
		w := theta.AsType(Float32)
		return AffineGrid(w, size, alignCorners).AsType(theta.dtype)
	}
	spatial := size[2:] // [H, W] or [D, H, W]
	// The coordinates along each axis, x (the last axis) first.
	coords := make([][]float64, k)
	for i := range k {
		coords[i] = gridLine(spatial[k-1-i], alignCorners)
	}
	points := 1
	for _, s := range spatial {
		points *= s
	}
	base := make([]float64, 0, points*(k+1))
	pos := make([]int, k) // the point's index along each spatial axis
	for range points {
		for i := range k {
			base = append(base, coords[i][pos[k-1-i]])
		}
		base = append(base, 1)
		for a := k - 1; a >= 0; a-- {
			if pos[a]++; pos[a] < spatial[a] {
				break
			}
			pos[a] = 0
		}
	}
	b := theta.Session().fromFloat64s(op, theta.st.dev, theta.dtype, base, points, k+1)
	out := MatMul(b, SwapAxes(theta, 1, 2)) // [N, points, k]
	return Reshape(out, append(append([]int{size[0]}, spatial...), k)...)
}

// gridLine returns n normalised coordinates from −1 to 1 as PyTorch's
// affine_grid makes them: its linspace, scaled by (n−1)/n without
// alignCorners; 0 for n = 1.
func gridLine(n int, alignCorners bool) []float64 {
	v := make([]float64, n)
	if n <= 1 {
		return v
	}
	step := 2 / float64(n-1)
	for i := range v {
		if i < n/2 {
			v[i] = -1 + step*float64(i)
		} else {
			v[i] = 1 - step*float64(n-1-i)
		}
		if !alignCorners {
			v[i] = v[i] * float64(n-1) / float64(n)
		}
	}
	return v
}
