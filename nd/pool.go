package nd

import "github.com/goluon/goluon/nd/backend"

// PoolOpts configures Pool2D.
type PoolOpts struct {
	Type   PoolType // PoolMax or PoolAvg
	Kernel [2]int
	Stride [2]int // zero: equal to Kernel
	Pad    [2]int
	// CeilMode rounds the output size up so that a partial window at the
	// border still produces an output, as PyTorch's ceil_mode does: a
	// window that would start inside the right padding is dropped (MXNet's
	// "full" convention keeps it).
	CeilMode bool
	// ExcludePad makes average pooling divide by the window's elements
	// inside the input only. By default it divides by the whole window,
	// padding included, as Gluon's and PyTorch's count_include_pad.
	ExcludePad bool
	// Global pools each whole feature map to 1x1 (Kernel is ignored).
	Global bool
}

// PoolType is max or average pooling.
type PoolType = backend.PoolType

// The pooling types.
const (
	PoolMax = backend.PoolMax
	PoolAvg = backend.PoolAvg
)

func poolOut(in, k, s, p int, ceil bool) int {
	span := in + 2*p - k // negative when the window is larger than the padded input
	if !ceil {
		return floorDiv(span, s) + 1
	}
	out := floorDiv(span+s-1, s) + 1
	if out > 0 && (out-1)*s >= in+p { // the last window would start in the padding
		out--
	}
	return out
}

// floorDiv is a/b rounded towards minus infinity (b > 0).
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func poolParams(op string, x *NDArray, o PoolOpts) backend.PoolParams {
	if x.NDim() != 4 {
		fail(op, ErrShape, "want NCHW input, got %v", x.shape)
	}
	p := backend.PoolParams{
		Type: o.Type, N: x.shape[0], C: x.shape[1], InH: x.shape[2], InW: x.shape[3],
		KH: o.Kernel[0], KW: o.Kernel[1], PadH: o.Pad[0], PadW: o.Pad[1],
		ExcludePad: o.ExcludePad, DType: x.dtype, Device: x.st.dev,
	}
	if o.Global {
		p.KH, p.KW, p.PadH, p.PadW = p.InH, p.InW, 0, 0
	}
	p.StrideH, p.StrideW = o.Stride[0], o.Stride[1]
	if p.StrideH == 0 {
		p.StrideH = p.KH
	}
	if p.StrideW == 0 {
		p.StrideW = p.KW
	}
	if p.KH < 1 || p.KW < 1 || p.StrideH < 1 || p.StrideW < 1 || p.PadH < 0 || p.PadW < 0 {
		fail(op, ErrArgument, "invalid kernel %v, stride %v or padding %v", o.Kernel, o.Stride, o.Pad)
	}
	if 2*p.PadH > p.KH || 2*p.PadW > p.KW {
		fail(op, ErrArgument, "padding %v must be at most half the kernel %v", o.Pad, o.Kernel)
	}
	p.OutH = poolOut(p.InH, p.KH, p.StrideH, p.PadH, o.CeilMode)
	p.OutW = poolOut(p.InW, p.KW, p.StrideW, p.PadW, o.CeilMode)
	if p.OutH < 1 || p.OutW < 1 {
		// In ceil mode a window may be larger than the padded input, as in
		// PyTorch, as long as one fits: the windows are clipped to it.
		fail(op, ErrShape, "kernel %dx%d is larger than the padded input %v", p.KH, p.KW, x.shape)
	}
	return p
}

// Pool2D pools x [N, C, H, W] with max or average windows.
func Pool2D(x *NDArray, o PoolOpts) *NDArray {
	return dispatchNative("Pool2D", castNeutral, []*NDArray{x}, func(in []*NDArray) *NDArray { return pool2DOp(in[0], o) })
}

func pool2DOp(x *NDArray, o PoolOpts) *NDArray {
	const op = "Pool2D"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	p := poolParams(op, x, o)
	if h, ok := x.st.be.(backend.HalfPooler); ok && x.dtype.IsHalf() && h.PoolHalf(x.dtype) { // the backend's own half kernels (the same bits)
		return halfDirect(op, []*NDArray{x}, func(in []*NDArray) *NDArray {
			y := newArray(op, x.Session(), x.st.dev, x.dtype, []int{p.N, p.C, p.OutH, p.OutW})
			x.be().Pool2D(p, y.storageArg(), in[0].storageArg())
			return y
		}, func(g *NDArray, in []*NDArray, y func() *NDArray, _ []bool) []*NDArray {
			ya := g.storageArg() // (the kernels take an operand of the output's shape; max pooling's reads it)
			if p.Type == PoolMax {
				ya = y().storageArg()
			}
			gx := newArray(op, g.Session(), x.st.dev, x.dtype, x.shape)
			x.be().Pool2DBackward(p, gx.storageArg(), in[0].storageArg(), ya, g.storageArg())
			return []*NDArray{gx}
		})
	}
	if x.dtype.IsHalf() { // the tape keeps the half arrays (halfNative)
		return halfNative(op, []*NDArray{x}, func(w []*NDArray) *NDArray {
			y := newArray(op, x.Session(), x.st.dev, Float32, []int{p.N, p.C, p.OutH, p.OutW})
			x.be().Pool2D(p32(p), y.arg(), w[0].arg())
			return y
		}, func(g *NDArray, w []*NDArray, y func() *NDArray, _ []bool) []*NDArray {
			// A maximum of half values is one of them: the rounded output
			// is the float32 one. An average's backward does not read it,
			// but the kernels take an operand of the output's shape.
			ya := g.arg()
			if p.Type == PoolMax {
				ya = y().arg()
			}
			gx := newArray(op, g.Session(), x.st.dev, Float32, x.shape)
			x.be().Pool2DBackward(p32(p), gx.arg(), w[0].arg(), ya, g.arg())
			return []*NDArray{gx}
		})
	}
	y := newArray(op, x.Session(), x.st.dev, x.dtype, []int{p.N, p.C, p.OutH, p.OutW})
	x.be().Pool2D(p, y.arg(), x.arg())
	back := func(g *NDArray) *NDArray {
		// Max pooling's backward reads the output (its memory gone: ErrReleased);
		// an average's does not, but the kernels take an operand of its shape.
		ya := g.arg()
		if p.Type == PoolMax {
			defer checkMemory(op, y).done()
			ya = y.arg()
		}
		gx := newArray(op, g.Session(), x.st.dev, x.dtype, x.shape)
		x.be().Pool2DBackward(p, gx.arg(), x.arg(), ya, g.arg())
		return gx
	}
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{back(g)}
	}, poolDiff(op, p, o, x, back))
	return y
}

// MaxPool2D is Pool2D with max windows of the given size, stride and padding.
func MaxPool2D(x *NDArray, kernel, stride, pad [2]int) *NDArray {
	return Pool2D(x, PoolOpts{Type: PoolMax, Kernel: kernel, Stride: stride, Pad: pad})
}

// AvgPool2D is Pool2D with average windows (padding counted, as Gluon and
// PyTorch count it by default).
func AvgPool2D(x *NDArray, kernel, stride, pad [2]int) *NDArray {
	return Pool2D(x, PoolOpts{Type: PoolAvg, Kernel: kernel, Stride: stride, Pad: pad})
}

// GlobalMaxPool2D reduces each feature map to its maximum: [N, C, 1, 1].
func GlobalMaxPool2D(x *NDArray) *NDArray {
	return Pool2D(x, PoolOpts{Type: PoolMax, Global: true})
}

// GlobalAvgPool2D reduces each feature map to its mean: [N, C, 1, 1].
func GlobalAvgPool2D(x *NDArray) *NDArray {
	return Pool2D(x, PoolOpts{Type: PoolAvg, Global: true})
}

// p32 is p for float32 operands (the half-precision path's widened ones).
func p32(p backend.PoolParams) backend.PoolParams {
	p.DType = Float32
	return p
}
