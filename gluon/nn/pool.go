package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// PoolOpts configures the pooling layers. Zero values are Gluon's
// defaults: stride equal to the pool size, no padding, floor rounding.
type PoolOpts struct {
	Stride   [2]int
	Pad      [2]int
	CeilMode bool
	// ExcludePad makes average pooling ignore padded positions (Gluon's
	// count_include_pad=False). Gluon's default counts them.
	ExcludePad bool
}

// Pool2D is a max or average pooling layer.
type Pool2D struct {
	gluon.BlockMeta
	opts nd.PoolOpts
}

func newPool(kind string, typ int, size [2]int, o PoolOpts, global bool) *Pool2D {
	if !global && (size[0] <= 0 || size[1] <= 0) {
		nd.Panicf("nn.New"+kind, nd.ErrArgument, "pool size %v must be positive", size)
	}
	return &Pool2D{BlockMeta: gluon.NewBlockMeta("pool"), opts: nd.PoolOpts{
		Type: poolType(typ), Kernel: size, Stride: o.Stride, Pad: o.Pad,
		CeilMode: o.CeilMode, ExcludePad: o.ExcludePad, Global: global,
	}}
}

func poolType(t int) nd.PoolType {
	if t == 0 {
		return nd.PoolMax
	}
	return nd.PoolAvg
}

// NewMaxPool2D returns max pooling with a square window of the given size.
func NewMaxPool2D(size int, o PoolOpts) *Pool2D {
	return newPool("MaxPool2D", 0, [2]int{size, size}, o, false)
}

// NewAvgPool2D returns average pooling with a square window.
func NewAvgPool2D(size int, o PoolOpts) *Pool2D {
	return newPool("AvgPool2D", 1, [2]int{size, size}, o, false)
}

// NewGlobalMaxPool2D returns a layer reducing each feature map to its maximum.
func NewGlobalMaxPool2D() *Pool2D { return newPool("GlobalMaxPool2D", 0, [2]int{}, PoolOpts{}, true) }

// NewGlobalAvgPool2D returns a layer reducing each feature map to its mean.
func NewGlobalAvgPool2D() *Pool2D { return newPool("GlobalAvgPool2D", 1, [2]int{}, PoolOpts{}, true) }

// Forward pools x.
func (p *Pool2D) Forward(x *nd.NDArray) *nd.NDArray { return nd.Pool2D(x, p.opts) }

// AdaptiveAvgPool2D averages each feature map into a fixed grid
// (PyTorch's AdaptiveAvgPool2d), whatever the input size.
type AdaptiveAvgPool2D struct {
	gluon.BlockMeta
	H, W int
}

// NewAdaptiveAvgPool2D returns adaptive average pooling to h×w.
func NewAdaptiveAvgPool2D(h, w int) *AdaptiveAvgPool2D {
	if h <= 0 || w <= 0 {
		nd.Panicf("nn.NewAdaptiveAvgPool2D", nd.ErrArgument, "output size %d×%d must be positive", h, w)
	}
	return &AdaptiveAvgPool2D{BlockMeta: gluon.NewBlockMeta("pool"), H: h, W: w}
}

// Forward pools x to H×W.
func (p *AdaptiveAvgPool2D) Forward(x *nd.NDArray) *nd.NDArray {
	return nd.AdaptiveAvgPool2D(x, p.H, p.W)
}
