package nd

// UnfoldOpts configures Unfold and Fold: the sliding blocks' kernel size,
// and their stride, padding and dilation (zero fields: stride 1, padding
// 0, dilation 1), as PyTorch's unfold and fold take them.
type UnfoldOpts struct {
	Kernel [2]int
	Stride [2]int
	Pad    [2]int
	Dilate [2]int
}

// Unfold extracts the sliding blocks of NCHW x (PyTorch's unfold, im2col):
// [N, C·KH·KW, L], block l's values in channel-major then kernel-row
// order, L the number of block positions. It is a grouped Conv2D with
// one-hot kernels, so every backend runs it and its gradient is the
// convolution's.
func Unfold(x *NDArray, o UnfoldOpts) *NDArray {
	const op = "Unfold"
	defer checkLive(op, x).done()
	if x.NDim() != 4 {
		fail(op, ErrShape, "input %v: want NCHW", x.shape)
	}
	checkFloat(op, x)
	c := x.shape[1]
	w := picker(op, x, c, o.Kernel)
	y := Conv2D(x, w, nil, ConvOpts{Stride: o.Stride, Pad: o.Pad, Dilate: o.Dilate, Groups: c})
	return Reshape(y, y.shape[0], y.shape[1], y.shape[2]*y.shape[3])
}

// Fold sums sliding blocks [N, C·KH·KW, L] back into an NCHW array of the
// given output size (PyTorch's fold, col2im: overlapping blocks add up),
// the adjoint of Unfold with the same options. L must be the number of
// block positions in that size. It is a grouped Conv2DTranspose with
// one-hot kernels.
func Fold(x *NDArray, outH, outW int, o UnfoldOpts) *NDArray {
	const op = "Fold"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	kh, kw := o.Kernel[0], o.Kernel[1]
	if x.NDim() != 3 || kh < 1 || kw < 1 || x.shape[1]%(kh*kw) != 0 {
		fail(op, ErrShape, "blocks %v for a %dx%d kernel: want [N, C·%d, L]", x.shape, kh, kw, max(kh*kw, 1))
	}
	sh, sw := orOne(o.Stride[0]), orOne(o.Stride[1])
	dh, dw := orOne(o.Dilate[0]), orOne(o.Dilate[1])
	spanH := outH + 2*o.Pad[0] - dh*(kh-1) - 1
	spanW := outW + 2*o.Pad[1] - dw*(kw-1) - 1
	if outH < 1 || outW < 1 || spanH < 0 || spanW < 0 || o.Pad[0] < 0 || o.Pad[1] < 0 {
		fail(op, ErrShape, "output %dx%d holds no %dx%d block with padding %v and dilation [%d %d]", outH, outW, kh, kw, o.Pad, dh, dw)
	}
	bh, bw := spanH/sh+1, spanW/sw+1
	if x.shape[2] != bh*bw {
		fail(op, ErrShape, "%d blocks, but a %dx%d output has %dx%d = %d positions", x.shape[2], outH, outW, bh, bw, bh*bw)
	}
	c := x.shape[1] / (kh * kw)
	w := picker(op, x, c, o.Kernel)
	y := Reshape(x, x.shape[0], x.shape[1], bh, bw)
	return Conv2DTranspose(y, w, nil, ConvTransposeOpts{Stride: o.Stride, Pad: o.Pad, Dilate: o.Dilate, Groups: c,
		OutputPad: [2]int{spanH % sh, spanW % sw}})
}

// picker is the one-hot kernel [C·KH·KW, 1, KH, KW] that copies kernel
// position k of channel c to output channel c·KH·KW + k.
func picker(op string, like *NDArray, c int, kernel [2]int) *NDArray {
	kh, kw := kernel[0], kernel[1]
	if kh < 1 || kw < 1 {
		fail(op, ErrArgument, "kernel %v: want positive sizes", kernel)
	}
	kk := kh * kw
	v := make([]float64, c*kk*kk)
	for ch := range c {
		for k := range kk {
			v[(ch*kk+k)*kk+k] = 1
		}
	}
	return like.Session().fromFloat64s(op, like.st.dev, like.dtype, v, c*kk, 1, kh, kw)
}
