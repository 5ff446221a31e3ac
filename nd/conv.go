package nd

import "github.com/goluon/goluon/nd/backend"

// ConvOpts configures Conv2D. Zero fields take their defaults: stride 1,
// padding 0, dilation 1, one group.
type ConvOpts struct {
	Stride [2]int
	Pad    [2]int
	Dilate [2]int
	Groups int
}

func orOne(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

// convParams validates Conv2D's operands and computes the output size.
func convParams(op string, x, w *NDArray, o ConvOpts) backend.ConvParams {
	if x.NDim() != 4 || w.NDim() != 4 {
		fail(op, ErrShape, "want NCHW input and [out, in/groups, kh, kw] weight, got %v and %v", x.shape, w.shape)
	}
	return convShapes(op, x, w, x.shape, w.shape, o)
}

// convShapes is convParams for x and w taken as NCHW and OIHW arrays of the
// given shapes (Conv1D passes its 3-D arrays with a height of one).
func convShapes(op string, x, w *NDArray, xs, ws []int, o ConvOpts) backend.ConvParams {
	g := orOne(o.Groups)
	p := backend.ConvParams{
		N: xs[0], InC: xs[1], InH: xs[2], InW: xs[3],
		OutC: ws[0], KH: ws[2], KW: ws[3],
		StrideH: orOne(o.Stride[0]), StrideW: orOne(o.Stride[1]),
		PadH: o.Pad[0], PadW: o.Pad[1],
		DilateH: orOne(o.Dilate[0]), DilateW: orOne(o.Dilate[1]),
		Groups: g, DType: x.dtype, Device: x.st.dev,
	}
	if g < 1 || p.InC%g != 0 || p.OutC%g != 0 || ws[1]*g != p.InC {
		fail(op, ErrShape, "input %v and weight %v do not fit %d group(s) (weight must be [out, in/groups, kh, kw])", x.shape, w.shape, g)
	}
	if p.StrideH < 1 || p.StrideW < 1 || p.PadH < 0 || p.PadW < 0 || p.DilateH < 1 || p.DilateW < 1 {
		fail(op, ErrArgument, "invalid stride %v, padding %v or dilation %v", o.Stride, o.Pad, o.Dilate)
	}
	p.OutH = (p.InH+2*p.PadH-p.DilateH*(p.KH-1)-1)/p.StrideH + 1
	p.OutW = (p.InW+2*p.PadW-p.DilateW*(p.KW-1)-1)/p.StrideW + 1
	if p.OutH <= 0 || p.OutW <= 0 {
		fail(op, ErrShape, "kernel %dx%d (dilation %dx%d) is larger than the padded input %v", p.KH, p.KW, p.DilateH, p.DilateW, x.shape)
	}
	return p
}

// Conv2D computes the 2-D convolution (cross-correlation, as in every
// framework) of x [N, C, H, W] with w [O, C/groups, KH, KW], plus bias [O]
// if bias is not nil.
func Conv2D(x, w, bias *NDArray, o ConvOpts) *NDArray {
	return dispatchNative("Conv2D", castLow, []*NDArray{x, w, bias}, func(in []*NDArray) *NDArray { return conv2DOp(in[0], in[1], in[2], o) })
}

func conv2DOp(x, w, bias *NDArray, o ConvOpts) *NDArray {
	const op = "Conv2D"
	inputs := convInputs(op, x, w, bias)
	p := convParams(op, x, w, o)
	return conv(op, inputs, p, false, []int{p.N, p.OutC, p.OutH, p.OutW})
}

// convInputs checks a convolution's operands and lists them.
func convInputs(op string, x, w, bias *NDArray) []*NDArray {
	inputs := []*NDArray{x, w}
	if bias != nil {
		inputs = append(inputs, bias)
	}
	defer checkInputs(op, inputs...).done()
	checkFloat(op, inputs...)
	return inputs
}

// conv runs and records the convolution p of inputs (x, w and perhaps a
// bias) into a result of shape yShape: p's output laid out as the op's
// callers want it (Conv1D drops the height of one). Transposed runs the
// transposed convolution instead: p is then the convolution whose input is
// the result and whose output is x, so the forward pass is p's
// backward-data kernel, x's gradient p's forward kernel, and the filter
// gradient p's with the roles of x and the output gradient swapped.
func conv(op string, inputs []*NDArray, p backend.ConvParams, transposed bool, yShape []int) *NDArray {
	x, w := inputs[0], inputs[1]
	sess := sessionOf(op, inputs...)
	outC := p.OutC
	if transposed {
		outC = p.InC
	}
	var bias *NDArray
	if len(inputs) == 3 {
		bias = inputs[2]
		if bias.NDim() != 1 || bias.shape[0] != outC {
			fail(op, ErrShape, "bias shape %v does not match %d output channels", bias.shape, outC)
		}
	}
	if x.dtype.IsHalf() && !transposed && nativeHalfConv(x, p) { // the backend's own half convolution
		p.DType = x.dtype
		return halfDirect(op, inputs, func(in []*NDArray) *NDArray {
			return convHalfKernels(op, sess, in[0], in[1], optional(in, 2), p, yShape)
		}, func(g *NDArray, in []*NDArray, _ func() *NDArray, need []bool) []*NDArray {
			return convGrads(op, g, in[0], in[1], bias != nil, p, false, len(yShape), need)
		})
	}
	if x.dtype.IsHalf() { // the tape keeps the half arrays (halfNative)
		p.DType = Float32 // the kernels see the widened operands
		return halfNative(op, inputs, func(w []*NDArray) *NDArray {
			return convKernels(op, sess, w[0], w[1], optional(w, 2), p, transposed, yShape)
		}, func(g *NDArray, w []*NDArray, _ func() *NDArray, need []bool) []*NDArray {
			return convGrads(op, g, w[0], w[1], bias != nil, p, transposed, len(yShape), need)
		})
	}
	y := convKernels(op, sess, x, w, bias, p, transposed, yShape)
	RecordDiff(op, y, inputs, func(g *NDArray, need []bool) []*NDArray {
		return convGrads(op, g, x, w, bias != nil, p, transposed, len(yShape), need)
	}, convDiff(p, x, w, yShape, bias != nil, transposed))
	return y
}

// convKernels runs the convolution p of x and w, plus bias, into a new
// array of shape yShape.
func convKernels(op string, sess *Session, x, w, bias *NDArray, p backend.ConvParams, transposed bool, yShape []int) *NDArray {
	be := x.be()
	y := newArray(op, sess, x.st.dev, x.dtype, yShape)
	bk, fuseBias := kernelsOf[backend.ConvBiasKernels](be)
	fuseBias = fuseBias && bias != nil && !transposed && fusedKernels()
	switch {
	case transposed:
		be.Conv2DBackwardData(p, y.arg(), x.arg(), w.arg())
	case fuseBias:
		bk.Conv2DBias(p, y.arg(), x.arg(), w.arg(), bias.arg())
	default:
		be.Conv2D(p, y.arg(), x.arg(), w.arg())
	}
	if bias != nil && !fuseBias {
		be.Binary(bAdd, y.shape, y.arg(), y.arg(), channelArg(bias, y.NDim(), 1))
	}
	return y
}

// nativeHalfConv reports whether x's backend runs the convolution p on x's
// half dtype itself (backend.HalfConvolver).
func nativeHalfConv(x *NDArray, p backend.ConvParams) bool {
	h, ok := x.st.be.(backend.HalfConvolver)
	p.DType = x.dtype
	return ok && h.ConvHalf(x.st.dev, p)
}

// convHalfKernels is convKernels on the half arrays themselves, for a
// backend that convolves them (p.DType is their dtype): the convolution
// rounds once, and the bias is added to the rounded result and rounded
// again (as PyTorch adds a half convolution's bias).
func convHalfKernels(op string, sess *Session, x, w, bias *NDArray, p backend.ConvParams, yShape []int) *NDArray {
	y := newArray(op, sess, x.st.dev, x.dtype, yShape)
	x.be().Conv2D(p, y.storageArg(), x.storageArg(), w.storageArg())
	switch {
	case bias != nil && nativeHalfElem(y): // the backend's half Add
		b := bias.storageArg()
		b.Strides = make([]int, y.NDim())
		b.Strides[1] = 1
		y.be().Binary(bAdd, y.shape, y.storageArg(), y.storageArg(), b)
	case bias != nil:
		inPlaceHalf(y, []*NDArray{bias}, func(d *NDArray, s []*NDArray) {
			d.be().Binary(bAdd, d.shape, d.arg(), d.arg(), channelArg(s[0], d.NDim(), 1))
		})
	}
	return y
}

// convGrads returns the gradients of the convolution p of x and w (and of
// a bias when hasBias) from the output gradient g, those need asks for.
func convGrads(op string, g, x, w *NDArray, hasBias bool, p backend.ConvParams, transposed bool, ndim int, need []bool) []*NDArray {
	be := g.be()
	arg := (*NDArray).arg
	if p.DType.IsHalf() { // the backend convolves the half arrays (nativeHalfConv)
		arg = (*NDArray).storageArg
	}
	n := 2
	if hasBias {
		n = 3
	}
	grads := make([]*NDArray, n)
	{
		if need[0] {
			grads[0] = newArray(op, g.Session(), x.st.dev, x.dtype, x.shape)
			if transposed {
				be.Conv2D(p, arg(grads[0]), arg(g), arg(w))
			} else {
				be.Conv2DBackwardData(p, arg(grads[0]), arg(g), arg(w))
			}
		}
		if need[1] {
			grads[1] = newArray(op, g.Session(), w.st.dev, w.dtype, w.shape)
			if transposed {
				be.Conv2DBackwardFilter(p, arg(grads[1]), arg(g), arg(x))
			} else {
				be.Conv2DBackwardFilter(p, arg(grads[1]), arg(x), arg(g))
			}
		}
		if hasBias && need[2] {
			bshape := make([]int, ndim)
			for i := range bshape {
				bshape[i] = 1
			}
			bshape[1] = g.shape[1]
			s := sumTo(g, bshape)
			grads[2] = s.view(0, []int{g.shape[1]})
			s.Release()
		}
	}
	return grads
}
