package nd

import "math"

// Conv3DOpts configures Conv3D. Zero fields take their defaults: stride 1,
// padding 0, dilation 1, one group. Index 0 is depth, 1 height, 2 width.
type Conv3DOpts struct {
	Stride, Pad, Dilate [3]int
	Groups              int
}

// Conv3D computes the 3-D convolution (cross-correlation) of x
// [N, C, D, H, W] with w [O, C/groups, KD, KH, KW], plus bias [O] if bias
// is not nil (PyTorch's conv3d; Gluon's Conv3D with layout NCDHW). It is
// built from the 2-D convolution: for each kernel depth, one Conv2D over
// the input's depth slices that kernel depth meets, summed. So every
// backend that convolves in 2-D has it, and it is differentiable in x, w
// and bias.
func Conv3D(x, w, bias *NDArray, o Conv3DOpts) *NDArray {
	return dispatchNative("Conv3D", castLow, []*NDArray{x, w, bias}, func(in []*NDArray) *NDArray { return conv3DOp(in[0], in[1], in[2], o) })
}

func conv3DOp(x, w, bias *NDArray, o Conv3DOpts) *NDArray {
	const op = "Conv3D"
	if x == nil || w == nil {
		fail(op, ErrArgument, "nil input or weight")
	}
	if x.NDim() != 5 || w.NDim() != 5 {
		fail(op, ErrShape, "want NCDHW input and [out, in/groups, kd, kh, kw] weight, got %v and %v", x.shape, w.shape)
	}
	if bias != nil {
		defer checkInputs(op, x, w, bias).done()
	} else {
		defer checkInputs(op, x, w).done()
	}
	if w.shape[0] < 1 || w.shape[1] < 1 || w.shape[2] < 1 || w.shape[3] < 1 || w.shape[4] < 1 {
		fail(op, ErrShape, "weight of shape %v: want at least one output channel, input channel and kernel element per axis", w.shape)
	}
	if dt := x.dtype; dt.IsHalf() && w.dtype == dt && (bias == nil || bias.dtype == dt) {
		// The kernel depths' partial results are summed: in float32,
		// rounded once, as a native convolution accumulates.
		var b32 *NDArray
		if bias != nil {
			b32 = bias.AsType(Float32)
		}
		return conv3DOp(x.AsType(Float32), w.AsType(Float32), b32, o).AsType(dt)
	}
	n, c, d := x.shape[0], x.shape[1], x.shape[2]
	out, cg, kd := w.shape[0], w.shape[1], w.shape[2]
	g := orOne(o.Groups)
	if g < 1 || c != cg*g || out%g != 0 {
		fail(op, ErrShape, "input of %d channels and weight %v with %d groups: want channels = weight's axis 1 × groups, out channels divisible by groups", c, w.shape, g)
	}
	if bias != nil && (bias.NDim() != 1 || bias.shape[0] != out) {
		fail(op, ErrShape, "bias of shape %v for %d output channels", bias.shape, out)
	}
	for i := range 3 {
		if o.Stride[i] < 0 || o.Pad[i] < 0 || o.Dilate[i] < 0 {
			fail(op, ErrArgument, "stride %v, pad %v, dilation %v: want no negative values", o.Stride, o.Pad, o.Dilate)
		}
	}
	sd, pd, dd := orOne(o.Stride[0]), o.Pad[0], orOne(o.Dilate[0])
	od := (d+2*pd-dd*(kd-1)-1)/sd + 1
	if od < 1 {
		fail(op, ErrShape, "depth %d with kernel %d, dilation %d and padding %d leaves no output", d, kd, dd, pd)
	}
	xp := x
	if pd > 0 {
		xp = Pad(x, [][2]int{{}, {}, {pd, pd}}, PadConstant, 0)
	}
	o2 := ConvOpts{Stride: [2]int{o.Stride[1], o.Stride[2]}, Pad: [2]int{o.Pad[1], o.Pad[2]}, Dilate: [2]int{o.Dilate[1], o.Dilate[2]}, Groups: g}
	var y *NDArray
	for k := range kd {
		// The depth slices kernel depth k meets, one per output depth,
		// as a batch of 2-D maps [N·OD, C, H, W].
		start := k * dd
		xs := Slice(xp, All(), All(), SpanStep(start, start+(od-1)*sd+1, sd))
		xs = Reshape(Transpose(xs, 0, 2, 1, 3, 4), n*od, c, xs.shape[3], xs.shape[4])
		wk := Reshape(SliceAxis(w, k, k+1, 2), out, cg, w.shape[3], w.shape[4])
		yk := Conv2D(xs, wk, nil, o2)
		if y == nil {
			y = yk
		} else {
			y = Add(y, yk)
		}
	}
	y = Transpose(Reshape(y, n, od, out, y.shape[2], y.shape[3]), 0, 2, 1, 3, 4)
	if bias != nil {
		y = Add(y, Reshape(bias, 1, out, 1, 1, 1))
	}
	return y
}

// Conv3DTransposeOpts configures Conv3DTranspose. Zero fields take their
// defaults: stride 1, padding 0, no output padding, dilation 1, one group.
// Index 0 is depth, 1 height, 2 width.
type Conv3DTransposeOpts struct {
	Stride, Pad, OutputPad, Dilate [3]int
	Groups                         int
}

// Conv3DTranspose computes the transposed 3-D convolution (PyTorch's
// conv_transpose3d) of x [N, Cin, D, H, W] with w [Cin, Cout/groups, KD,
// KH, KW], plus bias [Cout] if bias is not nil; each output size is
// (in−1)·stride − 2·pad + dilate·(k−1) + outputPad + 1. It is built from
// Conv2DTranspose: each kernel depth's maps of every input slice are added
// at their output depths. Differentiable in x, w and bias.
func Conv3DTranspose(x, w, bias *NDArray, o Conv3DTransposeOpts) *NDArray {
	return dispatchNative("Conv3DTranspose", castLow, []*NDArray{x, w, bias}, func(in []*NDArray) *NDArray {
		return conv3DTransposeOp(in[0], in[1], in[2], o)
	})
}

func conv3DTransposeOp(x, w, bias *NDArray, o Conv3DTransposeOpts) *NDArray {
	const op = "Conv3DTranspose"
	if x == nil || w == nil {
		fail(op, ErrArgument, "nil input or weight")
	}
	if x.NDim() != 5 || w.NDim() != 5 {
		fail(op, ErrShape, "want NCDHW input and [in, out/groups, kd, kh, kw] weight, got %v and %v", x.shape, w.shape)
	}
	if bias != nil {
		defer checkInputs(op, x, w, bias).done()
	} else {
		defer checkInputs(op, x, w).done()
	}
	g := orOne(o.Groups)
	n, c, d := x.shape[0], x.shape[1], x.shape[2]
	out := w.shape[1] * g
	if w.shape[0] != c || c%g != 0 || w.shape[1] < 1 || w.shape[2] < 1 || w.shape[3] < 1 || w.shape[4] < 1 {
		fail(op, ErrShape, "input of %d channels and weight %v with %d groups: want the weight's axis 0 the input's channels, divisible by the groups, and kernels of at least 1", c, w.shape, g)
	}
	if bias != nil && (bias.NDim() != 1 || bias.shape[0] != out) {
		fail(op, ErrShape, "bias of shape %v for %d output channels", bias.shape, out)
	}
	for i := range 3 {
		if o.Stride[i] < 0 || o.Pad[i] < 0 || o.Dilate[i] < 0 || o.OutputPad[i] < 0 {
			fail(op, ErrArgument, "stride %v, pad %v, output pad %v, dilation %v: want no negative values", o.Stride, o.Pad, o.OutputPad, o.Dilate)
		}
	}
	if dt := x.dtype; dt.IsHalf() && w.dtype == dt && (bias == nil || bias.dtype == dt) {
		var b32 *NDArray
		if bias != nil {
			b32 = bias.AsType(Float32)
		}
		return conv3DTransposeOp(x.AsType(Float32), w.AsType(Float32), b32, o).AsType(dt)
	}
	kd := w.shape[2]
	sd, pd, dd, opd := orOne(o.Stride[0]), o.Pad[0], orOne(o.Dilate[0]), o.OutputPad[0]
	full := (d-1)*sd + dd*(kd-1) + 1 + opd // the depth before the padding is cut
	od := full - 2*pd
	if od < 1 {
		fail(op, ErrShape, "depth %d with kernel %d, stride %d, padding %d leaves no output", d, kd, sd, pd)
	}
	o2 := ConvTransposeOpts{Stride: [2]int{o.Stride[1], o.Stride[2]}, Pad: [2]int{o.Pad[1], o.Pad[2]},
		OutputPad: [2]int{o.OutputPad[1], o.OutputPad[2]}, Dilate: [2]int{o.Dilate[1], o.Dilate[2]}, Groups: g}
	xs := Reshape(Transpose(x, 0, 2, 1, 3, 4), n*d, c, x.shape[3], x.shape[4]) // every input slice
	var y *NDArray
	for k := range kd {
		wk := Reshape(SliceAxis(w, k, k+1, 2), c, w.shape[1], w.shape[3], w.shape[4])
		yk := Conv2DTranspose(xs, wk, nil, o2) // [N·D, out, OH, OW]
		oh, ow := yk.shape[2], yk.shape[3]
		yk = Transpose(Reshape(yk, n, d, out, oh, ow), 0, 2, 1, 3, 4) // [N, out, D, OH, OW]
		if y == nil {
			y = Zeros(x.st.dev, x.dtype, n, out, full, oh, ow)
		}
		// Input slice i lands at output depth i·stride + k·dilation.
		at := make([]int64, d)
		for i := range at {
			at[i] = int64(i*sd + k*dd)
		}
		y = IndexAdd(y, x.Session().FromSlice(x.st.dev, at, d), yk, 2)
	}
	if pd > 0 {
		y = SliceAxis(y, pd, pd+od, 2)
	}
	if bias != nil {
		y = Add(y, Reshape(bias, 1, out, 1, 1, 1))
	}
	return y
}

// Pool3DOpts configures Pool3D. Index 0 is depth, 1 height, 2 width; a
// zero stride equals the kernel.
type Pool3DOpts struct {
	Type   PoolType // PoolMax or PoolAvg
	Kernel [3]int
	Stride [3]int
	Pad    [3]int
	// CeilMode and ExcludePad are PoolOpts's.
	CeilMode   bool
	ExcludePad bool
	// Global pools each whole volume to 1×1×1 (Kernel is ignored).
	Global bool
}

// Pool3D pools x [N, C, D, H, W] with max or average windows (PyTorch's
// max_pool3d and avg_pool3d, Gluon's MaxPool3D and AvgPool3D). It pools
// each depth slice in 2-D (Pool2D), then along depth: a window's maximum
// is the maximum of its slices' maxima, and its average, whose divisor is
// the product of one count per axis in both padding rules, the average of
// its slices' averages over that axis's count. It is differentiable.
func Pool3D(x *NDArray, o Pool3DOpts) *NDArray {
	const op = "Pool3D"
	if x == nil {
		fail(op, ErrArgument, "nil input")
	}
	if x.NDim() != 5 {
		fail(op, ErrShape, "want NCDHW input, got %v", x.shape)
	}
	defer checkLive(op, x).done()
	if !x.dtype.IsFloat() {
		fail(op, ErrDType, "pooling needs a floating-point array, got %v (convert with AsType)", x.dtype)
	}
	for i := range 3 {
		if !o.Global && (o.Kernel[i] < 1 || o.Stride[i] < 0 || o.Pad[i] < 0 || 2*o.Pad[i] > o.Kernel[i]) {
			fail(op, ErrArgument, "kernel %v, stride %v, pad %v: want positive kernels, no negative strides and pads of at most half the kernel", o.Kernel, o.Stride, o.Pad)
		}
	}
	if x.dtype.IsHalf() {
		// The depth pass adds rounded 2-D results: in float32, once.
		return Pool3D(x.AsType(Float32), o).AsType(x.dtype)
	}
	n, c, d, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3], x.shape[4]
	if o.Global {
		// As the 2-D global pooling of [N, C, D·H, W]: a tied maximum's
		// gradient goes to its first position, as in PyTorch.
		y := Pool2D(Reshape(x, n, c, d*h, w), PoolOpts{Type: o.Type, Global: true})
		return Reshape(y, n, c, 1, 1, 1)
	}
	k, s, p := o.Kernel[0], o.Stride[0], o.Pad[0]
	if s == 0 {
		s = k
	}
	if k < 1 || s < 1 || p < 0 || 2*p > k {
		fail(op, ErrArgument, "depth kernel %d, stride %d, pad %d: want a positive kernel and stride and a pad of at most half the kernel", k, s, p)
	}
	od := poolOut(d, k, s, p, o.CeilMode)
	if od < 1 {
		fail(op, ErrShape, "depth %d with kernel %d and padding %d leaves no output", d, k, p)
	}
	// The 2-D pooling of every depth slice: [N, C·D, OH, OW].
	p2 := Pool2D(Reshape(x, n, c*d, h, w), PoolOpts{Type: o.Type, Kernel: [2]int{o.Kernel[1], o.Kernel[2]},
		Stride: [2]int{o.Stride[1], o.Stride[2]}, Pad: [2]int{o.Pad[1], o.Pad[2]}, CeilMode: o.CeilMode, ExcludePad: o.ExcludePad})
	oh, ow := p2.shape[2], p2.shape[3]
	y2 := Reshape(p2, n, c, d, oh, ow)
	// Pad depth so that every window lies inside: p before, and after
	// whatever the last window (ceil mode) needs beyond d.
	after := max((od-1)*s+k-d-p, 0)
	fill := 0.0
	if o.Type == PoolMax {
		fill = math.Inf(-1)
	}
	yp := y2
	if p > 0 || after > 0 {
		yp = Pad(y2, [][2]int{{}, {}, {p, after}}, PadConstant, fill)
	}
	var acc *NDArray
	for j := range k {
		sl := Slice(yp, All(), All(), SpanStep(j, j+(od-1)*s+1, s))
		switch {
		case acc == nil:
			acc = sl
		case o.Type == PoolMax:
			acc = Maximum(acc, sl)
		default:
			acc = Add(acc, sl)
		}
	}
	if o.Type == PoolMax {
		return acc
	}
	// Each output depth's divisor along depth: the window clipped to the
	// padded input (counting padding), or to the input itself (ExcludePad).
	div := make([]float64, od)
	for i := range od {
		lo, hi := i*s-p, min(i*s-p+k, d+p)
		if o.ExcludePad {
			lo, hi = max(lo, 0), min(hi, d)
		}
		div[i] = 1 / float64(max(hi-lo, 1))
	}
	inv := x.Session().FromSlice(x.st.dev, div, 1, 1, od, 1, 1).AsType(acc.dtype)
	return Mul(acc, inv)
}
