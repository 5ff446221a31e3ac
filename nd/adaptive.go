package nd

// AdaptiveAvgPool2D averages NCHW x into an outH×outW grid (PyTorch's
// adaptive_avg_pool2d): output cell (i, j) is the mean of input rows
// ⌊i·H/outH⌋ to ⌈(i+1)·H/outH⌉−1 and the matching columns, so the cells
// cover the input whatever its size (a 1×1 input is replicated). When the
// sizes divide, it is AvgPool2D with a kernel and stride of H/outH×W/outW.
// It is differentiable through the ops it is made of.
func AdaptiveAvgPool2D(x *NDArray, outH, outW int) *NDArray {
	return dispatch("AdaptiveAvgPool2D", castNeutral, []*NDArray{x}, func(in []*NDArray) *NDArray { return adaptiveAvgPool2DOp(in[0], outH, outW) })
}

func adaptiveAvgPool2DOp(x *NDArray, outH, outW int) *NDArray {
	return adaptivePool("AdaptiveAvgPool2D", x, outH, outW, AvgPool2D, MeanKeepDims)
}

// adaptivePool pools NCHW x into an outH×outW grid of PyTorch's adaptive
// windows: with pool (a kernel and stride of H/outH×W/outW) when the sizes
// divide, otherwise one axis at a time with reduce, which must be
// separable (a mean or a maximum).
func adaptivePool(op string, x *NDArray, outH, outW int, pool func(x *NDArray, kernel, stride, pad [2]int) *NDArray, reduce func(x *NDArray, axes ...int) *NDArray) *NDArray {
	defer checkLive(op, x).done()
	if x.NDim() != 4 || outH <= 0 || outW <= 0 {
		fail(op, ErrShape, "input %v (want NCHW) to %d×%d", x.shape, outH, outW)
	}
	h, w := x.shape[2], x.shape[3]
	if h%outH == 0 && w%outW == 0 {
		if h == outH && w == outW {
			return x.Copy()
		}
		k := [2]int{h / outH, w / outW}
		return pool(x, k, k, [2]int{})
	}
	return adaptiveAxis(adaptiveAxis(x, 2, outH, reduce), 3, outW, reduce)
}

// adaptiveAxis reduces axis of x into n cells.
func adaptiveAxis(x *NDArray, axis, n int, reduce func(x *NDArray, axes ...int) *NDArray) *NDArray {
	size := x.shape[axis]
	if size == n {
		return x
	}
	cells := make([]*NDArray, n)
	for i := range n {
		lo, hi := i*size/n, ((i+1)*size+n-1)/n
		cells[i] = reduce(SliceAxis(x, lo, hi, axis), axis)
	}
	return Concat(cells, axis)
}

// AdaptiveMaxPool2D takes the maximum of NCHW x over an outH×outW grid of
// windows (PyTorch's adaptive_max_pool2d; the windows are
// AdaptiveAvgPool2D's). When the sizes divide, it is MaxPool2D with a
// kernel and stride of H/outH×W/outW; otherwise the maximum is taken one
// axis at a time (it is separable). The gradient goes to the maximum, split
// among equal ones where the windows do not divide evenly; a window holding
// a NaN gives NaN, and its gradient is not PyTorch's (which routes it to
// the NaN).
func AdaptiveMaxPool2D(x *NDArray, outH, outW int) *NDArray {
	return dispatch("AdaptiveMaxPool2D", castNeutral, []*NDArray{x}, func(in []*NDArray) *NDArray { return adaptiveMaxPool2DOp(in[0], outH, outW) })
}

func adaptiveMaxPool2DOp(x *NDArray, outH, outW int) *NDArray {
	return adaptivePool("AdaptiveMaxPool2D", x, outH, outW, MaxPool2D, MaxKeepDims)
}
