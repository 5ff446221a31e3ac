package nd

// Conv1DOpts configures Conv1D. Zero fields take their defaults: stride 1,
// padding 0, dilation 1, one group.
type Conv1DOpts struct {
	Stride, Pad, Dilate, Groups int
}

// Conv1D computes the 1-D convolution (cross-correlation) of x [N, C, W]
// with w [O, C/groups, K], plus bias [O] if bias is not nil (PyTorch's
// conv1d; Gluon's Conv1D with layout NCW). It runs on the backend's 2-D
// convolution kernels over a height of one, so every backend that
// convolves in 2-D has it.
func Conv1D(x, w, bias *NDArray, o Conv1DOpts) *NDArray {
	return dispatchNative("Conv1D", castLow, []*NDArray{x, w, bias}, func(in []*NDArray) *NDArray { return conv1DOp(in[0], in[1], in[2], o) })
}

func conv1DOp(x, w, bias *NDArray, o Conv1DOpts) *NDArray {
	const op = "Conv1D"
	inputs := convInputs(op, x, w, bias)
	if x.NDim() != 3 || w.NDim() != 3 {
		fail(op, ErrShape, "want NCW input and [out, in/groups, k] weight, got %v and %v", x.shape, w.shape)
	}
	p := convShapes(op, x, w, []int{x.shape[0], x.shape[1], 1, x.shape[2]}, []int{w.shape[0], w.shape[1], 1, w.shape[2]},
		ConvOpts{Stride: [2]int{1, orOne(o.Stride)}, Pad: [2]int{0, o.Pad}, Dilate: [2]int{1, orOne(o.Dilate)}, Groups: o.Groups})
	return conv(op, inputs, p, false, []int{p.N, p.OutC, p.OutW})
}
