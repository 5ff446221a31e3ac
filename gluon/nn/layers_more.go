package nn

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// Pool1DOpts configures the 1-D pooling layers. Zero values are Gluon's
// defaults: stride equal to the pool size, no padding, floor rounding,
// averages counting the padding.
type Pool1DOpts struct {
	Stride, Pad int
	CeilMode    bool
	// ExcludePad makes average pooling ignore padded positions (PyTorch's
	// count_include_pad=False).
	ExcludePad bool
}

// Pool1D is a max or average pooling layer over the last axis of
// [N, C, W] (Gluon's MaxPool1D, AvgPool1D and their global forms,
// PyTorch's MaxPool1d and AvgPool1d): audio and text convolutions.
type Pool1D struct {
	gluon.BlockMeta
	opts nd.PoolOpts
}

func newPool1D(kind string, typ nd.PoolType, size int, o Pool1DOpts, global bool) *Pool1D {
	if !global && size <= 0 {
		nd.Panicf("nn.New"+kind, nd.ErrArgument, "pool size %d must be positive", size)
	}
	if o.Stride < 0 || o.Pad < 0 {
		nd.Panicf("nn.New"+kind, nd.ErrArgument, "negative stride %d or padding %d", o.Stride, o.Pad)
	}
	return &Pool1D{BlockMeta: gluon.NewBlockMeta("pool"), opts: nd.PoolOpts{
		Type: typ, Kernel: [2]int{1, size}, Stride: [2]int{1, o.Stride}, Pad: [2]int{0, o.Pad},
		CeilMode: o.CeilMode, ExcludePad: o.ExcludePad, Global: global,
	}}
}

// NewMaxPool1D returns max pooling over windows of the given size.
func NewMaxPool1D(size int, o Pool1DOpts) *Pool1D {
	return newPool1D("MaxPool1D", nd.PoolMax, size, o, false)
}

// NewAvgPool1D returns average pooling over windows of the given size.
func NewAvgPool1D(size int, o Pool1DOpts) *Pool1D {
	return newPool1D("AvgPool1D", nd.PoolAvg, size, o, false)
}

// NewGlobalMaxPool1D returns a layer reducing each channel to its maximum
// ([N, C, W] → [N, C, 1]).
func NewGlobalMaxPool1D() *Pool1D {
	return newPool1D("GlobalMaxPool1D", nd.PoolMax, 0, Pool1DOpts{}, true)
}

// NewGlobalAvgPool1D returns a layer reducing each channel to its mean.
func NewGlobalAvgPool1D() *Pool1D {
	return newPool1D("GlobalAvgPool1D", nd.PoolAvg, 0, Pool1DOpts{}, true)
}

// Forward pools x [N, C, W].
func (p *Pool1D) Forward(x *nd.NDArray) *nd.NDArray {
	if x == nil || x.NDim() != 3 {
		nd.Panicf("nn.Pool1D", nd.ErrShape, "want an [N, C, W] input, got %v", shapeOrNil(x))
	}
	s := x.Shape()
	y := nd.Pool2D(nd.Reshape(x, s[0], s[1], 1, s[2]), p.opts)
	ys := y.Shape()
	return nd.Reshape(y, ys[0], ys[1], ys[3])
}

// ExportONNX writes MaxPool or AveragePool with 1-D windows
// (GlobalMaxPool or GlobalAveragePool for the global layers).
func (p *Pool1D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := p.opts
	if o.Global {
		if o.Type == nd.PoolMax {
			return g.Op("GlobalMaxPool", []string{x}, nil, 1)[0], nil
		}
		return g.Op("GlobalAveragePool", []string{x}, nil, 1)[0], nil
	}
	return exportPool(g, x, o.Type, o.Kernel[1:], o.Stride[1:], o.Pad[1:], o.CeilMode, o.ExcludePad)
}

// Identity passes its input through (PyTorch's nn.Identity, Gluon's
// nn.Identity): a placeholder where a network's layer is removed, such as
// a classifier head replaced for feature extraction.
type Identity struct{ gluon.BlockMeta }

// NewIdentity returns an Identity layer.
func NewIdentity() *Identity { return &Identity{gluon.NewBlockMeta("identity")} }

// Forward returns x.
func (*Identity) Forward(x *nd.NDArray) *nd.NDArray { return x }

// ExportONNX writes nothing.
func (*Identity) ExportONNX(_ gluon.ONNXGraph, x string) (string, error) { return x, nil }

// Lambda wraps a function of one array as a Block (Gluon's nn.Lambda and
// HybridLambda), for a reshape or an op between layers of a Sequential.
// It has no parameters; it hybridizes like any block of nd ops, and has no
// ONNX form (Export names it).
type Lambda struct {
	gluon.BlockMeta
	F func(x *nd.NDArray) *nd.NDArray
}

// NewLambda returns a Lambda layer applying f; a nil f panics.
func NewLambda(f func(x *nd.NDArray) *nd.NDArray) *Lambda {
	if f == nil {
		nd.Panicf("nn.NewLambda", nd.ErrArgument, "nil function")
	}
	return &Lambda{BlockMeta: gluon.NewBlockMeta("lambda"), F: f}
}

// Forward returns F(x).
func (l *Lambda) Forward(x *nd.NDArray) *nd.NDArray {
	if l.F == nil {
		nd.Panicf("nn.Lambda", nd.ErrArgument, "no function (build it with NewLambda)")
	}
	return l.F(x)
}

// Pad2D pads the last two axes of [N, C, H, W] (Gluon's ReflectionPad2D,
// PyTorch's ReflectionPad2d, ReplicationPad2d, ZeroPad2d and
// ConstantPad2d). Widths are PyTorch's order: left, right, top, bottom.
type Pad2D struct {
	gluon.BlockMeta
	Widths [4]int
	Mode   nd.PadMode
	Value  float64 // the fill of nd.PadConstant
}

// NewReflectionPad2D returns reflection padding (each width below the
// axis size): the border mirrors the elements next to the edge.
func NewReflectionPad2D(widths [4]int) *Pad2D { return newPad2D(widths, nd.PadReflect, 0) }

// NewReplicationPad2D returns padding that repeats the edge elements.
func NewReplicationPad2D(widths [4]int) *Pad2D { return newPad2D(widths, nd.PadEdge, 0) }

// NewConstantPad2D returns padding with a constant (0: PyTorch's
// ZeroPad2d).
func NewConstantPad2D(widths [4]int, value float64) *Pad2D {
	return newPad2D(widths, nd.PadConstant, value)
}

func newPad2D(widths [4]int, mode nd.PadMode, value float64) *Pad2D {
	for _, w := range widths {
		if w < 0 {
			nd.Panicf("nn.NewPad2D", nd.ErrArgument, "negative pad width in %v", widths)
		}
	}
	return &Pad2D{BlockMeta: gluon.NewBlockMeta("pad"), Widths: widths, Mode: mode, Value: value}
}

// Forward pads x [N, C, H, W].
func (p *Pad2D) Forward(x *nd.NDArray) *nd.NDArray {
	if x == nil || x.NDim() != 4 {
		nd.Panicf("nn.Pad2D", nd.ErrShape, "want an [N, C, H, W] input, got %v", shapeOrNil(x))
	}
	w := p.Widths
	return nd.Pad(x, [][2]int{{}, {}, {w[2], w[3]}, {w[0], w[1]}}, p.Mode, p.Value)
}

// ExportONNX writes Pad (mode constant, reflect or edge).
func (p *Pad2D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	w := p.Widths
	pads := g.Const([]int64{0, 0, int64(w[2]), int64(w[0]), 0, 0, int64(w[3]), int64(w[1])}, 8)
	in := []string{x, pads}
	var mode string
	switch p.Mode {
	case nd.PadConstant:
		mode = "constant"
		if p.Value != 0 {
			in = append(in, g.Const([]float32{float32(p.Value)}))
		}
	case nd.PadReflect:
		mode = "reflect"
	case nd.PadEdge:
		mode = "edge"
	default:
		return "", fmt.Errorf("pad mode %d has no ONNX form", p.Mode)
	}
	return g.Op("Pad", in, map[string]any{"mode": mode}, 1)[0], nil
}

// PixelShuffle2D rearranges [N, C·r², H, W] into [N, C, H·r, W·r]
// (Gluon's PixelShuffle2D, PyTorch's nn.PixelShuffle): the sub-pixel
// upsampling of super-resolution networks. Factor is r.
type PixelShuffle2D struct {
	gluon.BlockMeta
	Factor int
}

// NewPixelShuffle2D returns a pixel shuffle by factor r ≥ 1.
func NewPixelShuffle2D(r int) *PixelShuffle2D {
	if r < 1 {
		nd.Panicf("nn.NewPixelShuffle2D", nd.ErrArgument, "factor %d must be positive", r)
	}
	return &PixelShuffle2D{BlockMeta: gluon.NewBlockMeta("pixelshuffle"), Factor: r}
}

// Forward shuffles x [N, C·r², H, W].
func (p *PixelShuffle2D) Forward(x *nd.NDArray) *nd.NDArray {
	r := p.Factor
	if r < 1 {
		nd.Panicf("nn.PixelShuffle2D", nd.ErrArgument, "factor %d must be positive (build it with NewPixelShuffle2D)", r)
	}
	if x == nil || x.NDim() != 4 || x.Shape()[1]%(r*r) != 0 {
		nd.Panicf("nn.PixelShuffle2D", nd.ErrShape, "want [N, C·%d, H, W], got %v", r*r, shapeOrNil(x))
	}
	s := x.Shape()
	n, c, h, w := s[0], s[1]/(r*r), s[2], s[3]
	y := nd.Reshape(x, n, c, r, r, h, w)
	y = nd.Transpose(y, 0, 1, 4, 2, 5, 3)
	return nd.Reshape(y, n, c, h*r, w*r)
}

// ExportONNX writes DepthToSpace in CRD mode (PyTorch's channel order).
func (p *PixelShuffle2D) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	return g.Op("DepthToSpace", []string{x}, map[string]any{"blocksize": p.Factor, "mode": "CRD"}, 1)[0], nil
}

// shapeOrNil is x's shape for an error message, or "nil".
func shapeOrNil(x *nd.NDArray) any {
	if x == nil {
		return "nil"
	}
	return x.Shape()
}
