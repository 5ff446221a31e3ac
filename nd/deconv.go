package nd

import "github.com/goluon/goluon/nd/backend"

// ConvTransposeOpts configures Conv2DTranspose. Zero fields take their
// defaults: stride 1, padding 0, no output padding, dilation 1, one group.
type ConvTransposeOpts struct {
	Stride    [2]int
	Pad       [2]int
	OutputPad [2]int // added to one side of the output; each below its stride or dilation
	Dilate    [2]int
	Groups    int
}

// Conv2DTranspose computes the transposed convolution (the gradient of
// Conv2D with respect to its input; PyTorch's conv_transpose2d, Gluon's
// Conv2DTranspose) of x [N, Cin, H, W] with w [Cin, Cout/groups, KH, KW],
// plus bias [Cout] if bias is not nil. The output is [N, Cout, H', W'] with
//
//	H' = (H−1)·stride − 2·pad + dilate·(KH−1) + outputPad + 1
//
// and likewise W'. It runs on the backend's convolution kernels: forward is
// Conv2DBackwardData, the input's gradient a Conv2D and the weight's a
// Conv2DBackwardFilter, with the roles of input and output swapped.
func Conv2DTranspose(x, w, bias *NDArray, o ConvTransposeOpts) *NDArray {
	return dispatchNative("Conv2DTranspose", castLow, []*NDArray{x, w, bias}, func(in []*NDArray) *NDArray { return conv2DTransposeOp(in[0], in[1], in[2], o) })
}

func conv2DTransposeOp(x, w, bias *NDArray, o ConvTransposeOpts) *NDArray {
	const op = "Conv2DTranspose"
	inputs := convInputs(op, x, w, bias)
	p := deconvParams(op, x, w, o)
	return conv(op, inputs, p, true, []int{p.N, p.InC, p.InH, p.InW})
}

// deconvParams validates Conv2DTranspose's operands and returns the
// parameters of the convolution it transposes: that convolution's input is
// the transposed convolution's output and its output x.
func deconvParams(op string, x, w *NDArray, o ConvTransposeOpts) backend.ConvParams {
	if x.NDim() != 4 || w.NDim() != 4 {
		fail(op, ErrShape, "want NCHW input and [in, out/groups, kh, kw] weight, got %v and %v", x.shape, w.shape)
	}
	g := orOne(o.Groups)
	p := backend.ConvParams{
		N: x.shape[0], OutC: x.shape[1], OutH: x.shape[2], OutW: x.shape[3],
		InC: w.shape[1] * g, KH: w.shape[2], KW: w.shape[3],
		StrideH: orOne(o.Stride[0]), StrideW: orOne(o.Stride[1]),
		PadH: o.Pad[0], PadW: o.Pad[1],
		DilateH: orOne(o.Dilate[0]), DilateW: orOne(o.Dilate[1]),
		Groups: g, DType: x.dtype, Device: x.st.dev,
	}
	if g < 1 || w.shape[0] != p.OutC || p.OutC%g != 0 {
		fail(op, ErrShape, "input %v and weight %v do not fit %d group(s) (weight must be [in, out/groups, kh, kw])", x.shape, w.shape, g)
	}
	if p.StrideH < 1 || p.StrideW < 1 || p.PadH < 0 || p.PadW < 0 || p.DilateH < 1 || p.DilateW < 1 ||
		o.OutputPad[0] < 0 || o.OutputPad[1] < 0 ||
		o.OutputPad[0] >= max(p.StrideH, p.DilateH) || o.OutputPad[1] >= max(p.StrideW, p.DilateW) {
		fail(op, ErrArgument, "invalid stride [%d %d], padding %v, output padding %v or dilation [%d %d] (output padding must be below the stride or the dilation)",
			p.StrideH, p.StrideW, o.Pad, o.OutputPad, p.DilateH, p.DilateW)
	}
	p.InH = (p.OutH-1)*p.StrideH - 2*p.PadH + p.DilateH*(p.KH-1) + o.OutputPad[0] + 1
	p.InW = (p.OutW-1)*p.StrideW - 2*p.PadW + p.DilateW*(p.KW-1) + o.OutputPad[1] + 1
	if p.InH <= 0 || p.InW <= 0 {
		fail(op, ErrShape, "padding %v leaves no output for input %v and kernel %dx%d", o.Pad, x.shape, p.KH, p.KW)
	}
	return p
}
